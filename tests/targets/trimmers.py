"""Legitimate request-time trimmers (contract §10), each a ``python:tests.targets.trimmers:Class``
target, in both dialects (``...Chat`` classes declare ``openai-chat``): they make other valid choices
than the reference and declare them, and every ``trim`` property must pass on them.

- ``Reference``/``ReferenceChat``: the reference's own ops, the base the broken ones change.
- ``SuffixCut``: the longest suffix that fits, started at a safe boundary (never a tool answer), a
  leading system message kept (LangChain's ``trim_messages(strategy="last", include_system=True)``).
- ``HeadAndTail``: the task (leading system messages and the first user message) and the longest
  tail that fits after it; without room for the task, a suffix cut. The head may leave room for
  less than the last turn, so it keeps neither end whole (``trimKeep=any``).
- ``PrefixCut``: the longest prefix that fits and ends at a safe boundary (LangChain's
  ``strategy="first"``); it keeps the oldest (``trimKeep=oldest``).
- ``DropOldestTurn``: whole turns dropped oldest first, system messages with them; it gives up when
  not even the last turn fits, and declares that it may.
- ``Pruner``: no budget; the calls of all but the last two assistant messages with calls removed,
  each with its answers.
- ``CallPrunerChat``: no budget; old calls removed with their answers, the assistant's text kept.
- ``PlaceholderChat``: no budget; the leading system messages and the last turn, a placeholder
  message saying how many were skipped between them.

They read messages with their own helpers, not ``ctxmodel.trimming``, and count with the
reference's count of their dialect, which their ``count`` op answers with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ctxmodel.targets import reference as ref

Params = dict[str, Any]
Msg = dict[str, Any]


class ReferenceSystemApart:
    """The reference's ``trim`` and ``count`` in a dialect whose system prompt is sent apart
    (``bedrock-converse``, ``gemini``), as a worker target: the base of each dialect's trimmers."""

    name = "trimmer-reference-apart"
    dialect: ClassVar[str]
    policies: ClassVar[dict[str, str]] = dict(ref.REFERENCE_TRIM_POLICIES)
    _OPS: ClassVar[dict[str, tuple[Callable[[Params], Params], Callable[[Params], Params]]]] = {
        "bedrock-converse": (ref.op_converse_count, ref.op_converse_trim),
        "gemini": (ref.op_gemini_count, ref.op_gemini_trim),
    }

    def describe(self, params: Params) -> Params:
        return {"protocol": 1, "name": self.name, "version": "1", "ops": ["describe", "trim", "count"],
                "tokenizer": "zoo", "dialect": self.dialect, "policies": dict(self.policies)}

    def count(self, params: Params) -> Params:
        return self._OPS[self.dialect][0](params)

    def trim(self, params: Params) -> Params:
        return self._OPS[self.dialect][1](params)

    def measure(self, params: Params) -> Callable[[list[Msg]], int]:
        """The count the budget is measured by: this target's own ``count``, the prompt with it."""
        system = params.get("systemPrompt", "")

        def count(messages: list[Msg]) -> int:
            tokens: int = self.count({"messages": messages, "systemPrompt": system})["tokens"]
            return tokens

        return count


