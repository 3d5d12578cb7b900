"""The stateful agent-loop model: a ``RuleBasedStateMachine`` that plays an agent session.

Single-call properties judge one op on one input. Some bugs only a sequence reaches: a truncation
whose marker a later rewind deletes, a second truncation that re-tags the first one's marker, a
degradation applied to a block an earlier one already cut. This machine stores a history the way a
correct agent does (domain §2.3: results of one assistant turn arrive together, leading their user
message), and drives the target through the steps an agent session takes:

- assistant turns with parallel tool calls; their results arriving in any order, some with images;
- user interjections (a text turn, or text after the results of a pending turn);
- condensing, as the agent does it: every visible message tagged ``condenseParent``, a user-role
  summary appended (domain §3.4, §7 C8);
- truncation through the target's own ``recover`` under a small budget (contract §4);
- rewinds that delete a summary or a truncation marker and everything after it (domain §7 B6).

After every step it judges the exchanges it made with the catalogue's own checks (the same ones
``ctxmodel check`` runs, ``ctxmodel.gate.judge_exchange``): the request the target builds
(``request.oracle``), the target's ``effective`` (``effective.*``) and every ``recover`` call
(``recover.*``). A failure is an ordinary catalogue failure: its fixture names the property, holds
the one exchange's params, and replays with ``ctxmodel replay`` like any other; the step sequence
that led there stays in its note.

The machine stays on the required layer and the target's declared policies: it never requires the
reference's own choices (how much to hide, which block to degrade).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from ctxmodel import codec
from ctxmodel.errors import CtxmodelError
from ctxmodel.hypothesis_hooks import generating, set_database_key, set_seed
from ctxmodel.results import Kind
from ctxmodel.targets.base import Target

__all__ = [
    "CLAUSE",
    "REQUIRES",
    "SUMMARY",
    "AgentLoop",
    "LoopFailure",
    "LoopOutcome",
    "agent_loop_machine",
    "run_loop_slice",
]

CLAUSE = "contract §2, §4, §6 (stateful)"
SUMMARY = (
    "An agent session (parallel tool calls, out-of-order results with images, interjections, condensing, "
    "truncation through recover, rewinds): after every step the request passes the oracle, visibility "
    "matches contract §2 and every recovery kept its promises."
)
#: Every target can play: without ``recover`` the truncation step is simply never taken.
REQUIRES: frozenset[str] = frozenset()

SYSTEM_PROMPT = "You are a coding agent."
#: A small reserve and windows a few turns overflow (contract §4 budget: floor(0.9 w) - reserve).
MAX_TOKENS = 200
WINDOWS = (700, 1000, 1400, 6000)
CONVERGE_CALLS = 3
RECOVERY_PREFIX = "Context window recovery failed"
NOTICE_MARK = "[Tool result truncated:"

_TOOLS = ("read_file", "list_files", "execute_command", "browser_action")
_WORDS = ("alpha", "beta", "gamma", "delta", "src/main.py", "def f(x):", "return", "OK", "error:", "42")
#: A 1x1 PNG, the kind of image a screenshot tool returns (base64, domain §1.2).
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


class LoopFailure(AssertionError):
    """A catalogue property failed on one of the loop's exchanges; carries what its fixture needs."""

    def __init__(self, prop: Any, key: str, params: Mapping[str, Any], findings: Sequence[Any], calls: Sequence[Any]):
        super().__init__("; ".join(f.message for f in findings))
        self.prop = prop
        self.key = key
        self.op = prop.op
        self.params = dict(params)
        self.findings = tuple(f.message for f in findings)
        #: The first finding, which names the kind (its fixture says it first).
        self.finding = findings[0]
        self.calls = tuple(calls)
        #: Other properties the same exchange failed (each its own catalogue failure).
        self.also: tuple[str, ...] = ()
        #: The run (1-based) of the machine that met it.
        self.example = 0


_LOOP_ERRORS: dict[str, type[LoopFailure]] = {}


def _loop_error(key: str) -> type[LoopFailure]:
    """A ``LoopFailure`` subclass per kind: Hypothesis keeps failures of different exception types
    apart, so each kind the loop meets is shrunk on its own and replayed last, as in the gate."""
    if key not in _LOOP_ERRORS:
        _LOOP_ERRORS[key] = type(f"LoopFailure[{key}]", (LoopFailure,), {})
    return _LOOP_ERRORS[key]


