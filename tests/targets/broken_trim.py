"""Broken trimmers and counts, one bug each (``python:tests.targets.broken_trim:Class``), named for
what they do wrong; each is the witness of the ``trim`` or ``count`` property (and code) that must
catch it (declared with the property, run by ``tests/quality/test_witnesses.py``). Most start from the
reference's ops (``tests.targets.trimmers.Reference``) and change one thing; ``...Chat`` ones and
those setting ``dialect`` declare ``openai-chat``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.trimmers import (
    CallPrunerChat,
    JoinsUsersChat,
    Msg,
    Params,
    PlaceholderChat,
    Reference,
    join_neighbouring_users,
)

CHAT = "openai-chat"


class _Broken(Reference):
    dialect: ClassVar[str] = CHAT

    def trimmed(self, params: Params) -> list[Msg] | None:
        """The reference's answer (``None`` for its error)."""
        out: list[Msg] | None = super().trim(params).get("messages")
        return out


class CutsBetweenCallAndResult(_Broken):
    """A suffix cut at any message: the suffix may start with the answers of a call it left out."""

    name = "broken-cuts-between-call-and-result"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        count = self.measure(params)
        for start in range(len(messages)):
            if count(messages[start:]) <= params["maxTokens"]:
                return {"messages": messages[start:]}
        return {"error": "nothing fits"}


class Empties(_Broken):
    """When nothing it would keep fits, it sends nothing rather than saying so."""

    name = "broken-empties"
    dialect = "anthropic"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any"}

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        return {"messages": [] if out is None else out}


class HoistsSystemMessages(_Broken):
    """Moves every system message to the head of the request, where some providers want them."""

    name = "broken-hoists-system-messages"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is None:
            return {"error": "nothing fits"}
        return {"messages": [m for m in out if self.is_system(m)] + [m for m in out if not self.is_system(m)]}


class InventsANotice(_Broken):
    """Tells the model that earlier messages were left out, in a message of its own."""

    name = "broken-invents-a-notice"
    dialect = "anthropic"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is None:
            return {"error": "nothing fits"}
        dropped = len(params["messages"]) - len(out)
        if dropped:
            out = [{"role": "user", "content": f"[{dropped} earlier messages omitted]"}, *out]
        return {"messages": out}


class CutsWithoutDeclaring(_Broken):
    """Shortens every long string content to 200 characters, declaring trimPartial=no."""

    name = "broken-cuts-without-declaring"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is None:
            return {"error": "nothing fits"}
        return {"messages": [
            {**m, "content": m["content"][:200]} if isinstance(m.get("content"), str) and len(m["content"]) > 200
            else m for m in out]}


class PrunesCallsWithoutDeclaring(CallPrunerChat):
    """Removes old tool calls with their results, keeping the assistant's text, and declares the
    default ``trimToolCalls=keep`` (a returned message must keep all its calls)."""

    name = "broken-prunes-calls-without-declaring"
    policies: ClassVar[dict[str, str]] = {**CallPrunerChat.policies, "trimToolCalls": "keep"}


class RepeatsTheLastUser(_Broken):
    """Repeats the last user message at the end of a trimmed request, to restate the task."""

    name = "broken-repeats-the-last-user"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is None:
            return {"error": "nothing fits"}
        users = [m for m in out if m.get("role") == "user"]
        if out != params["messages"] and users:
            out = [*out, users[-1]]
        return {"messages": out}


class DropsTheSystemPrompt(_Broken):
    """Trims system messages like any other while declaring trimSystem=keep."""

    name = "broken-drops-the-system-prompt"

    def trim(self, params: Params) -> Params:
        policies = {**params.get("policies", {}), "trimSystem": "any"}
        return super().trim({**params, "policies": policies})


class JoinsTheSystemMessages(_Broken):
    """Joins every system message into one at the head, one instruction per line (LiteLLM's way)."""

    name = "broken-joins-the-system-messages"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is None:
            return {"error": "nothing fits"}
        systems = [m for m in out if self.is_system(m) and isinstance(m.get("content"), str)]
        if len(systems) < 2:
            return {"messages": out}
        joined = {"role": "system", "content": "\n".join(m["content"] for m in systems)}
        return {"messages": [joined, *(m for m in out if not any(m is x for x in systems))]}


class DropsTheLastUser(_Broken):
    """Keeps what the assistant did after the last user message, and drops that message, once it trims."""

    name = "broken-drops-the-last-user"
    dialect = "anthropic"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is None:
            return {"error": "nothing fits"}
        prompts = [i for i, m in enumerate(out) if self.starts_turn(m)]
        if out != params["messages"] and prompts and prompts[-1] < len(out) - 1:
            del out[prompts[-1]]
        return {"messages": out}