class Reference:
    """The reference's ``trim`` and ``count`` in a declared dialect, as a worker target."""

    name = "trimmer-reference"
    dialect: ClassVar[str] = "anthropic"
    policies: ClassVar[dict[str, str]] = dict(ref.REFERENCE_TRIM_POLICIES)

    def describe(self, params: Params) -> Params:
        return {"protocol": 1, "name": self.name, "version": "1", "ops": ["describe", "trim", "count"],
                "tokenizer": "zoo", "dialect": self.dialect, "policies": dict(self.policies)}

    @property
    def chat(self) -> bool:
        return self.dialect == "openai-chat"

    def count(self, params: Params) -> Params:
        return ref.op_chat_count(params) if self.chat else ref.op_count(params)

    def trim(self, params: Params) -> Params:
        return ref.op_chat_trim(params) if self.chat else ref.op_trim(params)

    # -- helpers the trimmers share -------------------------------------------------------------

    def measure(self, params: Params) -> Callable[[list[Msg]], int]:
        """The count the budget is measured by: this target's own ``count``."""
        system = params.get("systemPrompt")

        def count(messages: list[Msg]) -> int:
            request: Params = {"messages": messages}
            if not self.chat and isinstance(system, str):
                request["systemPrompt"] = system
            tokens: int = self.count(request)["tokens"]
            return tokens

        return count

    def answers_a_call(self, message: Msg) -> bool:
        """A message that must follow its call: a tool message, or a user message with results."""
        if self.chat:
            return message.get("role") == "tool"
        content = message.get("content")
        return message.get("role") == "user" and isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content)

    def is_system(self, message: Msg) -> bool:
        return self.chat and message.get("role") in ("system", "developer")

    def starts_turn(self, message: Msg) -> bool:
        return message.get("role") == "user" and not self.answers_a_call(message)

    def leading_systems(self, messages: list[Msg]) -> int:
        n = 0
        while n < len(messages) and self.is_system(messages[n]):
            n += 1
        return n


class ReferenceChat(Reference):
    name = "trimmer-reference-chat"
    dialect = "openai-chat"


def _budget(params: Params) -> int | None:
    budget = params.get("maxTokens")
    return budget if isinstance(budget, int) else None


class SuffixCut(Reference):
    """The longest fitting suffix from a safe boundary, after a leading system message."""

    name = "trimmer-suffix-cut"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "first", "trimLastUser": "any", "trimPartial": "no"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = _budget(params)
        count = self.measure(params)
        if budget is None or count(messages) <= budget:
            return {"messages": list(messages)}
        head = messages[:1] if messages and self.is_system(messages[0]) else []
        for start in range(len(head), len(messages) + 1):
            if start < len(messages) and self.answers_a_call(messages[start]):
                continue
            out = head + messages[start:]
            if out and count(out) <= budget:
                return {"messages": out}
        return {"error": f"nothing fits {budget} tokens"}


class SuffixCutChat(SuffixCut):
    name = "trimmer-suffix-cut-chat"
    dialect = "openai-chat"


class HeadAndTail(Reference):
    """The task and the longest tail that fits after it; a suffix cut when the task leaves no room."""

    name = "trimmer-head-and-tail"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "first", "trimLastUser": "any", "trimPartial": "no",
                                          "trimKeep": "any"}

    def _tails(self, messages: list[Msg], head: list[Msg], after: int, count: Callable[[list[Msg]], int],
               budget: int) -> list[Msg] | None:
        for start in range(after, len(messages) + 1):
            if start < len(messages) and self.answers_a_call(messages[start]):
                continue
            out = head + messages[start:]
            if out and count(out) <= budget:
                return out
        return None

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = _budget(params)
        count = self.measure(params)
        if budget is None or count(messages) <= budget:
            return {"messages": list(messages)}
        systems = self.leading_systems(messages)
        task = systems + 1 if systems < len(messages) and self.starts_turn(messages[systems]) else systems
        found = self._tails(messages, messages[:task], task, count, budget)
        if found is None:
            first = min(systems, 1)
            found = self._tails(messages, messages[:first], first, count, budget)
        return {"messages": found} if found is not None else {"error": f"nothing fits {budget} tokens"}


class PrefixCut(Reference):
    """The longest prefix that fits, never ending between a call and its answers; a leading system
    message is in every prefix."""

    name = "trimmer-prefix-cut"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "first", "trimLastUser": "any", "trimPartial": "no",
                                          "trimKeep": "oldest"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = _budget(params)
        count = self.measure(params)
        if budget is None or count(messages) <= budget:
            return {"messages": list(messages)}
        for end in range(len(messages) - 1, 0, -1):
            if self.answers_a_call(messages[end]):
                continue
            if count(messages[:end]) <= budget:
                return {"messages": messages[:end]}
        return {"error": f"no prefix fits {budget} tokens"}