def _text(seed: int, size: int) -> str:
    """Deterministic filler of about ``size`` characters that tokenizes like tool output."""
    words = [_WORDS[(seed + i * 7) % len(_WORDS)] for i in range(max(1, size // 6))]
    return " ".join(words)[: max(1, size)] or "x"


def _is_marker(message: Mapping[str, Any]) -> bool:
    return message.get("isTruncationMarker") is True


def _visible(messages: list[dict[str, Any]]) -> list[bool]:
    from ctxmodel.visibility import visible_mask

    return visible_mask(codec.load(messages))


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _tool_use_ids(message: Mapping[str, Any]) -> list[str]:
    return [b["id"] for b in _blocks(message) if isinstance(b, dict) and b.get("type") == "tool_use"]


def _result_ids(message: Mapping[str, Any]) -> set[Any]:
    return {b.get("tool_use_id") for b in _blocks(message) if isinstance(b, dict) and b.get("type") == "tool_result"}


def _loop_properties(ops: frozenset[str]) -> dict[str, list[Any]]:
    """The catalogue's properties the loop judges its exchanges with, by the op of the exchange:
    single-exchange checks that every target must meet (warnings and purity are the gate's)."""
    from ctxmodel.properties.registry import select

    out: dict[str, list[Any]] = {}
    for prop in select(ops=("recover", "effective", "request")):
        if prop.warning or not set(prop.requires) <= ops:
            continue
        out.setdefault(prop.op, []).append(prop)
    return out


class AgentLoop(RuleBasedStateMachine):
    """Bound to one target by ``agent_loop_machine``; never run unbound."""

    target: ClassVar[Target]
    policies: ClassVar[Mapping[str, str]]
    tokenizer: ClassVar[str]
    #: Failures seen by this class's runs, the last one being Hypothesis's minimal replay.
    failures: ClassVar[list[tuple[LoopFailure, tuple[str, ...]]]]
    #: The campaign's per-run hook (``begin``, ``saw``, ``failed``), when a slice of a campaign runs
    #: the machine.
    watch: ClassVar[Any] = None
    #: Kinds the campaign holds already: met, they are noted and neither raised nor shrunk
    #: (``runs.RunOptions.known_kinds``), so the loop goes on looking for new ones.
    known: ClassVar[frozenset[str]] = frozenset()
    #: How many runs this class made (one cell, shared by the class's instances).
    runs: ClassVar[list[int]]
    #: Known kinds this class's runs met.
    known_met: ClassVar[set[str]]

    def __init__(self) -> None:
        if self.watch is not None:
            self.watch.begin()
        #: An example, not a shrink step: counted and labelled.
        self.example = not self.failures or generating()
        self.runs[0] += self.example
        super().__init__()
        from ctxmodel.properties.probe import TargetProbe

        self.probe = TargetProbe(self.target, self.policies, self.tokenizer)
        self.props = _loop_properties(self.target.description.ops)
        self.history: list[dict[str, Any]] = []
        self.pending: list[str] = []
        self.serial = 0
        self.clock = 1_700_000_000_000
        self.steps: list[str] = []

    # helpers

    def _next(self) -> int:
        self.serial += 1
        return self.serial

    def _ts(self) -> int:
        self.clock += 1000
        return self.clock

    def _judge(self, op: str, params: dict[str, Any]) -> Any:
        """Make the op's exchange once and judge it with every catalogue property of that op; the
        first failing one fails the step. Returns the exchange (``None`` when the op is not judged)."""
        from ctxmodel.gate import judge_exchange, judge_primary

        props = self.props.get(op, [])
        if not props:
            return None
        start = len(self.probe.calls)
        exchange, fault = judge_primary(props[0], self.probe, params)
        if fault is not None or exchange is None:
            if fault is not None and self._new(props[0], fault):
                self._fail(props[0], [fault], params, start)
            return None
        failing = []
        for prop in props:
            failures = [
                f for f in judge_exchange(prop, self.probe, exchange) if f.severity == "fail" and self._new(prop, f)
            ]
            if failures:
                failing.append((prop, failures))
        if failing:
            self._fail(failing[0][0], failing[0][1], params, start, also=tuple(p.id for p, _ in failing[1:]))
        return exchange

    def _new(self, prop: Any, finding: Any) -> bool:
        """Whether a finding is of a kind the campaign does not hold yet (a known one is noted)."""
        from ctxmodel.results import finding_key

        key = finding_key(prop, finding)
        if key in self.known:
            type(self).known_met.add(key)
            return False
        return True

    def _fail(
        self, prop: Any, findings: Sequence[Any], params: Mapping[str, Any], start: int, also: tuple[str, ...] = ()
    ) -> None:
        from ctxmodel.results import finding_key

        key = finding_key(prop, findings[0])
        findings = [f for f in findings if finding_key(prop, f) == key]
        failure = _loop_error(key)(prop, key, params, findings, self.probe.calls[start:])
        failure.also = also
        failure.example = self.runs[0]
        type(self).failures.append((failure, tuple(self.steps)))
        if self.watch is not None:
            self.watch.failed()
        raise failure

    def teardown(self) -> None:
        if self.watch is not None and self.example:
            from ctxmodel.fuzz.features import features_of

            steps = {"step:" + s.split("(", 1)[0] for s in self.steps}
            self.watch.saw(features_of({"messages": self.history}) | steps)

    def _recompute_pending(self) -> None:
        last = self.history[-1] if self.history else None
        self.pending = _tool_use_ids(last) if last is not None and last.get("role") == "assistant" else []

    # rules

    @initialize(words=st.integers(1, 40))
    def user_starts(self, words: int) -> None:
        self.history.append({"role": "user", "content": _text(self._next(), words * 6), "ts": self._ts()})
        self.steps.append(f"user_starts(words={words})")

    @precondition(lambda self: not self.pending and bool(self.history) and self.history[-1].get("role") == "user")
    @rule(say=st.booleans(), tools=st.integers(0, 3))
    def assistant_turn(self, say: bool, tools: int) -> None:
        blocks: list[dict[str, Any]] = []
        if say or tools == 0:
            blocks.append({"type": "text", "text": _text(self._next(), 60)})
        ids = []
        for k in range(tools):
            tid = f"toolu_{self._next():04d}"
            ids.append(tid)
            blocks.append(
                {"type": "tool_use", "id": tid, "name": _TOOLS[k % len(_TOOLS)], "input": {"path": f"src/f{k}.py"}}
            )
        self.history.append({"role": "assistant", "content": blocks, "ts": self._ts()})
        self.pending = ids
        self.steps.append(f"assistant_turn(say={say}, tools={tools})")

    @precondition(lambda self: bool(self.pending))
    @rule(
        data=st.data(),
        size=st.sampled_from([40, 400, 2400]),
        image=st.booleans(),
        interjection=st.booleans(),
    )
    def tool_results(self, data: st.DataObject, size: int, image: bool, interjection: bool) -> None:
        order = data.draw(st.permutations(self.pending), label="result order")
        errors = data.draw(st.lists(st.booleans(), min_size=len(order), max_size=len(order)), label="is_error")
        blocks: list[dict[str, Any]] = []
        for k, (tid, is_error) in enumerate(zip(order, errors, strict=True)):
            body = _text(self._next(), size if k == 0 else max(20, size // 4))
            content: Any = body
            if image and k == 0:
                content = [{"type": "text", "text": body}, {"type": "image", "source": _image_source()}]
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": content}
            if is_error:
                block["is_error"] = True
            blocks.append(block)
        if interjection:
            blocks.append({"type": "text", "text": "wait, also check the tests"})
        self.history.append({"role": "user", "content": blocks, "ts": self._ts()})
        self.pending = []
        self.steps.append(f"tool_results(order={order}, size={size}, image={image}, interjection={interjection})")

    @precondition(lambda self: not self.pending and bool(self.history) and self.history[-1].get("role") == "assistant")
    @rule(words=st.integers(1, 30))
    def user_interjects(self, words: int) -> None:
        self.history.append({"role": "user", "content": [{"type": "text", "text": _text(self._next(), words * 6)}]})
        self.history[-1]["ts"] = self._ts()
        self.steps.append(f"user_interjects(words={words})")

    @precondition(lambda self: not self.pending and len(self.history) >= 3)
    @rule()
    def condense(self) -> None:
        cid = f"condense-{self._next()}"
        visible = _visible(self.history)
        self.history = [{**m, "condenseParent": cid} if v else m for m, v in zip(self.history, visible, strict=True)]
        self.history.append(
            {
                "role": "user",
                "content": [{"type": "text", "text": "## Conversation Summary\nThe user asked for a fix; files read."}],
                "ts": self._ts(),
                "isSummary": True,
                "condenseId": cid,
            }
        )
        self.steps.append("condense()")

    @precondition(lambda self: "recover" in self.target.description.ops and bool(self.history))
    @rule(window=st.sampled_from(WINDOWS))
    def recover(self, window: int) -> None:
        self.steps.append(f"recover(window={window})")
        params = {
            "messages": copy.deepcopy(self.history),
            "contextWindow": window,
            "maxTokens": MAX_TOKENS,
            "systemPrompt": SYSTEM_PROMPT,
        }
        exchange = self._judge("recover", params)
        result = exchange.result if exchange is not None else None
        if isinstance(result, dict) and result.get("error") is None:
            self.history = copy.deepcopy(result["messages"])
            self._recompute_pending()

    @precondition(lambda self: any(m.get("isSummary") or _is_marker(m) for m in self.history))
    @rule(data=st.data())
    def rewind(self, data: st.DataObject) -> None:
        points = [i for i, m in enumerate(self.history) if m.get("isSummary") or _is_marker(m)]
        k = data.draw(st.sampled_from(points), label="rewind to")
        kind = "summary" if self.history[k].get("isSummary") else "marker"
        self.history = self.history[:k]
        self._recompute_pending()
        self.steps.append(f"rewind(to=messages.{k}, deleting the {kind} and what follows)")

    # checks after every step

    @invariant()
    def request_passes_oracle(self) -> None:
        if self.history:
            self._judge("request", {"messages": copy.deepcopy(self.history)})

    @invariant()
    def visibility_matches(self) -> None:
        if self.history:
            self._judge("effective", {"messages": copy.deepcopy(self.history)})


def _image_source() -> dict[str, Any]:
    return {"type": "base64", "media_type": "image/png", "data": _PNG}


def agent_loop_machine(target: Target, *, policies: Mapping[str, str], tokenizer: str) -> type[AgentLoop]:
    """A machine class bound to ``target``. Its database key names the target, so failures cached
    for one target are never replayed (and then deleted as passing) against another."""
    name = f"AgentLoop[{target.description.name}]"
    machine: type[AgentLoop] = type(
        name,
        (AgentLoop,),
        {"target": target, "policies": dict(policies), "tokenizer": tokenizer, "failures": [], "known_met": set(),
         "runs": [0]},
    )
    set_database_key(machine, f"ctxmodel-agent-loop:{target.description.name}")
    return machine


@attrs.frozen
class LoopOutcome:
    examples: int
    #: One (kind, step sequence) per distinct kind the slice met, in the order first met, each kind's
    #: fixture written.
    found: tuple[tuple[Kind, tuple[str, ...]], ...] = ()

    @property
    def fixture(self) -> str | None:
        """The first kind's fixture (a slice that met one kind has only that one)."""
        path = self.found[0][0].fixture if self.found else None
        return None if path is None else str(path)


def run_loop_slice(
    target: Target,
    *,
    policies: Mapping[str, str],
    tokenizer: str,
    settings: Settings,
    seed: int,
    fixtures_dir: str | Path,
    watch: Any = None,
    known_kinds: frozenset[str] = frozenset(),
) -> LoopOutcome:
    """Run the machine for one campaign slice; each kind met is written as a fixture of the one call
    that broke a promise (replayable by value, contract §8) with the step sequence in its note.
    ``known_kinds`` are met, noted and neither raised nor shrunk. A slice stopped in the middle
    (``gate.Cut`` from ``watch``) still writes the smallest failure of each kind it reached."""
    from hypothesis.reporting import with_reporter

    from ctxmodel.gate import Cut, write_kind

    machine = agent_loop_machine(target, policies=policies, tokenizer=tokenizer)
    machine.watch = watch
    machine.known = frozenset(known_kinds)
    # Not ``hypothesis.seed()``: it also sets ``database=None``, and the campaign's database is the point.
    set_seed(machine, seed)
    try:
        with with_reporter(lambda _: None):
            run_state_machine_as_test(machine, settings=Settings(settings, stateful_step_count=30))
    except (LoopFailure, Cut):
        pass
    except Exception as exc:  # several kinds (an exception group), Flaky replays and health checks
        if not machine.failures:
            raise CtxmodelError(f"agent loop could not run: {type(exc).__name__}: {exc}") from None
    # Hypothesis replays each kind's minimal example last: the last failure of each kind is its own.
    last: dict[str, tuple[LoopFailure, tuple[str, ...]]] = {}
    first: dict[str, int] = {}
    for failure, steps in machine.failures:
        last.pop(failure.key, None)
        last[failure.key] = (failure, steps)
        first.setdefault(failure.key, failure.example)
    found = []
    for failure, steps in sorted(last.values(), key=lambda fs: first[fs[0].key]):
        kind = Kind(failure.key, failure.finding, failure.params, failure.calls, first[failure.key])
        found.append((write_kind(kind, failure.prop, target, policies, tokenizer, seed, fixtures_dir,
                                 ["steps: " + " -> ".join(steps)]), steps))
    return LoopOutcome(machine.runs[0], tuple(found))


AGENT_LOOP_PREFIX = "agent-loop"
