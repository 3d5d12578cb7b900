"""The ``Probe`` every check drives a target through (contract §4, §4.4, §7).

It adds the declared policies to each call, records every exchange (so a failure can be written as
a fixture of what was sent and what came back, contract §8), and answers the three questions the
contract lets the harness ask on the target's behalf: what it sees (its ``effective``, else ours),
what it would send (its ``request``, else its ``normalize`` of its ``effective``, else its
``effective`` — never our ``normalize`` on its output, §4.4), and how much that costs (our own
recount under the tokenizer it declares, system prompt counted separately, §4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ctxmodel import codec
from ctxmodel.properties import yardsticks
from ctxmodel.properties.catalogue import Exchange
from ctxmodel.properties.json_reading import first_difference, messages_of
from ctxmodel.targets.base import Target, TargetFailure
from ctxmodel.tokens.counter import Counter

__all__ = ["Call", "TargetProbe"]


@attrs.frozen
class Call:
    """One call as recorded for a fixture: the params as sent (policies included, before the target
    could touch them), and the reply or the failure."""

    op: str
    params: dict[str, Any]
    result: dict[str, Any] | None
    failure: str | None


class TargetProbe:
    """A ``ctxmodel.properties.catalogue.Probe`` over a ``Target``."""

    def __init__(self, target: Target, policies: Mapping[str, str], tokenizer: str) -> None:
        self.target = target
        self.policies: Mapping[str, str] = dict(policies)
        self.tokenizer = tokenizer or "zoo"
        self.calls: list[Call] = []
        #: The params objects actually handed to the target, in call order: a Python target that
        #: mutates its input leaves its marks here, to be compared with ``calls[i].params``.
        self.sent: list[dict[str, Any]] = []
        self._counter: Counter | None = None

    def has(self, op: str) -> bool:
        return op in self.target.description.ops

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        # Two copies: one to record, one to hand over, so neither the caller's params nor the
        # record can be changed by a target that mutates its input (contract §1).
        sent = codec.copy_json(params)
        if op == "trim" and isinstance(sent.get("_budget"), dict) and isinstance(sent.get("messages"), list):
            sent["maxTokens"] = self._trim_budget(sent)
            del sent["_budget"]
        sent["policies"] = dict(self.policies)
        if op == "recover" and "totalTokens" not in sent and isinstance(sent.get("messages"), list):
            sent["totalTokens"] = self.total_tokens(sent["messages"], str(sent.get("systemPrompt", "")))
        record = codec.copy_json(sent)
        self.sent.append(sent)
        try:
            result = self.target.call(op, sent)
        except TargetFailure as exc:
            self.calls.append(Call(op, record, None, str(exc)))
            raise
        self.calls.append(Call(op, record, codec.copy_json(result), None))
        return result

    def _trim_budget(self, params: dict[str, Any]) -> int:
        """A drawn budget point as ``maxTokens`` by the target's own count (``strategies.trim``), each
        count it takes a call recorded like any other, so a fixture shows how the budget was set."""
        from ctxmodel.strategies.trim import budget_of

        if not self.has("count"):
            return budget_of(params, self.policies)
        prompt = params.get("systemPrompt")

        def count(messages: list[dict[str, Any]]) -> int:
            ask: dict[str, Any] = {"messages": messages}
            if isinstance(prompt, str) and prompt:
                ask["systemPrompt"] = prompt
            tokens = self.call("count", ask).get("tokens")
            if isinstance(tokens, bool) or not isinstance(tokens, int):
                raise TargetFailure("error-reply", f"count returned {tokens!r} tokens: expected an integer")
            return tokens

        return budget_of(params, self.policies, count)

    def exchange(self, op: str, params: dict[str, Any]) -> Exchange:
        result = self.call(op, params)
        if op == "trim":  # judged against the budget it was sent, not the drawn point
            params = {k: v for k, v in self.calls[-1].params.items() if k != "policies"}
        judged = None
        if op == "normalize" and self.policies.get("mergeUsers") == "yes" and isinstance(params.get("messages"), list):
            judged = yardsticks.merged_users(params["messages"])  # what it declared it joins
        sent, record = self.sent[-1], self.calls[-1].params
        mutated = None
        if sent != record:
            mutated = first_difference(record, sent, "params") or "params"
        elif isinstance(result, dict) and isinstance(result.get("mutated"), str):
            mutated = str(result["mutated"])  # reported by an out-of-process worker
        return Exchange(op, params, result, mutated, judged)

    def effective(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.has("effective"):
            return messages_of(self.call("effective", {"messages": messages}), "effective")
        visible: list[dict[str, Any]] = codec.copy_json(yardsticks.effective(messages))
        return visible

    def request(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.has("request"):
            return messages_of(self.call("request", {"messages": messages}), "request")
        if self.has("normalize"):
            visible = self.effective(messages)
            return messages_of(self.call("normalize", {"messages": visible}), "normalize")
        return self.effective(messages)

    @property
    def counter(self) -> Counter:
        if self._counter is None:
            from ctxmodel.tokens import get_counter

            self._counter = get_counter(self.tokenizer)
        return self._counter

    def raw_text(self, text: str) -> int:
        return int(self.counter.raw_text(text))

    def raw_block(self, block: dict[str, Any]) -> int:
        from ctxmodel.model import Message

        loaded = codec.load([{"role": "user", "content": [block]}])[0]
        assert isinstance(loaded, Message) and not isinstance(loaded.content, str)
        return int(self.counter.raw_block(loaded.content[0]))

    def count(self, messages: list[dict[str, Any]], system_prompt: str = "") -> int:
        """Our count of messages as given (no visibility): the ``count`` op's yardstick (§5)."""
        counter = self.counter
        return int(counter.count_text(system_prompt)) + int(counter.count_messages(codec.load(messages)))

    def total_tokens(self, messages: list[dict[str, Any]], system_prompt: str = "") -> int:
        """What the harness always sends as ``recover``'s ``totalTokens`` (contract §4): its count
        less the last visible message's, the figure the agents' Task hands ``manageContext``."""
        visible = yardsticks.effective(messages)
        last = self.count(visible[-1:]) if visible else 0
        return self.count(visible, system_prompt) - last

    def recount(self, messages: list[dict[str, Any]], system_prompt: str = "") -> int:
        return self.count(self.effective(messages), system_prompt)
