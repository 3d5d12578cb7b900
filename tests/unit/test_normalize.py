"""Pairing normalization (contract §3, domain §4.1-§4.5, §7 A): each rule, the reference choices, properties."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmodel.codec import dump, load
from ctxmodel.errors import CtxmodelError
from ctxmodel.model import Message, ToolResult
from ctxmodel.normalize import SYNTHETIC_TEXT, NormalizeReport, normalize, normalize_report

J = dict[str, Any]


def tu(tid: str, name: str = "run") -> J:
    return {"type": "tool_use", "id": tid, "name": name, "input": {"cmd": tid}}


def tr(tid: str, content: Any = "ok", **extra: Any) -> J:
    out: J = {"type": "tool_result", "tool_use_id": tid}
    if content is not None:
        out["content"] = content
    out.update(extra)
    return out


def txt(text: str) -> J:
    return {"type": "text", "text": text}


IMG: J = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
THINK: J = {"type": "thinking", "thinking": "hmm", "signature": "sig"}


def u(*content: J | str, **meta: Any) -> J:
    if len(content) == 1 and isinstance(content[0], str):
        return {"role": "user", "content": content[0], **meta}
    return {"role": "user", "content": list(content), **meta}


def a(*content: J | str, **meta: Any) -> J:
    if len(content) == 1 and isinstance(content[0], str):
        return {"role": "assistant", "content": content[0], **meta}
    return {"role": "assistant", "content": list(content), **meta}


def synth(tid: str) -> J:
    return {"type": "tool_result", "tool_use_id": tid, "content": SYNTHETIC_TEXT, "is_error": True}


def norm(value: list[J], **kw: str) -> list[J]:
    return dump(normalize(load(value), **kw))


def report(value: list[J], **kw: str) -> tuple[list[J], NormalizeReport]:
    out, rep = normalize_report(load(value), **kw)
    return dump(out), rep


# --- unit tests, rule by rule ---------------------------------------------------------------------


def test_well_formed_history_comes_back_identical() -> None:
    """§3 rule 7 / domain §7 A10: nothing to repair means the same objects back, nothing reported."""
    h = load([u("go"), a(THINK, txt("calling"), tu("t1"), tu("t2")), u(tr("t1"), tr("t2", [txt("x")]), txt("k"))])
    out, rep = normalize_report(h)
    assert out == h and all(x is y for x, y in zip(out, h, strict=True))
    assert not rep.changed and rep.lines() == []


def test_empty_history() -> None:
    out, rep = normalize_report(())
    assert out == () and not rep.changed


def test_rule1_interleaved_results_move_to_front() -> None:
    """§3 rule 1 (Zoo-Code #1774 shape, domain §4.3): results first, other blocks keep their order."""
    out, rep = report([u("q"), a(tu("a"), tu("b")), u(tr("a"), IMG, tr("b"), txt("t"))])
    assert out[2]["content"] == [tr("a"), tr("b"), IMG, txt("t")]
    assert rep.results_moved == ("b",) and rep.results_moved_at == (2,)
    assert "moved 1 result to the front: b (messages.2)" in rep.lines()


def test_rule1_results_in_tool_use_order() -> None:
    """Reference: results in ``tool_use`` order (the Bedrock-safe ``resultOrder``)."""
    out, rep = report([u("q"), a(tu("a"), tu("b")), u(tr("b", "B"), tr("a", "A"))])
    assert out[2]["content"] == [tr("a", "A"), tr("b", "B")]
    assert set(rep.results_moved) == {"a", "b"}


def test_rule1_dropping_an_orphan_is_not_a_move() -> None:
    _, rep = report([u("q"), a(tu("a")), u(tr("zz"), tr("a"))])
    assert rep.results_moved == () and rep.orphans_dropped == ("zz",)


def test_rule2_duplicate_results_first_wins() -> None:
    """§3 rule 2: one valid result per id, the first, content and is_error unchanged."""
    out, rep = report([u("q"), a(tu("a")), u(tr("a", "first", is_error=False), tr("a", "second"), txt("t"))])
    assert out[2]["content"] == [tr("a", "first", is_error=False), txt("t")]
    assert rep.duplicate_results_dropped == ("a",)
    assert "dropped 1 duplicate result: a (messages.2)" in rep.lines()


def test_rule2_valid_result_keeps_extra_keys_and_content_forms() -> None:
    block = tr("a", [txt("x"), IMG], is_error=True, cache_control={"type": "ephemeral"})
    out = norm([u("q"), a(tu("a"), tu("b")), u(tr("b", None), block)])
    assert out[2]["content"] == [block, tr("b", None)]


def test_rule3_missing_result_synthesized_in_tool_use_order() -> None:
    """§3 rule 3 with the reference's exact synthetic block."""
    out, rep = report([u("q"), a(tu("a"), tu("b"), tu("c")), u(tr("b"), txt("t"))])
    assert out[2]["content"] == [synth("a"), tr("b"), synth("c"), txt("t")]
    assert rep.synthesized == ("a", "c")
    assert "synthesized 2 results: a, c" in rep.lines()


def test_rule3_inserts_user_message_between_assistants() -> None:
    """§3 rule 3: next message not a user message -> a user message with only role and content."""
    out, rep = report([u("q", ts=1), a(tu("a"), ts=2), a("more", ts=3)])
    assert out == [u("q", ts=1), a(tu("a"), ts=2), u(synth("a")), a("more", ts=3)]
    assert rep.messages_inserted == (2,) and rep.synthesized == ("a",)
    assert "inserted message #2" in rep.lines()


def test_rule3_string_user_message_after_tool_use() -> None:
    """§3 rule 6: string content becomes a text block after the results only because results are added."""
    out = norm([u("q"), a(tu("a")), u("hello", ts=4)])
    assert out[2] == u(synth("a"), txt("hello"), ts=4)


def test_rule3_empty_user_message_after_tool_use_gets_results_only() -> None:
    """Adding results must not create an empty text block (a defect we would have made)."""
    assert norm([u("q"), a(tu("a")), u("")])[2] == u(synth("a"))
    assert norm([u("q"), a(tu("a")), {"role": "user", "content": []}])[2] == u(synth("a"))


def test_rule3_assistant_string_content_needs_nothing() -> None:
    h = [u("q"), a("plain"), u("next")]
    assert norm(h) == h


def test_rule4_orphans_dropped_by_default() -> None:
    """§3 rule 4 ``drop``: message 0 and a user message after a user message hold only orphans."""
    out, rep = report([u(tr("x"), txt("hi")), a("ok"), u(tr("y"), txt("t"))])
    assert out == [u(txt("hi")), a("ok"), u(txt("t"))]
    assert rep.orphans_dropped == ("x", "y") and rep.orphans_dropped_at == (0, 2)


def test_rule4_results_split_across_two_user_messages() -> None:
    """The second message's results are orphans by adjacency; its emptied message is removed."""
    out, rep = report([u("q"), a(tu("a"), tu("b")), u(tr("a")), u(tr("b")), a("done")])
    assert out == [u("q"), a(tu("a"), tu("b")), u(tr("a"), synth("b")), a("done")]
    assert rep.orphans_dropped == ("b",) and rep.messages_removed == (3,) and rep.synthesized == ("b",)


def test_rule4_orphans_to_text_kept_in_place() -> None:
    """Reference ``to_text``: "Tool result:\\n" + content, where the result was among non-result blocks."""
    h = [u("q"), a(tu("a")), u(txt("before"), tr("x", "out"), tr("a"), IMG)]
    out, rep = report(h, orphans="to_text")
    assert out[2]["content"] == [tr("a"), txt("before"), txt("Tool result:\nout"), IMG]
    assert rep.orphans_to_text == ("x",)
    assert "turned 1 orphan result to text: x (messages.2)" in rep.lines()


def test_rule4_to_text_list_content_is_compact_json() -> None:
    items = [txt("é ok"), IMG]
    out = norm([u(tr("x", items))], orphans="to_text")
    body = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
    assert out == [u(txt("Tool result:\n" + body))]
    assert "é ok" in out[0]["content"][0]["text"]


def test_rule4_to_text_absent_content_is_empty_string() -> None:
    assert norm([u(tr("x", None))], orphans="to_text") == [u(txt("Tool result:\n"))]


def test_rule4_any_and_relabel_are_honoured_by_dropping() -> None:
    h = [u(tr("x"), txt("t"))]
    assert norm(h, orphans="any") == norm(h, orphans="relabel") == [u(txt("t"))]


def test_rule4_orphan_not_reattached_after_rule5_removal() -> None:
    """Validity is judged against the input neighbour: rule 5 removing a message must not pair an orphan."""
    h = [u("q"), a(tu("a")), u(tr("a")), a(tu("x")), a(tu("a")), u(tr("x"), txt("t"))]
    out, rep = report(h)
    # message 4 (repeat of "a") is emptied and removed; message 5's "x" answered nothing next to it.
    assert out == [u("q"), a(tu("a")), u(tr("a")), a(tu("x")), u(synth("x"), txt("t"))]
    assert rep.duplicate_tool_uses_removed == ("a",) and rep.messages_removed == (4,)
    assert rep.orphans_dropped == ("x",) and rep.synthesized == ("x",)


def test_rule5_cross_message_duplicate_removed_with_its_results() -> None:
    """§3 rule 5: a later message's repeat goes, and so do its results."""
    h = [u("q"), a(tu("a")), u(tr("a", "1")), a(tu("a"), tu("b")), u(tr("a", "2"), tr("b"))]
    out, rep = report(h)
    assert out == [u("q"), a(tu("a")), u(tr("a", "1")), a(tu("b")), u(tr("b"))]
    assert rep.duplicate_tool_uses_removed == ("a",) and rep.duplicate_tool_uses_removed_at == (3,)
    assert rep.duplicate_results_dropped == ("a",) and rep.duplicate_results_dropped_at == (4,)
    assert "removed 1 duplicate tool_use: a (messages.3)" in rep.lines()


def test_rule5_within_one_message_result_stays_with_first() -> None:
    out, rep = report([u("q"), a(tu("a"), tu("a")), u(tr("a", "1"), tr("a", "2"))])
    assert out == [u("q"), a(tu("a")), u(tr("a", "1"))]
    assert rep.duplicate_tool_uses_removed == ("a",) and rep.duplicate_results_dropped == ("a",)


def test_rule5_emptied_messages_removed_and_pairing_restored() -> None:
    """Removing an emptied user message puts an assistant after a tool_use message: a user message is inserted."""
    h = [u("q"), a(tu("a")), u(tr("a")), a(tu("a"), tu("b")), u(tr("a")), a("next")]
    out, rep = report(h)
    assert out == [u("q"), a(tu("a")), u(tr("a")), a(tu("b")), u(synth("b")), a("next")]
    assert rep.messages_removed == (4,) and rep.messages_inserted == (4,)
    assert normalize(normalize(load(h))) == normalize(load(h))


def test_rule5_emptied_assistant_removed() -> None:
    h = [u("q"), a(tu("a")), u(tr("a")), a(tu("a")), u(tr("a"), txt("t"))]
    out, rep = report(h)
    assert out == [u("q"), a(tu("a")), u(tr("a")), u(txt("t"))]
    assert rep.messages_removed == (3,)
    assert "removed emptied message #3" in rep.lines()


def test_rule5_tool_use_outside_assistant_passes_through() -> None:
    """A tool_use in a user message is a rule 8 defect, not a pairing one."""
    h = [u(tu("a")), a(tu("a")), u(tr("a"))]
    assert norm(h) == h


def test_rule6_thinking_first_and_metadata_kept() -> None:
    """§3 rule 6: thinking blocks stay first and unchanged; metadata keys kept on every message."""
    h = [u("q", ts=1, custom={"k": [1]}), a(THINK, tu("a"), tu("a"), ts=2, id="resp_1"), u(tr("a"), ts=3, z=None)]
    out = norm(h)
    assert out[1] == a(THINK, tu("a"), ts=2, id="resp_1")
    assert out[0] == h[0] and out[2] == h[2]


def test_rule6_no_message_left_empty() -> None:
    out, rep = report([u("q"), a("r"), u(tr("x")), u(tr("y"), tr("z")), a("s")])
    assert out == [u("q"), a("r"), a("s")]
    assert rep.messages_removed == (2, 3)
    assert "removed emptied messages #2, #3" in rep.lines()


def test_rule8_other_defects_pass_through() -> None:
    """§3 rule 8: empty text, already-empty messages, bad ids, results in assistant messages pass."""
    h = [
        u(txt(""), txt("x")),
        a("", ts=1),
        {"role": "user", "content": []},
        a(tu("bad id!"), tr("zz"), txt(" ")),
        u(tr("bad id!")),
        u(""),
    ]
    out, rep = report(h)
    assert out == h and not rep.changed


def test_trailing_leave_and_close() -> None:
    """Policy ``trailing``: ``leave`` keeps pending results pending; ``close`` appends synthetic ones."""
    h = [u("q"), a(txt("t"), tu("a"), tu("b"))]
    assert norm(h) == h
    out, rep = report(h, trailing="close")
    assert out == [*h, u(synth("a"), synth("b"))]
    assert rep.messages_inserted == (2,)
    assert norm(out, trailing="close") == out


def test_trailing_close_leaves_closed_history() -> None:
    h = [u("q"), a(tu("a")), u(tr("a"))]
    assert norm(h, trailing="close") == h


def test_unknown_policy_is_a_one_line_error() -> None:
    with pytest.raises(CtxmodelError, match=r"orphans='keep'"):
        normalize((), orphans="keep")
    with pytest.raises(CtxmodelError, match=r"trailing='open'"):
        normalize((), trailing="open")


def test_input_not_mutated_and_created_messages_carry_only_role_content() -> None:
    h = [u("q"), a(tu("a"), custom=[1]), a("x")]
    hist = load(h)
    before = copy.deepcopy(dump(hist))
    out = normalize(hist)
    assert dump(hist) == before
    assert dict(out[2].meta) == {} and out[2].role == "user"


# --- property tests ---------------------------------------------------------------------------------

_IDS = ["t1", "t2", "t3", "t4"]


@st.composite
def _result(draw: st.DrawFn, clean: bool) -> J:
    tid = draw(st.sampled_from(_IDS))
    content = draw(
        st.one_of(
            st.none(),
            st.sampled_from(["out", "other", "é"] + ([] if clean else [""])),
            st.lists(st.sampled_from([txt("item"), IMG]), max_size=2),
        )
    )
    block = tr(tid, content, **({"is_error": draw(st.booleans())} if draw(st.booleans()) else {}))
    if draw(st.integers(0, 5)) == 0:
        block["cache_control"] = {"type": "ephemeral"}
    return block


@st.composite
def histories(draw: st.DrawFn, clean: bool = False) -> list[J]:
    """Small histories dense in pairing defects; ``clean`` leaves out every rule 8 defect."""
    texts = ["hi", "note"] + ([] if clean else ["", " "])
    out: list[J] = []
    size = draw(st.integers(0, 7))
    for i in range(size):
        role = "user" if clean and i == 0 else draw(st.sampled_from(["user", "assistant"]))
        meta: J = {}
        if draw(st.booleans()):
            meta["ts"] = i
        if draw(st.integers(0, 4)) == 0:
            meta["custom"] = {"n": i}
        if draw(st.integers(0, 3)) == 0:
            out.append({"role": role, "content": draw(st.sampled_from(texts)), **meta})
            continue
        blocks: list[J] = []
        if role == "assistant":
            if not clean and draw(st.integers(0, 3)) == 0:
                blocks.append(THINK)
            for _ in range(draw(st.integers(0, 3))):
                kind = draw(st.sampled_from(["tool_use", "tool_use", "text"] + ([] if clean else ["result"])))
                if kind == "tool_use":
                    blocks.append(tu(draw(st.sampled_from(_IDS))))
                elif kind == "text":
                    blocks.append(txt(draw(st.sampled_from(texts))))
                else:
                    blocks.append(draw(_result(clean)))
        else:
            for _ in range(draw(st.integers(0, 4))):
                kind = draw(st.sampled_from(["result", "result", "text", "image"]))
                if kind == "result":
                    blocks.append(draw(_result(clean)))
                elif kind == "text":
                    blocks.append(txt(draw(st.sampled_from(texts))))
                else:
                    blocks.append(IMG)
        if clean and not blocks:
            blocks.append(txt("hi"))
        out.append({"role": role, "content": blocks, **meta})
    return out


_POLICIES = st.fixed_dictionaries(
    {"orphans": st.sampled_from(["drop", "to_text"]), "trailing": st.sampled_from(["leave", "close"])}
)


def _is_synthetic(block: J) -> bool:
    return block == synth(block["tool_use_id"])


def _uses(m: J) -> list[str]:
    if m["role"] != "assistant" or isinstance(m["content"], str):
        return []
    return [b["id"] for b in m["content"] if b["type"] == "tool_use"]


def _results(m: J) -> list[J]:
    if m["role"] != "user" or isinstance(m["content"], str):
        return []
    return [b for b in m["content"] if b["type"] == "tool_result"]


def _check_pairing(out: list[J], trailing: str) -> None:
    """Contract §3 rules 1 and 4 (domain §7 A1-A4), checked on the raw output."""
    seen: set[str] = set()
    for i, m in enumerate(out):
        uses = _uses(m)
        assert len(set(uses)) == len(uses) and not seen & set(uses), f"rule 5 at messages.{i}"
        seen |= set(uses)
        if uses and i + 1 < len(out):
            nxt = out[i + 1]
            assert nxt["role"] == "user" and isinstance(nxt["content"], list), f"rule 1 at messages.{i + 1}"
            lead = [b["tool_use_id"] for b in nxt["content"][: len(uses)] if b["type"] == "tool_result"]
            assert lead == uses, f"rule 1 at messages.{i + 1}"
        if uses and i + 1 == len(out):
            assert trailing == "leave"
        results = _results(m)
        prev_uses = _uses(out[i - 1]) if i > 0 else []
        assert [r["tool_use_id"] for r in results] == prev_uses[: len(results)], f"rule 4 at messages.{i}"
        if results:
            assert m["content"][: len(results)] == results, f"rules 1/4 at messages.{i}"


def _valid_results(value: list[J]) -> dict[str, list[J]]:
    """Input results valid by adjacency, by id, in order, for ids whose tool_use survives rule 5."""
    seen: set[str] = set()
    out: dict[str, list[J]] = {}
    for i, m in enumerate(value):
        uses = _uses(m)
        first = [t for t in dict.fromkeys(uses) if t not in seen]
        seen |= set(uses)
        if first and i + 1 < len(value):
            for r in _results(value[i + 1]):
                if r["tool_use_id"] in first:
                    out.setdefault(r["tool_use_id"], []).append(r)
    return out


@given(histories(), _POLICIES)
def test_properties_of_normalize(value: list[J], policies: dict[str, str]) -> None:
    h = load(value)
    before = copy.deepcopy(dump(h))
    result, rep = normalize_report(h, **policies)
    out = dump(result)

    # §1 purity: the input, nested objects included, is unchanged.
    assert dump(h) == before
    # §3 rule 7: idempotent.
    again, rep2 = normalize_report(result, **policies)
    assert again == result and not rep2.changed
    # The report says something changed exactly when something did.
    assert rep.changed == (result != h)
    # §3 rules 1, 4, 5 on the output.
    _check_pairing(out, policies["trailing"])

    # §3 rule 6: kept messages map in order onto input messages; role and metadata kept; none emptied.
    kept_in = [i for i in range(len(value)) if i not in rep.messages_removed]
    kept_out = [i for i in range(len(out)) if i not in rep.messages_inserted]
    assert len(kept_in) == len(kept_out)
    for i, o in zip(kept_in, kept_out, strict=True):
        src, dst = value[i], out[o]
        assert {k: v for k, v in src.items() if k != "content"} == {k: v for k, v in dst.items() if k != "content"}
        if not dst["content"]:
            assert not src["content"], f"messages.{i} emptied"
    for o in rep.messages_inserted:
        assert set(out[o]) == {"role", "content"} and out[o]["role"] == "user"
        assert out[o]["content"] and all(_is_synthetic(b) for b in out[o]["content"])
    for i in rep.messages_removed:
        assert value[i]["content"], f"removed messages.{i} was already empty (rule 8 pass-through)"

    # §3 rule 2 / domain §7 A6: a kept result is the first valid input result of its id, unchanged.
    valid = _valid_results(value)
    for m in out:
        for r in _results(m):
            tid = r["tool_use_id"]
            if tid in valid:
                assert r == valid[tid][0], f"result for {tid} re-labelled or not the first"
            else:
                # §3 rule 3 / A7: synthetic only where no valid result exists.
                assert _is_synthetic(r), f"result for {tid} came from nowhere"
    assert not set(rep.synthesized) & set(valid)
    # Every assistant block survives except rule 5's repeats; thinking stays first.
    for i, o in zip(kept_in, kept_out, strict=True):
        if value[i]["role"] == "assistant" and isinstance(value[i]["content"], list):
            src_blocks = [b for b in value[i]["content"] if b["type"] != "tool_use"]
            dst_blocks = [b for b in out[o]["content"] if b["type"] != "tool_use"]
            assert src_blocks == dst_blocks


@given(histories())
def test_to_text_differs_from_drop_only_by_the_orphan_texts(value: list[J]) -> None:
    """§3 rule 4 ``to_text``: each orphan becomes one text block, where it was; nothing else changes.

    Removing the created texts from the ``to_text`` output (and the messages left empty) gives the
    ``drop`` output, and each created text holds a result's content (list content as compact JSON).
    """
    as_text, rep = normalize_report(load(value), orphans="to_text")
    dropped, rep_drop = normalize_report(load(value))
    assert rep_drop.orphans_dropped == rep.orphans_to_text
    contents = {
        json.dumps(r.get("content", ""), separators=(",", ":"), ensure_ascii=False) for m in value for r in _results(m)
    }
    contents |= {r.get("content", "") for m in value for r in _results(m) if isinstance(r.get("content", ""), str)}
    stripped: list[J] = []
    created = 0
    for m in dump(as_text):
        if isinstance(m["content"], list):
            keep = [b for b in m["content"] if not (b["type"] == "text" and b["text"].startswith("Tool result:\n"))]
            for b in m["content"]:
                if b not in keep:
                    assert b["text"].removeprefix("Tool result:\n") in contents
            created += len(m["content"]) - len(keep)
            if m["content"] and not keep:
                continue
            m = {**m, "content": keep}
        stripped.append(m)
    assert created == len(rep.orphans_to_text)
    assert stripped == dump(dropped)


@given(histories(clean=True), _POLICIES)
def test_oracle_accepts_normalized_clean_histories(value: list[J], policies: dict[str, str]) -> None:
    """Without rule 8 defects, the request normalize builds passes the API oracle (contract §6).

    One exception the contract implies: rule 6 removes a message normalization empties, so when the
    first message held only orphans, an assistant message can end up first (domain §7 A13 is not a
    §3 requirement).
    """
    oracle = pytest.importorskip("ctxmodel.oracle")
    result, rep = normalize_report(load(value), **policies)
    violations = oracle.validate(result)
    if 0 in rep.messages_removed:
        violations = [v for v in violations if v.rule != "first-message-not-user"]
    if not result:  # nothing to send (every message was orphans): the request of nothing is refused
        violations = [v for v in violations if v.rule != "empty-messages"]
    assert violations == []


@given(histories(), _POLICIES)
def test_oracle_finds_no_pairing_violation_in_any_output(value: list[J], policies: dict[str, str]) -> None:
    """Whatever other defects pass through (rule 8), no pairing rule of the oracle fires on the output."""
    oracle = pytest.importorskip("ctxmodel.oracle")
    pairing = {
        "missing-tool-result",
        "tool-result-not-first",
        "unexpected-tool-use-id",
        "duplicate-tool-result",
        "duplicate-tool-use-id",
    }
    result = normalize(load(value), **policies)
    violations = [v for v in oracle.validate(result) if v.rule in pairing]
    # A tool_result inside an assistant message (rule 8) is the oracle's concern, not a pairing repair.
    assert not [v for v in violations if not _in_assistant(result, v.path)]


def _in_assistant(result: tuple[Message, ...], path: str) -> bool:
    parts = path.split(".")
    return len(parts) >= 2 and parts[1].isdigit() and result[int(parts[1])].role == "assistant"


def test_synthetic_result_shape() -> None:
    block = normalize(load([u("q"), a(tu("x"))]), trailing="close")[2].content[0]
    assert isinstance(block, ToolResult)
    assert block.content == SYNTHETIC_TEXT and block.is_error is True


def test_report_lines_name_every_change_with_its_place() -> None:
    """The CLI's ``normalize --report`` lines (what a user debugging a 400 reads): one line per kind of
    change, singular and plural, each id with the input message it was found in."""
    one = [u("q"), a(tu("a")), u(tr("a")), a(tu("x")), a(tu("a")), u(tr("x"), txt("t"))]
    assert report(one)[1].lines() == [
        "removed 1 duplicate tool_use: a (messages.4)",
        "dropped 1 orphan result: x (messages.5)",
        "synthesized 1 result: x",
        "removed emptied message #4",
    ]
    many = [
        u(tr("o1"), tr("o2"), txt("hi")),
        a(tu("a"), tu("b"), tu("c")),
        u(txt("t"), tr("b"), tr("a")),
        a(tu("a"), tu("b"), tu("d"), tu("e")),
        u(tr("a"), tr("b"), txt("x")),
        a(tu("f")),
        a("z"),
        a(tu("g")),
        a("w"),
    ]
    assert report(many)[1].lines() == [
        "removed 2 duplicate tool_uses: a (messages.3), b (messages.3)",
        "dropped 2 duplicate results: a (messages.4), b (messages.4)",
        "dropped 2 orphan results: o1 (messages.0), o2 (messages.0)",
        "moved 1 result to the front: a (messages.2)",
        "synthesized 5 results: c, d, e, f, g",
        "inserted messages #6, #9",
    ]
    to_text = [u(tr("o1"), txt("hi")), a("r"), u(tr("o2"), tr("o3"), txt("t"))]
    assert report(to_text, orphans="to_text")[1].lines() == [
        "turned 3 orphan results to text: o1 (messages.0), o2 (messages.2), o3 (messages.2)"
    ]
    two_emptied = [u("q"), a(tu("a")), u(tr("a")), a(tu("a")), a(tu("a")), u(txt("t"))]
    assert report(two_emptied)[1].lines()[-1] == "removed emptied messages #3, #4"
    assert report([u("q"), a("r")])[1].lines() == []
    # A report built by hand without message places (the fields are public) still names the ids.
    assert NormalizeReport(orphans_dropped=("x", "y")).lines() == ["dropped 2 orphan results: x, y"]
