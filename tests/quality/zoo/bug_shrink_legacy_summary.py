"""The shrink scan recognises only user-role summaries, so a legacy assistant-role summary's condensed results get cut.

Summaries became user messages in January 2026 (Roo-Code PR #10873); older files hold
``role: "assistant"`` summaries (domain §1.2, §7 B9). A candidate scan that finds the summary with
``role === "user" && isSummary`` sees no summary there, so everything it condensed (the messages
before it, and those naming it in ``condenseParent``) is a shrink candidate (contract §4.5, §2).
Code path: the summary test of the shrink-candidate scan.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, visible_flags
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.5"


class UserSummariesOnly(FieldRecovery):
    def shrink_mask(self, msgs: list[dict[str, Any]], tid: str | None) -> list[bool]:
        # the bug: a summary is ``isSummary`` on a user message
        seen = [dict(m, isSummary=False) if m.get("isSummary") and m.get("role") != "user" else m for m in msgs]
        return visible_flags(seen)


describe = describe_as("bug_shrink_legacy_summary", ["recover"])
recover = UserSummariesOnly()
