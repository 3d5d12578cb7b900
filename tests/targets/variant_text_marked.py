"""Legitimate variant: synthetic results marked only by their text, no ``is_error`` (Zoo-Code's
validator, domain §4.1). Contract §3.3 takes "and/or": text containing "interrupt" suffices.
"""

from __future__ import annotations

from ctxmodel import codec
from ctxmodel.normalize import SYNTHETIC_TEXT, normalize_report
from ctxmodel.targets import reference as ref
from tests.targets.variant_reference import Params, Reference

TEXT = "[interrupted] The tool call did not complete; no output was recorded."


class Variant(Reference):
    name = "variant-text-marked"

    def normalize(self, params: Params) -> Params:
        options = ref._normalize_options(params)
        out, report = normalize_report(codec.load(params["messages"]), **options)
        created = set(report.synthesized)
        messages = codec.dump(out)
        seen: set[str] = set()
        for k, msg in enumerate(messages):
            content = msg.get("content")
            if msg.get("role") != "user" or not isinstance(content, list) or k == 0:
                continue
            for block in content:
                tool_id = block.get("tool_use_id")
                if block.get("type") == "tool_result" and tool_id in created and tool_id not in seen:
                    if block.get("is_error") is True and block.get("content") == SYNTHETIC_TEXT:
                        seen.add(tool_id)
                        block["content"] = TEXT
                        del block["is_error"]
        return {"messages": messages}

    def request(self, params: Params) -> Params:
        return self.normalize({**params, "messages": super().effective(params)["messages"]})
