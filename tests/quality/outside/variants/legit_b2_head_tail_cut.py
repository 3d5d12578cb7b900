"""Legitimate: a degraded tool-result text keeps its head and its tail (where build logs put the error),
with a notice of its own wording in between, instead of a prefix followed by the notice.

Mistake: none. Contract §4 rule 5 requires only that degradation edits visible textual tool-result text
and strictly shrinks each edited block in characters and tokens; the prefix, the floor and the notice text
are reference choices. Where the head-and-tail form would not shrink strictly, or would free fewer tokens
than the prefix cut, the prefix cut is kept.
Code path: one cut with its notice (``shrink``).
"""

from ctxmodel.model import ToolResult

from ._kit import Agent, Text, text_of, with_text

TAIL = 120


def notice(removed: int) -> str:
    return f"\n[... {removed} characters omitted to fit the context budget ...]\n"


class V(Agent):
    name = "legit-b2-head-tail-cut"

    def shrink(self, block: ToolResult, item: int | None, raw_to_free: int) -> tuple[ToolResult, int] | None:
        got = super().shrink(block, item, raw_to_free)
        if got is None:
            return None
        text, cut = text_of(block, item), text_of(got[0], item)
        keep = cut.rfind("\n[Tool result truncated:")
        tail = min(TAIL, keep // 3)
        if keep <= 0 or tail <= 0:
            return got
        head = keep - tail
        new_text = text[:head] + notice(len(text) - keep) + text[len(text) - tail :]
        c = self.counter
        new_block = with_text(block, item, new_text)
        new_raw = c.raw_block(new_block)
        shrinks = len(new_text) < len(text) and new_raw < c.raw_block(block)
        if item is not None:
            shrinks = shrinks and c.raw_block(Text(new_text)) < c.raw_block(Text(text))
        return (new_block, new_raw) if shrinks and new_raw <= got[1] else got


describe, normalize, effective, request, recover, count = V().ops()
