"""A trailing assistant tool_use is closed with a synthetic result although the target declares trailing=leave.

The history-repair tools close it (domain §6, metaworx); inside an agent that is still running the
tool, it answers a call that is only pending, and the real result then becomes a duplicate.
"""

from __future__ import annotations

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.1"


class Closes(FieldNormalizer):
    trailing = "close"  # the bug: the declared policy says leave


describe = describe_as("bug_closes_trailing", ["normalize"], trailing="leave")
normalize = Closes()