class PrefixCutChat(PrefixCut):
    name = "trimmer-prefix-cut-chat"
    dialect = "openai-chat"


class HeadAndTailChat(HeadAndTail):
    name = "trimmer-head-and-tail-chat"
    dialect = "openai-chat"


class DropOldestTurn(Reference):
    """Whole turns, oldest first, system messages with them; an error when the last turn does not fit."""

    name = "trimmer-drop-oldest-turn"
    policies: ClassVar[dict[str, str]] = {"trimSystem": "any", "trimLastUser": "any", "trimPartial": "no"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        budget = _budget(params)
        count = self.measure(params)
        if budget is None or count(messages) <= budget:
            return {"messages": list(messages)}
        starts = [i for i, m in enumerate(messages) if i and self.starts_turn(m)]
        for start in starts:
            out = messages[start:]
            if count(out) <= budget:
                return {"messages": out}
        return {"error": f"the last turn alone is over {budget} tokens"}


class DropOldestTurnChat(DropOldestTurn):
    name = "trimmer-drop-oldest-turn-chat"
    dialect = "openai-chat"


class Pruner(Reference):
    """Old tool traffic removed: every call message but the last two, each with its answers."""

    name = "trimmer-pruner"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimBudget": "none"}
    keep_calls = 2

    def _calls(self, message: Msg) -> bool:
        if message.get("role") != "assistant":
            return False
        if self.chat:
            return bool(message.get("tool_calls"))
        content = message.get("content")
        return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        callers = [i for i, m in enumerate(messages) if self._calls(m)]
        old = set(callers[: max(0, len(callers) - self.keep_calls)])
        out: list[Msg] = []
        dropping = False
        for i, message in enumerate(messages):
            if i in old:
                dropping = True
                continue
            if dropping and self.answers_a_call(message):
                if not self.chat:
                    dropping = False  # one message of results answers one call message
                continue
            dropping = False
            out.append(message)
        return {"messages": out}


class PrunerChat(Pruner):
    name = "trimmer-pruner-chat"
    dialect = "openai-chat"


class CallPrunerChat(Reference):
    """Old tool calls removed with their results, each assistant message keeping its text (as the
    Vercel AI SDK's ``pruneMessages`` does): every call but those of the last calling message; an
    assistant message left with neither text nor calls goes too. Declares ``trimToolCalls=pairs``."""

    name = "trimmer-call-pruner-chat"
    dialect = "openai-chat"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimBudget": "none",
                                          "trimToolCalls": "pairs"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        callers = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")]
        old = set(callers[:-1])
        pruned: set[str] = set()
        for i in old:
            pruned |= {str(c.get("id")) for c in messages[i]["tool_calls"] if isinstance(c, dict)}
        out: list[Msg] = []
        for i, message in enumerate(messages):
            if i in old:
                rest = {k: v for k, v in message.items() if k != "tool_calls"}
                if rest.get("content"):
                    out.append(rest)
            elif message.get("role") == "tool" and message.get("tool_call_id") in pruned:
                continue
            else:
                out.append(message)
        return {"messages": out}


class OptionPrunerChat(Reference):
    """No budget: every call made or answered before the last two messages removed with its
    results (unless those two call or answer it), and every assistant message but the last one
    without its ``reasoning_content``; an assistant message left with nothing to send goes too."""

    name = "trimmer-option-pruner-chat"
    dialect = "openai-chat"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimBudget": "none",
                                          "trimToolCalls": "pairs", "trimReasoning": "strip",
                                          "pruneCalls": "before-last-2-messages",
                                          "pruneReasoning": "before-last-message"}

    @staticmethod
    def _ids(message: Msg) -> set[str]:
        if message.get("role") == "tool":
            return {str(message.get("tool_call_id"))}
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        return {str(c.get("id")) for c in calls if isinstance(c, dict)} if isinstance(calls, list) else set()

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        cut = max(0, len(messages) - 2)
        kept = set().union(*(self._ids(m) for m in messages[cut:]))
        gone = set().union(*(self._ids(m) for m in messages[:cut])) - kept
        out: list[Msg] = []
        for i, message in enumerate(messages):
            if message.get("role") == "tool" and str(message.get("tool_call_id")) in gone:
                continue
            if message.get("role") != "assistant":
                out.append(message)
                continue
            pruned = dict(message)
            if i < len(messages) - 1:
                pruned.pop("reasoning_content", None)
            calls = pruned.get("tool_calls")
            if isinstance(calls, list) and self._ids(message) & gone:
                left = [c for c in calls if not (isinstance(c, dict) and str(c.get("id")) in gone)]
                if left:
                    pruned["tool_calls"] = left
                else:
                    del pruned["tool_calls"]
            if pruned.get("content") or pruned.get("tool_calls") or "reasoning_content" in pruned:
                out.append(pruned)
            elif message.get("content") or message.get("tool_calls") or "reasoning_content" in message:
                continue  # left with nothing to send
            else:
                out.append(message)
        return {"messages": out}


