"""Recovery invariants over generated histories (contract §4 rules 1-9; domain §7 C1, C3-C7, C11, C12).

The histories come from a local strategy (tool round trips, parallel calls, list results with
images, orphan results, earlier truncations, condensed summaries, timestamps or none) with budgets
anywhere from impossible to roomy; the real strategies live in ``strategies/``.
"""

from __future__ import annotations

import copy
from collections import Counter as Multiset
from typing import Any, ClassVar

from hypothesis import given
from hypothesis import strategies as st

from ctxmodel.codec import dump, load
from ctxmodel.model import Message, ToolResult
from ctxmodel.normalize import normalize
from ctxmodel.oracle import validate
from ctxmodel.recover import FAILED_PREFIX, FLOOR_CHARS, Recovery, allowed_tokens, notice_text, recover
from ctxmodel.visibility import effective, visible_mask
from tests.unit.test_recover import CharCounter

_words = st.sampled_from(["alpha ", "beta\n", "gamma delta ", "🚀 ", "日本 ", "x" * 50, "line\n" * 5])


@st.composite
def texts(draw: st.DrawFn, big: bool = False) -> str:
    base = "".join(draw(st.lists(_words, min_size=1, max_size=6)))
    size = draw(st.sampled_from([120, 260, 900, 2500, 6000] if big else [20, 80, 300])) + draw(st.integers(-15, 15))
    return (base * (size // len(base) + 1))[:size]


@st.composite
def result_content(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        return draw(texts(big=True))
    items: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "text", "image", "document"]))
        if kind == "text":
            items.append({"type": "text", "text": draw(texts(big=True))})
        elif kind == "image":
            items.append({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}})
        else:
            items.append({"type": "document", "source": {"type": "text", "data": "doc"}})
    return items


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Stored histories with the shapes recovery meets, including defects a real file can hold."""
    out: list[dict[str, Any]] = [{"role": "user", "content": draw(texts())}]
    counter = 0
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(["round", "round", "round", "user", "assistant", "orphan", "marker", "summary"]))
        if kind == "round":
            ids = [f"toolu_{counter + i}" for i in range(draw(st.integers(1, 3)))]
            counter += len(ids)
            call: list[dict[str, Any]] = [{"type": "text", "text": draw(texts())}] if draw(st.booleans()) else []
            call += [{"type": "tool_use", "id": i, "name": "read", "input": {"n": len(i)}} for i in ids]
            out.append({"role": "assistant", "content": call})
            if draw(st.integers(0, 9)) == 0:
                continue  # an interrupted call: its results never came
            res: list[dict[str, Any]] = []
            for i in ids:
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": i, "content": draw(result_content())}
                if draw(st.integers(0, 4)) == 0:
                    block["is_error"] = True
                res.append(block)
            if draw(st.booleans()):
                res.append({"type": "text", "text": draw(texts())})
            out.append({"role": "user", "content": res})
        elif kind == "user":
            out.append({"role": "user", "content": draw(texts(big=draw(st.booleans())))})
        elif kind == "assistant":
            out.append({"role": "assistant", "content": [{"type": "text", "text": draw(texts())}]})
        elif kind == "orphan":
            out.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x"}]}
            )
        elif kind == "marker" and len(out) > 2:
            tid = f"old-{len(out)}"
            for m in out[1 : draw(st.integers(2, len(out)))]:
                if "truncationParent" not in m and not m.get("isTruncationMarker"):
                    m["truncationParent"] = tid
            out.append(
                {
                    "role": "user",
                    "content": f"[Sliding window truncation: 1 messages hidden to reduce context] {tid}",
                    "isTruncationMarker": True,
                    "truncationId": tid,
                }
            )
        elif kind == "summary" and len(out) > 2:
            cid = f"c-{len(out)}"
            for m in out:
                m.setdefault("condenseParent", cid)
            out.append(
                {
                    "role": "user",
                    "content": "## Conversation Summary\n" + draw(texts()),
                    "isSummary": True,
                    "condenseId": cid,
                }
            )
    if draw(st.booleans()):
        for n, m in enumerate(out):
            m["ts"] = 1000 + 10 * n
    return out


try:
    from ctxmodel.tokens import get_counter

    _COUNTERS = ["fake", "fake", "zoo"]
except ImportError:  # the token counter lands separately; the fake keeps these tests meaningful
    _COUNTERS = ["fake"]


def make_counter(name: str) -> Any:
    """The fake counter for easy arithmetic, the real ``zoo`` one for real BPE boundary effects."""
    return CharCounter() if name == "fake" else get_counter(name)


@st.composite
def requests(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    value = draw(histories())
    counter = draw(st.sampled_from(_COUNTERS))
    total = make_counter(counter).count_messages(effective(load(value)))
    if draw(st.integers(0, 9)) == 0:
        target = draw(st.integers(-20, 20))  # no room at all, or next to none
    else:
        target = total * draw(st.integers(15, 105)) // 100 + draw(st.integers(-2, 2))
    max_tokens = draw(st.sampled_from([1000, 0, -1]))
    reserve = max_tokens if max_tokens > 0 else 8192
    window = ((target + reserve) * 10 + 8) // 9
    prompt = draw(st.sampled_from(["", "", "You are helpful.", "s" * 200]))
    return value, {"context_window": window, "max_tokens": max_tokens, "system_prompt": prompt, "counter": counter}


def ids_from(prefix: str) -> Any:
    n = iter(range(1000))
    return lambda: f"{prefix}{next(n)}"


def recovered(value: list[dict[str, Any]], params: dict[str, Any]) -> tuple[Recovery, Any]:
    params = dict(params)
    counter = make_counter(params.pop("counter"))
    before = copy.deepcopy(value)
    history = load(value)
    result = recover(history, counter=counter, new_id=ids_from("new-"), **params)
    assert value == before and dump(history) == before, "recover mutated its input (contract §1)"
    return result, counter


def violations(history: Any) -> Multiset[tuple[str, str]]:
    """Oracle violations keyed by rule and tool id, not position (contract §4 rule 4)."""
    out: Multiset[tuple[str, str]] = Multiset()
    for v in validate(history):
        for i in v.ids or ("",):
            out[(v.rule, i)] += 1
    return out


@given(requests())
def test_fits_or_error_and_progress_or_error(req: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    """Rules 1, 2, 6, 7 (fits), 8, 9: the recount decides, and errors leave the input as it was."""
    value, params = req
    result, counter = recovered(value, params)
    history = load(value)
    assert result.allowed == allowed_tokens(params["context_window"], params["max_tokens"])
    recount = counter.count_text(params["system_prompt"]) + counter.count_messages(effective(result.messages))
    assert result.new_context_tokens == recount
    assert result.prev_context_tokens == counter.count_text(params["system_prompt"]) + counter.count_messages(
        effective(history)
    )
    if result.error is not None:
        assert result.error.startswith(FAILED_PREFIX)
        assert result.messages == history and result.to_json()["messages"] == value
        assert result.messages_removed == 0 and result.truncation_id is None and result.degraded == ()
        assert result.new_context_tokens == result.prev_context_tokens
        assert result.allowed <= 0 or result.prev_context_tokens > result.allowed
        return
    assert result.allowed > 0
    assert result.new_context_tokens <= result.allowed
    if result.prev_context_tokens <= result.allowed:
        assert result.messages == history and result.messages_removed == 0 and result.degraded == ()
    else:
        assert result.new_context_tokens < result.prev_context_tokens


@given(requests())
def test_no_new_pairing_violations(req: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    """Rule 4: every violation of the request from the result was in the request from the input."""
    value, params = req
    result, _ = recovered(value, params)
    history = load(value)
    before, after = violations(effective(history)), violations(effective(result.messages))
    assert not (after - before), f"new violations: {sorted((after - before).elements())}"
    before_n = violations(normalize(effective(history)))
    after_n = violations(normalize(effective(result.messages)))
    assert not (after_n - before_n), f"new violations after normalize: {sorted((after_n - before_n).elements())}"


@given(requests())
def test_tagging_and_marker(req: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    """Rule 3, domain §7 C4, C5, C11: tags only, one marker, never the protected messages."""
    value, params = req
    result, _ = recovered(value, params)
    history = load(value)
    out = result.messages
    if result.truncation_id is None:
        assert len(out) == len(history) and result.messages_removed == 0
        return
    tid = result.truncation_id
    assert len(out) == len(history) + 1
    (marker_at,) = [i for i, m in enumerate(out) if m.truncation_id == tid and m.is_truncation_marker]
    marker = out[marker_at]
    assert marker.role == "user" and marker.content == (
        f"[Sliding window truncation: {result.messages_removed} messages hidden to reduce context]"
    )
    stored = out[:marker_at] + out[marker_at + 1 :]
    first_kept = stored[marker_at]
    assert marker.ts == (first_kept.ts - 1 if first_kept.ts is not None else None)
    mask_in = visible_mask(history)
    visible_in = [i for i, v in enumerate(mask_in) if v]
    tagged = [i for i, m in enumerate(stored) if m.truncation_parent == tid]
    assert len(tagged) == result.messages_removed > 0
    for i in tagged:
        assert mask_in[i], "only visible messages are tagged"
        assert not history[i].is_truncation_marker
        assert i not in (visible_in[0], visible_in[-1])
    last = history[visible_in[-1]]
    prev_visible = history[visible_in[-2]]
    if prev_visible.tool_uses and {r.tool_use_id for r in last.tool_results} & {u.id for u in prev_visible.tool_uses}:
        assert visible_in[-2] not in tagged
    assert mask_in[marker_at] if marker_at < len(history) else True
    # The marker sits right before the first kept visible message; what was hidden is the oldest.
    assert first_kept is stored[marker_at] and visible_mask(out)[marker_at]
    assert all(i < marker_at for i in tagged)
    for i, (a, b) in enumerate(zip(history, stored, strict=True)):
        if i in tagged:
            assert b == a.with_meta(truncationParent=tid)


@given(requests())
def test_degradation_only_shrinks_visible_textual_results(req: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    """Rule 5, domain §7 C7: prefix of at least the floor plus one notice, strictly smaller, nothing else."""
    value, params = req
    result, counter = recovered(value, params)
    if result.error is not None:
        return
    out = result.messages
    mask = visible_mask(out)
    paths = {d.path for d in result.degraded}
    for d in result.degraded:
        assert d.after_chars < d.before_chars and d.after_tokens < d.before_tokens
    stored = [m for m in out if not (m.is_truncation_marker and m.truncation_id == result.truncation_id)]
    offset = 0
    for n, m in enumerate(out):
        if m.is_truncation_marker and m.truncation_id == result.truncation_id:
            offset = 1
            continue
        original: Message = load(value)[n - offset]
        assert m.role == original.role
        if isinstance(m.content, str) or m.content == original.content:
            assert m.content == original.content
            continue
        assert mask[n], "a hidden message was degraded"
        assert isinstance(original.content, tuple) and len(m.content) == len(original.content)
        for b, (new, old) in enumerate(zip(m.content, original.content, strict=True)):
            if new == old:
                continue
            assert isinstance(new, ToolResult) and isinstance(old, ToolResult)
            assert (new.tool_use_id, new.is_error, new.extra) == (old.tool_use_id, old.is_error, old.extra)
            assert counter.raw_block(new) < counter.raw_block(old)
            if isinstance(old.content, str):
                assert isinstance(new.content, str)
                pairs = [(f"messages.{n}.content.{b}.content", new.content, old.content)]
            else:
                assert isinstance(new.content, tuple) and isinstance(old.content, tuple)
                assert [type(x) for x in new.content] == [type(x) for x in old.content]
                pairs = []
                for k, (x, y) in enumerate(zip(new.content, old.content, strict=True)):
                    if x != y:
                        assert getattr(x, "text", None) is not None and getattr(y, "text", None) is not None
                        pairs.append((f"messages.{n}.content.{b}.content.{k}", x.text, y.text))  # type: ignore[union-attr]
            for path, text, old_text in pairs:
                assert path in paths
                keep = len(old_text) - int(text.rsplit("[Tool result truncated: ", 1)[1].split(" ")[0])
                assert keep >= FLOOR_CHARS
                assert text == old_text[:keep] + notice_text(len(old_text) - keep)
                assert len(text) < len(old_text)
    assert len(stored) == len(load(value))


@given(requests())
def test_deterministic_and_stable(req: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    """Domain §7 C12 and C2: same inputs, same output; recovering the result again changes nothing."""
    value, params = req
    a, _ = recovered(value, params)
    b, _ = recovered(value, params)
    assert a == b
    if a.error is None:
        again, _ = recovered(a.to_json()["messages"], params)
        assert again.error is None and again.messages == a.messages and again.truncation_id is None


# -- the tagging and messagesRemoved checks on hand-built replies (contract §4.3, domain §7 C11) --------


class CannedProbe:
    """A probe whose target answers ``recover`` with one fixed reply: the checks judge replies, so a
    reply built by hand pins exactly the case under test."""

    policies: ClassVar[dict[str, str]] = {}
    tokenizer = "zoo"

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply

    def has(self, op: str) -> bool:
        return op == "recover"

    def call(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        return copy.deepcopy(self.reply)


def _msg(role: str, text: str, **meta: Any) -> dict[str, Any]:
    return {"role": role, "content": text, **meta}


#: A restored (dangling) truncation: messages 0 and 1 still carry the id of a marker a rewind deleted.
DANGLING = [
    _msg("user", "task", truncationParent="old"),
    _msg("assistant", "one", truncationParent="old"),
    _msg("user", "two"),
    _msg("assistant", "three"),
    _msg("user", "four"),
]


def _reply(messages: list[dict[str, Any]], removed: int, tid: str | None = "t") -> dict[str, Any]:
    return {"messages": messages, "error": None, "messagesRemoved": removed, "prevContextTokens": 9,
            "newContextTokens": 5, "truncationId": tid}


def _findings(prop_id: str, history: list[dict[str, Any]], reply: dict[str, Any]) -> list[Any]:
    from ctxmodel.properties.catalogue import Exchange
    from ctxmodel.properties.registry import get

    params = {"messages": history, "contextWindow": 10_000, "maxTokens": 100, "systemPrompt": ""}
    probe = CannedProbe(reply)  # only the part of a Probe that the recover checks call on a canned reply
    return list(get(prop_id).check(probe, Exchange("recover", params, copy.deepcopy(reply))))  # type: ignore[arg-type]


def test_reviving_a_dangling_id_counts_as_tagging_what_it_hides() -> None:
    """A marker that reuses a dangling id hides the messages still carrying it: here the first visible
    message, which this call never tagged by hand but hid all the same."""
    marker = _msg("user", "[hidden]", isTruncationMarker=True, truncationId="old")
    out = [*DANGLING[:2], marker, *DANGLING[2:]]
    (finding,) = _findings("recover.tagging-rules", DANGLING, _reply(out, 2, "old"))
    assert finding.severity == "fail" and "first visible message" in finding.message


def test_a_fresh_marker_that_tags_a_middle_message_passes() -> None:
    marker = _msg("user", "[hidden]", isTruncationMarker=True, truncationId="t")
    out = [*DANGLING[:2], {**DANGLING[2], "truncationParent": "t"}, marker, *DANGLING[3:]]
    assert _findings("recover.tagging-rules", DANGLING, _reply(out, 1)) == []
    assert _findings("recover.result-shape", DANGLING, _reply(out, 1)) == []


def test_a_marker_that_hides_nothing_fails() -> None:
    marker = _msg("user", "[0 hidden]", isTruncationMarker=True, truncationId="t")
    (finding,) = _findings("recover.tagging-rules", DANGLING, _reply([*DANGLING, marker], 0))
    assert finding.severity == "fail" and "no message is tagged with" in finding.message


def test_messages_removed_other_than_the_tagged_count_is_a_warning() -> None:
    marker = _msg("user", "[hidden]", isTruncationMarker=True, truncationId="t")
    out = [*DANGLING[:2], {**DANGLING[2], "truncationParent": "t"}, marker, *DANGLING[3:]]
    (finding,) = _findings("recover.result-shape", DANGLING, _reply(out, 2))
    assert finding.severity == "warn" and "messagesRemoved 2" in finding.message
    error = {**_reply(DANGLING, 1, None), "error": "Context window recovery failed: no"}
    (finding,) = _findings("recover.result-shape", DANGLING, error)
    assert finding.severity == "warn" and "controlled error" in finding.message


def test_an_even_cut_across_a_same_role_run_is_a_new_pairing_violation() -> None:
    """Roo-Code's even-rounded half cut (domain §3.3) assumes alternating roles: after two user
    messages in a row it hides a tool_use and keeps its result. The property sees that whenever a
    request has this shape; the zoo's bug_roo_half_split_pairs waits on the strategy drawing it."""
    from ctxmodel.properties.probe import TargetProbe
    from ctxmodel.properties.registry import get
    from ctxmodel.strategies.recovery import count_request
    from ctxmodel.targets import open_target

    history = [
        _msg("user", "task"),
        _msg("user", "word " * 300),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "ls", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]},
        _msg("assistant", "done"),
        _msg("user", "next"),
    ]
    window = next(w for w in range(4096, 100_000) if allowed_tokens(w, 4096) >= count_request(history) - 100)
    params = {"messages": history, "contextWindow": window, "maxTokens": 4096, "systemPrompt": ""}
    probe = TargetProbe(open_target("python:tests.quality.zoo.bug_roo_half_split_pairs"), {}, "zoo")
    (finding,) = get("recover.no-new-pairing-violations").check(probe, probe.exchange("recover", params))
    assert finding.severity == "fail" and "tool_result x has no tool_use" in finding.message
