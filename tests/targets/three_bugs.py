"""A target with three independent bugs that break the same rule (contract §3.1) in three ways.

``ThreeWays``: where a result message also carries an image, the image is put before the results
(the parallel-tool-call 400 of domain §5.1); where a message holds exactly one result and nothing
else, that result is sent twice; where a message answers two or more calls without an image, its
last result is lost. Each is its own kind of ``normalize.results-lead`` (``result-after-image``,
``duplicate-result``, ``result-missing``): a campaign that kept one failure per property would show
one of the three.
"""

from __future__ import annotations

from typing import Any

from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]


def _break(msg: Msg) -> Msg:
    content = msg.get("content")
    if msg.get("role") != "user" or not isinstance(content, list) or not content:
        return msg
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    images = [b for b in content if isinstance(b, dict) and b.get("type") == "image"]
    if results and images:
        rest = [b for b in content if b not in images]
        return {**msg, "content": [images[0], *rest]}
    if len(results) == 1 and len(content) == 1:
        return {**msg, "content": [results[0], results[0]]}
    if len(results) >= 2:
        last = results[-1]
        return {**msg, "content": [b for b in content if b is not last]}
    return msg


class ThreeWays(Reference):
    name = "broken-three-ways"

    def normalize(self, params: Params) -> Params:
        out = super().normalize(params)
        return {**out, "messages": [_break(m) for m in out["messages"]]}