class PlaceholderChat(Reference):
    """No budget: the leading system messages and the last turn, with one user message saying how
    many it skipped in between (as AutoGen's ``HeadAndTailChatCompletionContext``, whose unit is a
    turn here so that no call loses its answers). Declares ``trimPlaceholder=one``."""

    name = "trimmer-placeholder-chat"
    dialect = "openai-chat"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "trimBudget": "none",
                                          "trimSystem": "first", "trimPlaceholder": "one"}

    def trim(self, params: Params) -> Params:
        messages: list[Msg] = params["messages"]
        head = self.leading_systems(messages)
        starts = [i for i in range(head, len(messages)) if self.starts_turn(messages[i])]
        tail = starts[-1] if starts else head
        if tail <= head:
            return {"messages": list(messages)}
        skipped = {"role": "user", "content": f"Skipped {tail - head} messages."}
        return {"messages": [*messages[:head], skipped, *messages[tail:]]}


def join_neighbouring_users(messages: list[Msg], across: bool = False) -> list[Msg]:
    """Each run of neighbouring plain user messages as one, its content their parts in order (as
    OpenHands' ``events_to_messages`` sends them); ``across``: the last one joined into the first
    even when other messages stand between them."""
    def plain(m: Msg) -> bool:
        return m.get("role") == "user" and isinstance(m.get("content"), (str, list)) and set(m) <= {"role", "content"}

    def parts(m: Msg) -> list[Any]:
        content = m["content"]
        return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)

    out: list[Msg] = []
    for message in messages:
        if out and plain(out[-1]) and plain(message):
            out[-1] = {"role": "user", "content": parts(out[-1]) + parts(message)}
        else:
            out.append(message)
    users = [i for i, m in enumerate(out) if plain(m)]
    if across and len(users) > 1 and users[-1] - users[0] > 1:
        first, last = users[0], users[-1]
        joined = {"role": "user", "content": parts(out[first]) + parts(out[last])}
        out = [*out[:first], joined, *out[first + 1:last], *out[last + 1:]]
    return out


class JoinsUsersChat(ReferenceChat):
    """The reference, its answer sent with neighbouring user messages joined into one, as OpenHands
    sends them. Declares ``mergeUsers=yes``."""

    name = "trimmer-joins-users-chat"
    policies: ClassVar[dict[str, str]] = {**ref.REFERENCE_TRIM_POLICIES, "mergeUsers": "yes"}

    def trim(self, params: Params) -> Params:
        out = super().trim(params)
        if "messages" in out:
            return {"messages": join_neighbouring_users(out["messages"])}
        return out


#: Every legitimate trimmer, by the class name its spec names.
LEGITIMATE: tuple[str, ...] = (
    "Reference", "ReferenceChat", "SuffixCut", "SuffixCutChat", "HeadAndTail", "HeadAndTailChat",
    "DropOldestTurn", "DropOldestTurnChat", "Pruner", "PrunerChat", "CallPrunerChat", "PlaceholderChat",
    "PrefixCut", "PrefixCutChat", "OptionPrunerChat", "JoinsUsersChat",
)
