"""The stateful agent-loop model: a ``RuleBasedStateMachine`` that plays an agent session (issue 6).

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

After every step it checks what contract §2 to §4 require of every target:

- the request the target builds (its ``request``, else its ``normalize`` of its ``effective``,
  ``ctxmodel.properties.probe.TargetProbe.request``) passes ``ctxmodel.oracle.validate`` (contract §6, §7);
- the target's ``effective`` hides what the reference visibility hides (contract §2; a target may
  also drop ``tool_result`` blocks whose ``tool_use`` it hid);
- every ``recover`` kept its promises (contract §4 rules 2 to 8), judged on that call alone.

The machine stays on the required layer and the target's declared policies: it never requires the
reference's own choices (how much to hide, which block to degrade).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs
import hypothesis
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
from ctxmodel.fuzz.results import FailureRecord
from ctxmodel.targets.base import Target, TargetFailure

__all__ = [
    "CLAUSE",
    "REQUIRES",
    "SUMMARY",
    "AgentLoop",
    "LoopFailure",
    "LoopOutcome",
    "agent_loop_machine",
    "check_recovery",
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
    """A broken promise; carries the judged call so the campaign can write it as a fixture."""

    def __init__(self, kind: str, op: str, params: Mapping[str, Any], findings: Sequence[str], calls: Sequence[Any]):
        super().__init__("; ".join(findings))
        self.kind = kind
        self.op = op
        self.params = dict(params)
        self.findings = tuple(findings)
        self.calls = tuple(calls)


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


# -- recovery promises (contract §4) ------------------------------------------------------------


def _violation_keys(messages: list[dict[str, Any]]) -> set[tuple[str, tuple[str, ...]]]:
    from ctxmodel.oracle import validate

    return {(v.rule, tuple(sorted(v.ids))) for v in validate(codec.load(messages))}


def _degraded_ok(before: Any, after: Any, counter: Any) -> str | None:
    """Contract §4 rule 5: only textual tool_result text changes, and each edited text strictly
    shrinks in characters and in tokens. Returns what broke it, or ``None``."""
    if before == after:
        return None
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return "a block was replaced"
    if before.get("type") != "tool_result" or after.get("type") != "tool_result":
        return "a block that is not a tool_result changed"
    if {k: v for k, v in before.items() if k != "content"} != {k: v for k, v in after.items() if k != "content"}:
        return "tool_use_id, is_error or another key of a tool_result changed"
    old, new = before.get("content"), after.get("content")
    pairs: list[tuple[str, str]] = []
    if isinstance(old, str) and isinstance(new, str):
        pairs.append((old, new))
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for a, b in zip(old, new, strict=True):
            if a == b:
                continue
            if not (isinstance(a, dict) and isinstance(b, dict) and a.get("type") == b.get("type") == "text"):
                return "a non-text item of a tool_result changed"
            if {k: v for k, v in a.items() if k != "text"} != {k: v for k, v in b.items() if k != "text"}:
                return "a text item changed other than its text"
            pairs.append((str(a.get("text")), str(b.get("text"))))
    else:
        return "a tool_result's content changed shape"
    for old_text, new_text in pairs:
        if len(new_text) >= len(old_text):
            return f"an edited tool_result text did not shrink ({len(old_text)} -> {len(new_text)} characters)"
        if counter.raw_text(new_text) >= counter.raw_text(old_text):
            return "an edited tool_result text did not shrink in tokens"
    return None


def check_recovery(
    probe: Any,
    params: Mapping[str, Any],
    result: Mapping[str, Any],
    *,
    policies: Mapping[str, str],
) -> list[str]:
    """What one ``recover`` call broke of contract §4 rules 2 to 8 (empty: every promise kept).

    Judged against the input alone, with the harness's recount (the target's ``effective`` when it
    has one) and the reference visibility for "visible" (contract §2: they must agree).
    """
    from ctxmodel.properties.judge import Malformed, messages_of
    from ctxmodel.recover import allowed_tokens

    messages: list[dict[str, Any]] = params["messages"]
    system = str(params.get("systemPrompt", ""))
    allowed = allowed_tokens(int(params["contextWindow"]), int(params["maxTokens"]))
    before = probe.recount(messages, system)
    error = result.get("error")
    try:
        out = messages_of(result, "recover")
    except Malformed as exc:
        return [f"recover: {exc}"]
    if error is not None:
        findings = []
        if not isinstance(error, str) or not error.startswith(RECOVERY_PREFIX):
            findings.append(f"recover: error {error!r} does not start with {RECOVERY_PREFIX!r} (contract §4 rule 8)")
        if out != messages:
            findings.append("recover: a controlled error changed the messages (contract §4 rule 8)")
        if before <= allowed and allowed > 0:
            findings.append(
                f"recover: an error on a history within budget ({before} <= {allowed}) (contract §4 rule 2)"
            )
        return findings
    if before <= allowed:
        if out != messages:
            return [f"recover: changed a history already within budget ({before} <= {allowed}) (contract §4 rule 2)"]
        return []
    findings = _structure_findings(messages, out, result, probe.counter)
    if findings:
        return findings
    after = probe.recount(out, system)
    if after >= before:
        return [f"recover: success without progress: recount {before} -> {after} (contract §4 rule 6)"]
    if policies.get("recoverSuccess", "fits") == "fits" and after > allowed:
        return [f"recover: success over budget: recount {after} > allowed {allowed} (contract §4 rule 7, fits)"]
    if after > allowed:  # converges: within 3 more calls, the budget or a controlled error
        current = out
        for _ in range(CONVERGE_CALLS):
            again = probe.call("recover", {**params, "messages": current})
            if again.get("error") is not None:
                break
            current = messages_of(again, "recover")
            if probe.recount(current, system) <= allowed:
                break
        else:
            return [f"recover: still over budget after {CONVERGE_CALLS} more calls (contract §4 rule 7, converges)"]
    before_req, after_req = _violation_keys(probe.request(messages)), _violation_keys(probe.request(out))
    new = sorted(after_req - before_req)
    if new:
        return [f"recover: the request built from the result has new pairing violations {new} (contract §4 rule 4)"]
    return []


def _structure_findings(
    messages: list[dict[str, Any]], out: list[dict[str, Any]], result: Mapping[str, Any], counter: Any
) -> list[str]:
    """Contract §4 rules 3 and 5: nothing deleted, one marker per truncation, only visible messages
    tagged (never the first or last visible, the tool_use message the last one answers, or earlier
    markers), and only textual tool results degraded."""
    old_markers = {m.get("truncationId") for m in messages if _is_marker(m)}
    new_markers = [i for i, m in enumerate(out) if _is_marker(m) and m.get("truncationId") not in old_markers]
    kept = [m for i, m in enumerate(out) if i not in new_markers]
    if len(new_markers) > 1:
        return [f"recover: {len(new_markers)} new markers in one call (contract §4 rule 3: one per truncation)"]
    if len(kept) != len(messages):
        return [f"recover: {len(messages)} messages in, {len(kept)} kept besides the new marker (contract §4 rule 3)"]
    visible = _visible(messages)
    shown = [i for i, v in enumerate(visible) if v]
    protected: set[int] = set()
    if shown:
        protected |= {shown[0], shown[-1]}
        last = messages[shown[-1]]
        if len(shown) > 1 and messages[shown[-2]].get("role") == "assistant" and _result_ids(last):
            protected.add(shown[-2])
    tag = result.get("truncationId")
    tagged: list[int] = []
    for i, (a, b) in enumerate(zip(messages, kept, strict=True)):
        place = f"messages.{i}"
        if a.get("role") != b.get("role"):
            return [f"recover: {place} changed role (contract §4 rule 3)"]
        meta_a = {k: v for k, v in a.items() if k not in ("content", "truncationParent")}
        meta_b = {k: v for k, v in b.items() if k not in ("content", "truncationParent")}
        if meta_a != meta_b:
            return [f"recover: {place} metadata changed besides truncationParent (contract §4 rule 3)"]
        if a.get("truncationParent") != b.get("truncationParent"):
            tagged.append(i)
            if not visible[i]:
                return [f"recover: {place} was hidden and got tagged again (contract §4 rule 3)"]
            if _is_marker(a):
                return [f"recover: {place} is the marker of an earlier truncation and got tagged (contract §4 rule 3)"]
            if i in protected:
                return [
                    f"recover: {place} is the first or last visible message (or the tool_use message the last "
                    "one answers) and got tagged (contract §4 rule 3)"
                ]
            if b.get("truncationParent") != tag or tag is None:
                return [f"recover: {place} tagged {b.get('truncationParent')!r}, not the call's truncationId {tag!r}"]
        ca, cb = a.get("content"), b.get("content")
        if ca != cb:
            if not visible[i]:
                return [f"recover: {place} is hidden and its content changed (contract §4 rule 5)"]
            if not (isinstance(ca, list) and isinstance(cb, list) and len(ca) == len(cb)):
                return [f"recover: {place} content changed shape (contract §4 rule 5)"]
            for j, (x, y) in enumerate(zip(ca, cb, strict=True)):
                why = _degraded_ok(x, y, counter)
                if why is not None:
                    return [f"recover: {place}.content.{j}: {why} (contract §4 rule 5)"]
    if tagged and not new_markers:
        return ["recover: messages tagged without a marker message (contract §4 rule 3)"]
    if new_markers:
        marker = out[new_markers[0]]
        if marker.get("role") != "user" or marker.get("truncationId") != tag:
            return [
                "recover: the new marker is not a user message carrying the call's truncationId (contract §4 rule 3)"
            ]
    return []


# -- the machine ------------------------------------------------------------------------------


def _visibility_findings(reference: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[str]:
    """Contract §2: the same visible messages, except that a target may drop ``tool_result`` blocks
    whose ``tool_use`` is not in the effective history (and then the message this empties)."""
    uses = {tid for m in reference for tid in _tool_use_ids(m)}
    allowed: list[dict[str, Any]] = []
    for message in reference:
        content = message.get("content")
        if isinstance(content, list):
            kept = [
                b
                for b in content
                if not (isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") not in uses)
            ]
            if len(kept) != len(content):
                if kept:
                    allowed.append({**message, "content": kept})
                continue
        allowed.append(message)
    if theirs in (reference, allowed):
        return []
    n = min(len(reference), len(theirs))
    first = next((i for i in range(n) if reference[i] != theirs[i]), n)
    return [
        f"effective: {len(theirs)} messages where contract §2 makes {len(reference)} visible; first difference at "
        f"messages.{first} (a parent that no longer exists hides nothing)"
    ]


class AgentLoop(RuleBasedStateMachine):
    """Bound to one target by ``agent_loop_machine``; never run unbound."""

    target: ClassVar[Target]
    policies: ClassVar[Mapping[str, str]]
    tokenizer: ClassVar[str]
    #: Failures seen by this class's runs, the last one being Hypothesis's minimal replay.
    failures: ClassVar[list[tuple[LoopFailure, tuple[str, ...]]]]
    #: The campaign's per-example hook (``campaign._Watch``), when a campaign runs the machine.
    watch: ClassVar[Any] = None

    def __init__(self) -> None:
        if self.watch is not None:
            self.watch.begin()
        super().__init__()
        from ctxmodel.properties.probe import TargetProbe

        self.probe = TargetProbe(self.target, self.policies, self.tokenizer)
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

    def _fail(self, kind: str, op: str, params: Mapping[str, Any], findings: Sequence[str]) -> None:
        failure = LoopFailure(kind, op, params, findings, self.probe.calls[-4:])
        type(self).failures.append((failure, tuple(self.steps)))
        if self.watch is not None:
            self.watch.failed()
        raise failure

    def teardown(self) -> None:
        if self.watch is not None:
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
        try:
            result = self.probe.call("recover", params)
            findings = check_recovery(self.probe, params, result, policies=self.policies)
        except (TargetFailure, CtxmodelError) as exc:
            self._fail("recover", "recover", params, [f"recover: the target did not answer usably: {exc}"])
            return
        if findings:
            self._fail("recover", "recover", params, findings)
        if result.get("error") is None:
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
        if not self.history:
            return
        from ctxmodel.oracle import validate

        params = {"messages": copy.deepcopy(self.history)}
        try:
            request = self.probe.request(params["messages"])
            violations = validate(codec.load(request))
        except (TargetFailure, CtxmodelError) as exc:
            self._fail("request", self._request_op(), params, [f"request: the target did not answer usably: {exc}"])
            return
        if violations:
            self._fail(
                "request",
                self._request_op(),
                params,
                [f"request: {v.path}: {v.message} ({v.rule})" for v in violations[:5]],
            )

    @invariant()
    def visibility_matches(self) -> None:
        if not self.history or "effective" not in self.target.description.ops:
            return
        from ctxmodel.visibility import effective

        params = {"messages": copy.deepcopy(self.history)}
        reference = codec.dump(effective(codec.load(self.history)))
        try:
            theirs = self.probe.effective(params["messages"])
        except (TargetFailure, CtxmodelError) as exc:
            self._fail("effective", "effective", params, [f"effective: the target did not answer usably: {exc}"])
            return
        findings = _visibility_findings(reference, theirs)
        if findings:
            self._fail("effective", "effective", params, findings)

    def _request_op(self) -> str:
        return "request" if "request" in self.target.description.ops else "normalize"


def _image_source() -> dict[str, Any]:
    return {"type": "base64", "media_type": "image/png", "data": _PNG}


def agent_loop_machine(target: Target, *, policies: Mapping[str, str], tokenizer: str) -> type[AgentLoop]:
    """A machine class bound to ``target``. Its database key names the target, so failures cached
    for one target are never replayed (and then deleted as passing) against another."""
    name = f"AgentLoop[{target.description.name}]"
    machine: type[AgentLoop] = type(
        name,
        (AgentLoop,),
        {"target": target, "policies": dict(policies), "tokenizer": tokenizer, "failures": []},
    )
    key = f"ctxmodel-agent-loop:{target.description.name}".encode()
    machine._hypothesis_internal_add_digest = key
    return machine


@attrs.frozen
class LoopOutcome:
    examples: int
    failure: FailureRecord | None = None
    fixture: str | None = None


def run_loop_slice(
    target: Target,
    *,
    policies: Mapping[str, str],
    tokenizer: str,
    settings: Settings,
    seed: int,
    fixtures_dir: str | Path,
    watch: Any = None,
) -> LoopOutcome:
    """Run the machine for one campaign slice; a failure is written as a fixture of the one call
    that broke a promise (replayable by value, contract §8) with the step sequence in its note."""
    from hypothesis.reporting import with_reporter

    from ctxmodel.fixtures import Fixture, exchanges_json, fixture_name, found_now, write_atomic

    machine = agent_loop_machine(target, policies=policies, tokenizer=tokenizer)
    machine.watch = watch
    # Not ``hypothesis.seed()``: it also sets ``database=None``, and the campaign's database is the point.
    machine._hypothesis_internal_use_seed = seed
    try:
        with with_reporter(lambda _: None):
            run_state_machine_as_test(machine, settings=Settings(settings, stateful_step_count=30))
    except LoopFailure:
        pass
    except Exception as exc:  # Flaky replays and health checks are reported as they are
        if not machine.failures:
            raise CtxmodelError(f"agent loop could not run: {type(exc).__name__}: {exc}") from None
    runs = 0 if watch is None else int(watch.examples)
    if not machine.failures:
        return LoopOutcome(runs)
    failure, steps = machine.failures[-1]
    prop_id = _replayable_as(failure, target, policies, tokenizer) or f"{AGENT_LOOP_PREFIX}.{failure.kind}"
    fixture = Fixture(
        property=prop_id,
        op=failure.op,
        params=failure.params,
        observed=exchanges_json(failure.calls),
        target={"name": target.description.name, "version": target.description.version},
        policies=dict(policies),
        tokenizer=tokenizer,
        found=found_now(seed, hypothesis.__version__),
        note="\n".join([*failure.findings, CLAUSE, "steps: " + " -> ".join(steps)]),
    )
    path = write_atomic(Path(fixtures_dir) / fixture_name(prop_id, failure.params), fixture.to_json())
    judged = [c for c in failure.calls if c.op == failure.op] or list(failure.calls)
    last = judged[-1] if judged else None
    record = FailureRecord(
        property=AGENT_LOOP_PREFIX,
        op=failure.op,
        clause=CLAUSE,
        findings=failure.findings,
        params=failure.params,
        observed=None if last is None else last.result,
        target_failure=None if last is None else last.failure,
        worker=0,
        found_at=0.0,
        examples_until_failure=0,
        steps=steps,
    )
    return LoopOutcome(runs, record, str(path))


AGENT_LOOP_PREFIX = "agent-loop"


def _replayable_as(failure: LoopFailure, target: Target, policies: Mapping[str, str], tokenizer: str) -> str | None:
    """The id of a registered single-call property that fails on the same call, if one does: the
    fixture then replays by value with ``ctxmodel replay`` like any other (contract §8). The step
    sequence stays in the note; ``agent-loop.<kind>`` is kept when no suite property sees it."""
    from ctxmodel.gate import judge
    from ctxmodel.properties.catalogue import select

    ops = {"request": ("request", "normalize"), "effective": ("effective",), "recover": ("recover",)}[failure.kind]
    for prop in select(ops=ops):
        if not set(prop.requires) <= set(target.description.ops):
            continue
        verdict = judge(prop, target, copy.deepcopy(failure.params), policies=policies, tokenizer=tokenizer)
        if verdict.failed:
            return prop.id
    return None
