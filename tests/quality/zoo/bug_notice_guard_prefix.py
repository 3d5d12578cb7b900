"""The check that a cut frees tokens counts the kept prefix, not the prefix with its notice.

"Does this cut shrink the block?" is answered on ``text[:keep]``, so the notice's own tokens are
never weighed (domain §3.7 reviewer finding 1: reserve the notice's tokens, or recount). On text
whose tail is cheap (runs of spaces or repeated characters, a padded table), the characters removed
cost fewer tokens than the notice that replaces them and the block grows in tokens
(contract §4.5). Code path: what the per-block acceptance check measures.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._degrade import _block_tokens, _get, _put
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.5"


class GuardsThePrefix(FieldRecovery):
    def shrinks(self, block: dict[str, Any], new_block: dict[str, Any], item: int | None, keep: int) -> bool:
        kept = _put(block, item, _get(block, item)[:keep])  # the bug: the notice is left out
        return _block_tokens(kept) < _block_tokens(block)


describe = describe_as("bug_notice_guard_prefix", ["recover"])
recover = GuardsThePrefix()
