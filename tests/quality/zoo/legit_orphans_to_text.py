"""Orphan results are kept as "Tool result:" text where they were, as Roo-Code's append path does (orphans=to_text).

Keeps the user's feedback that arrived as a result of a call the API no longer pairs (domain §2.3, §8 question 1).
"""

from __future__ import annotations

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.4"


class ToText(FieldNormalizer):
    orphans = "to_text"


describe = describe_as("legit_orphans_to_text", ["normalize"], orphans="to_text")
normalize = ToText()
