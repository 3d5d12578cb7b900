"""The room reserved for the notice is measured on a notice for 0 characters, so a cut text can stay as long as it was.

The notice states how many characters were removed; its length grows with that number's digits, and
the reservation ``len(text) - len(notice(0)) - 1`` is one or two characters short once the removed
count has two or three digits. When the budget needs only a few tokens the prefix is clamped at
exactly that room, and the text comes back no shorter than it was (domain §3.7 reviewer finding 1;
contract §4.5: every edited text strictly shrinks, notice included). Dense text (CJK) passes the
token check. Code path: the notice reservation in the cut-length arithmetic.
"""

from __future__ import annotations

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._degrade import notice
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.5"


class ReservesNoticeForZero(FieldRecovery):
    def room(self, text: str) -> int:
        return len(text) - len(notice(0)) - 1  # the bug: the removed count's digits are not reserved


describe = describe_as("bug_notice_room_digits", ["recover"])
recover = ReservesNoticeForZero()