class OverBudgetAsSuccess(_Broken):
    """Where nothing fits, sends what its policies keep anyway, as if it had fit."""

    name = "broken-over-budget-as-success"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is not None:
            return {"messages": out}
        messages: list[Msg] = params["messages"]
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"][-1:]
        return {"messages": [m for i, m in enumerate(messages) if self.is_system(m) or i in users]}


class TrimsTooLittle(_Broken):
    """Trims to a budget 20 tokens above the one it is given (a reserve subtracted the wrong way)."""

    name = "broken-trims-too-little"

    def trim(self, params: Params) -> Params:
        out = self.trimmed({**params, "maxTokens": params["maxTokens"] + 20})
        return {"error": "nothing fits"} if out is None else {"messages": out}


class ReturnsInputUntrimmed(_Broken):
    """Over budget, sends the input as it came: its trimming path raised and the error was swallowed."""

    name = "broken-returns-input-untrimmed"
    dialect = "anthropic"

    def trim(self, params: Params) -> Params:
        return {"messages": params["messages"]}


class GivesUpEarly(_Broken):
    """Drops whole turns only: when the last turn alone is over budget it gives up, though the
    system messages and the last user message it declares it keeps would fit."""

    name = "broken-gives-up-early"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        count = self.measure(params)
        if count(messages) <= params["maxTokens"]:
            return {"messages": messages}
        starts = [i for i, m in enumerate(messages) if i and self.starts_turn(m)]
        for start in starts:
            out = [m for m in messages[:start] if self.is_system(m)] + messages[start:]
            if count(out) <= params["maxTokens"]:
                return {"messages": out}
        return {"error": "the last turn is over budget"}


class ShapelessReply(_Broken):
    """Answers under a key of its own."""

    name = "broken-shapeless-reply"
    dialect = "anthropic"

    def trim(self, params: Params) -> Params:
        return {"trimmed": self.trimmed(params)}


class DropsOneMoreEachTime(_Broken):
    """Drops the oldest turn before it measures (an off-by-one), so its answer is trimmed again."""

    name = "broken-drops-one-more-each-time"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        starts = [i for i, m in enumerate(messages) if self.starts_turn(m)]
        if len(starts) > 1:
            messages = [m for m in messages[: starts[1]] if self.is_system(m)] + messages[starts[1]:]
        return super().trim({**params, "messages": messages})


class PlaceholderWhereNothingWasDropped(PlaceholderChat):
    """Puts its placeholder after the system messages even when it drops nothing."""

    name = "broken-placeholder-where-nothing-was-dropped"

    def trim(self, params: Params) -> Params:
        out: list[Msg] = super().trim(params)["messages"]
        if len(out) == len(params["messages"]):
            head = self.leading_systems(out)
            out = [*out[:head], {"role": "user", "content": "Skipped 0 messages."}, *out[head:]]
        return {"messages": out}


class PlaceholderDropsOneMoreEachTime(PlaceholderChat):
    """Drops the oldest turn behind its placeholder, and skips its own placeholder when it looks for
    turns: each trim of its answer drops one more (the placeholder's text set aside, the answers differ)."""

    name = "broken-placeholder-drops-one-more-each-time"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        head = self.leading_systems(messages)
        starts = [i for i in range(head, len(messages)) if self.starts_turn(messages[i])
                  and not str(messages[i].get("content", "")).startswith("Skipped ")]
        if len(starts) < 2:
            return {"messages": list(messages)}
        skipped = {"role": "user", "content": f"Skipped {starts[1] - head} messages."}
        return {"messages": [*messages[:head], skipped, *messages[starts[1]:]]}


class MutatesInput(_Broken):
    """Trims the caller's list in place."""

    name = "broken-trim-mutates-input"

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        if out is not None:
            params["messages"][:] = out
        return {"messages": params["messages"]} if out is not None else {"error": "nothing fits"}


class Nondeterministic(_Broken):
    """Every other call keeps one message fewer: hidden state from earlier requests."""

    name = "broken-trim-nondeterministic"

    def __init__(self) -> None:
        self.calls = 0

    def trim(self, params: Params) -> Params:
        self.calls += 1
        out = self.trimmed(params)
        if out is not None and self.calls % 2 == 0 and len(out) > 1 and out[0].get("role") == "user":
            out = out[1:] if not self.answers_a_call(out[1]) else out
        return {"messages": out} if out is not None else {"error": "nothing fits"}


