"""The zoo's false alarm on ``legit_orphans_to_text``, kept as a test.

An orphan's list content turned to text as compact JSON -- the reference's own ``to_text``
serialization (contract §3 "Reference") -- writes a newline inside an item as ``\\n``. Contract §3.4
accepts any serialization that keeps each text item's text, so ``normalize.orphans-per-policy`` must
not ask for the item verbatim; it must still fail a text that lost the item.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxmodel.gate import judge
from ctxmodel.policies import resolve
from ctxmodel.properties.registry import get
from ctxmodel.properties.suite_normalize import conversion_holds
from ctxmodel.targets import open_target

#: The shrunk counterexample of ``run.py --only legit_orphans_to_text`` (seed 0, example 10).
COUNTEREXAMPLE: list[dict[str, Any]] = [
    {"role": "user", "content": "h"},
    {"role": "assistant", "content": [{"type": "text", "text": "h"}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_gone", "content": [{"type": "text", "text": "):\n"}]},
        {"type": "text", "text": "h"},
    ]},
]


@pytest.mark.parametrize("item", ['):\n', 'say "hi"\\', "tab\there", "é\u2028\x01"])
def test_a_json_escaped_item_is_kept(item: str) -> None:
    result = {"type": "tool_result", "tool_use_id": "x", "content": [{"type": "text", "text": item}]}
    for body in (json.dumps(result["content"], separators=(",", ":"), ensure_ascii=False),
                 json.dumps(result["content"])):
        assert conversion_holds({"type": "text", "text": "Tool result:\n" + body}, result)
    assert not conversion_holds({"type": "text", "text": "Tool result:\n[]"}, result)


def test_string_content_stays_verbatim() -> None:
    result = {"type": "tool_result", "tool_use_id": "x", "content": "a\nb"}
    assert conversion_holds({"type": "text", "text": "Tool result:\na\nb"}, result)
    assert not conversion_holds({"type": "text", "text": 'Tool result:\n"a\\nb"'}, result)


def test_the_legit_variant_passes_on_its_counterexample() -> None:
    target = open_target("python:tests.quality.zoo.legit_orphans_to_text")
    policies = resolve(target.description.policies)
    verdict = judge(get("normalize.orphans-per-policy"), target, {"messages": COUNTEREXAMPLE},
                    policies=policies, tokenizer=target.description.tokenizer)
    assert not verdict.failed, verdict.failures


def test_losing_the_item_still_fails() -> None:
    target = open_target("python:tests.targets.broken_normalize:DropsDeclaredToText")
    policies = resolve(target.description.policies)
    assert policies.get("orphans") == "to_text"
    verdict = judge(get("normalize.orphans-per-policy"), target, {"messages": COUNTEREXAMPLE},
                    policies=policies, tokenizer=target.description.tokenizer)
    assert verdict.failed
