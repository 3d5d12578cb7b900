"""A trailing assistant tool_use gets synthetic results, as history-repair tools do (trailing=close).

For a target that normalizes histories at rest (domain §6, metaworx), not a running agent.
"""

from __future__ import annotations

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.3"


class Close(FieldNormalizer):
    trailing = "close"


describe = describe_as("legit_trailing_close", ["normalize"], trailing="close")
normalize = Close()