def _text_only(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


class CountsTheLastTurn(_Broken):
    """Counts only from the last user message on (the turn being sent), so a new user message lowers it."""

    name = "broken-counts-the-last-turn"

    def count(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        return ref.op_chat_count({"messages": messages[users[-1]:] if users else messages})


class CountsTextOnly(_Broken):
    """Counts the text of each message; tool calls count nothing."""

    name = "broken-counts-text-only"

    def count(self, params: Params) -> Params:
        texts = [{"role": "user", "content": _text_only(m)} for m in params["messages"]]
        return ref.op_chat_count({"messages": texts})


class CountsArgumentsNotNames(_Broken):
    """Counts each call's arguments, not its name."""

    name = "broken-counts-arguments-not-names"

    def count(self, params: Params) -> Params:
        out = []
        for m in params["messages"]:
            calls = m.get("tool_calls") if isinstance(m, dict) else None
            out.append({"role": "user", "content": _text_only(m) + "".join(
                json.dumps(c.get("function", {}).get("arguments")) for c in calls or [] if isinstance(c, dict))})
        return ref.op_chat_count({"messages": out})


class ReturnsOnlyTheFloor(_Broken):
    """Once over budget, sends only what its policies keep (the system messages and the last user
    message), though the whole last turn would fit with them."""

    name = "broken-returns-only-the-floor"

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        count = self.measure(params)
        if count(messages) <= params["maxTokens"]:
            return {"messages": messages}
        users = [i for i, m in enumerate(messages) if self.starts_turn(m)][-1:]
        kept = [m for i, m in enumerate(messages) if self.is_system(m) or i in users]
        if kept and count(kept) <= params["maxTokens"]:
            return {"messages": kept}
        return {"error": "the messages the policies keep do not fit"}


class KeepsTheNewestDeclaringOldest(_Broken):
    """Drops the oldest turns first (the reference's way) while declaring that it keeps the oldest."""

    name = "broken-keeps-the-newest-declaring-oldest"
    policies: ClassVar[dict[str, str]] = {**_Broken.policies, "trimKeep": "oldest"}

    def trim(self, params: Params) -> Params:
        out = self.trimmed(params)
        return {"error": "nothing fits"} if out is None else {"messages": out}


class _Pruner(_Broken):
    policies: ClassVar[dict[str, str]] = {**_Broken.policies, "trimBudget": "none", "trimToolCalls": "pairs"}


class PrunesNothing(_Pruner):
    """Declares ``pruneCalls=all`` and sends every call with its results."""

    name = "broken-prunes-nothing"
    policies: ClassVar[dict[str, str]] = {**_Pruner.policies, "pruneCalls": "all"}

    def trim(self, params: Params) -> Params:
        return {"messages": list(params["messages"])}


class KeepsReasoningItSaysItPrunes(_Pruner):
    """Declares ``pruneReasoning=all`` and sends every ``reasoning_content``."""

    name = "broken-keeps-reasoning-it-says-it-prunes"
    policies: ClassVar[dict[str, str]] = {**_Pruner.policies, "trimReasoning": "strip", "pruneReasoning": "all"}

    def trim(self, params: Params) -> Params:
        return {"messages": list(params["messages"])}


class PrunesTheLastCallsToo(_Pruner):
    """Declares ``pruneCalls=before-last-message`` and removes every call with its results, the
    last message's too."""

    name = "broken-prunes-the-last-calls-too"
    policies: ClassVar[dict[str, str]] = {**_Pruner.policies, "pruneCalls": "before-last-message"}

    def trim(self, params: Params) -> Params:
        out: list[Msg] = []
        for message in params["messages"]:
            if message.get("role") == "tool":
                continue
            if message.get("role") == "assistant" and "tool_calls" in message:
                message = {k: v for k, v in message.items() if k != "tool_calls"}
                if not message.get("content"):
                    continue
            out.append(message)
        return {"messages": out}


class JoinsUsersAcrossTheAnswer(JoinsUsersChat):
    """Declares ``mergeUsers=yes`` and joins its answer's last user message into its first, across the
    messages between them: the join is of messages the answer does not hold side by side."""

    name = "broken-joins-users-across-the-answer"

    def trim(self, params: Params) -> Params:
        out = super(JoinsUsersChat, self).trim(params)  # the reference's answer, not yet joined
        if "messages" in out:
            return {"messages": join_neighbouring_users(out["messages"], across=True)}
        return out
