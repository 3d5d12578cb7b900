"""A recover target that cuts degraded text the way JavaScript's ``slice(0, n)`` does (domain §5.6).

The reference's recovery, with each text it cut re-cut at the same count taken as UTF-16 code units
rather than code points: the kept prefix is shorter when it holds emoji, and ends with half of a pair
when the count falls between a pair's halves — the lone surrogate the API rejects. Its twin in
JavaScript is ``tests/targets/node_degrade_cut.js``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.variant_reference import Reference

Params = dict[str, Any]

#: The reference's truncation notice (contract §4 reference; ``ctxmodel.contract_data.notice_text``).
_NOTICE = re.compile(r"\n\[Tool result truncated: \d+ characters removed to fit the context budget\]\Z")


def cut_units(text: str, n: int) -> str:
    """``text.slice(0, n)`` of JavaScript: the first ``n`` UTF-16 code units."""
    return text.encode("utf-16-le", "surrogatepass")[: 2 * n].decode("utf-16-le", "surrogatepass")


def _recut(text: str, held: set[str]) -> str:
    found = _NOTICE.search(text)
    if found is None or text in held:
        return text
    prefix = text[: found.start()]
    return cut_units(prefix, len(prefix)) + text[found.start() :]


def _texts(messages: list[Any]) -> set[str]:
    out: set[str] = set()
    for msg in messages:
        for block in msg.get("content") if isinstance(msg.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                out.update([inner] if isinstance(inner, str) else
                           [i["text"] for i in inner or [] if isinstance(i, dict) and isinstance(i.get("text"), str)])
    return out


class CutsByUtf16Units(Reference):
    """Degrades by UTF-16 code units (a JavaScript port's ``text.slice(0, n)``)."""

    name = "broken-cuts-by-utf16-units"

    def recover(self, params: Params) -> Params:
        out = ref.op_recover(params)
        held = _texts(params["messages"])
        for msg in out["messages"]:
            for block in msg.get("content") if isinstance(msg.get("content"), list) else []:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                inner = block.get("content")
                if isinstance(inner, str):
                    block["content"] = _recut(inner, held)
                elif isinstance(inner, list):
                    for item in inner:
                        if isinstance(item, dict) and isinstance(item.get("text"), str):
                            item["text"] = _recut(item["text"], held)
        return out


#: What ``CapsTextsByUnits`` keeps of a long text, in UTF-16 code units (odd: an all-emoji text is
#: always cut between a pair's halves).
CAP_UNITS = 21


def _capped(text: str) -> str:
    return cut_units(text, CAP_UNITS) + "…" if len(text.encode("utf-16-le", "surrogatepass")) > 2 * CAP_UNITS else text


class CapsTextsByUnits(Reference):
    """Builds the request with every long text capped at ``CAP_UNITS`` code units by ``slice`` (an
    agent that shortens what it shows the model the JavaScript way)."""

    name = "broken-caps-texts-by-units"
    ops: ClassVar[list[str]] = ["describe", "request"]

    def request(self, params: Params) -> Params:
        out = ref.op_request(params)
        for msg in out["messages"]:
            content = msg.get("content")
            if isinstance(content, str):
                msg["content"] = _capped(content)
            elif isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                        block["text"] = _capped(block["text"])
        return out
