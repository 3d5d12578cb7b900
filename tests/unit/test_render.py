"""The compact rendering people read in every report."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxmodel.codec import load
from ctxmodel.normalize import SYNTHETIC_TEXT
from ctxmodel.render import IdLabels, render

A = "toolu_01A09q90qw90lq917835lq9"
B = "toolu_01B4ng7xq0d8sR1b2c3d4e5"
T1 = "5a3f0b2e-9c1d-4e5f-8a7b-112233445566"


def _history() -> list[dict[str, Any]]:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    return [
        {"role": "user", "content": [{"type": "text", "text": "Fix the failing test in src/app.test.ts"}], "ts": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Two files.", "signature": "c2ln"},
                {"type": "tool_use", "id": A, "name": "read_file", "input": {"path": "src/app.ts"}},
                {"type": "tool_use", "id": B, "name": "execute_command", "input": {"command": "npm test"}},
            ],
            "ts": 2,
            "truncationParent": T1,
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": A, "content": "export const x = 1"},
                image,
                {"type": "tool_result", "tool_use_id": B, "content": SYNTHETIC_TEXT, "is_error": True},
                {"type": "text", "text": "<environment_details>\n# VSCode Visible Files"},
            ],
        },
        {
            "role": "user",
            "content": "[Sliding window truncation: 2 messages hidden to reduce context]",
            "isTruncationMarker": True,
            "truncationId": T1,
        },
        {"role": "user", "content": "## Conversation Summary", "isSummary": True, "condenseId": "c1"},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}, {"type": "document"}]},
    ]


def test_a_six_message_counterexample_reads_at_a_glance() -> None:
    out = render(load(_history()), visible=[True, False, True, True, True, True], highlight=["messages.2.content.2"])
    assert out.splitlines() == [
        '   • #0 user       "Fix the failing test in…"  ts=1',
        "   · #1 assistant  [thinking] [use 01A0…:read_file] [use 01B4…:execute_command]  truncated→5a3f… ts=2",
        '>> • #2 user       [result 01A0…] [image] >>[result 01B4…! (synthetic)] "<environment_details>\\n#…"',
        '   • #3 user       "[Sliding window truncati…"  marker 5a3f…',
        '   • #4 user       "## Conversation Summary"  summary c1',
        "   • #5 assistant  [redacted_thinking] [document]",
    ]


def test_without_mask_or_highlight_lines_start_with_the_index() -> None:
    lines = render(load(_history())).splitlines()
    assert len(lines) == 6
    assert [line.split()[0] for line in lines] == ["#0", "#1", "#2", "#3", "#4", "#5"]


def test_message_highlight_and_deep_paths() -> None:
    out = render(load(_history()), highlight=["messages.0", "messages.2.content.0.tool_result.tool_use_id"])
    lines = out.splitlines()
    assert lines[0].startswith(">> #0")
    assert ">>[result 01A0…]" in lines[2]
    assert lines[1].startswith("   #1")


def test_empty_content_runs_and_string_highlight() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    history = load(
        [
            {"role": "user", "content": ""},
            {"role": "assistant", "content": []},
            {"role": "user", "content": [image, image, image, {"type": "text", "text": ""}]},
        ]
    )
    lines = render(history, highlight=["messages.0.content.0"]).splitlines()
    assert lines[0] == '>> #0 user       >>""'
    assert lines[1] == "   #1 assistant  []"
    assert lines[2] == '   #2 user       [image]×3 ""'  # noqa: RUF001


def test_index_column_widens_with_the_history() -> None:
    history = load([{"role": "user", "content": "hi"}] * 12)
    lines = render(history).splitlines()
    assert lines[0].startswith("#0  user")
    assert lines[11].startswith("#11 user")


def test_newlines_and_lone_surrogates_stay_on_one_printable_line() -> None:
    history = load([{"role": "user", "content": "a\nb\ud800", "ts": 3}])
    out = render(history)
    assert "\n" not in out
    out.encode("utf-8")  # printable on any UTF-8 terminal


def test_short_ids_are_kept_whole_and_colliding_ids_are_told_apart() -> None:
    labels = IdLabels(["a", "toolu_abcdefghij1", "toolu_abcdefghij2", "call_zzzzzzzzzzzz", "zzzzzzzzzzzz"])
    assert labels("a") == "a"
    assert labels("toolu_abcdefghij1") == "abcdefghij1"
    assert labels("toolu_abcdefghij2") == "abcdefghij2"
    # same rest after the agent prefix: shown whole, never merged
    assert labels("call_zzzzzzzzzzzz") == "call_zzzzzzzzzzzz"
    assert labels("zzzzzzzzzzzz") == "zzzzzzzzzzzz"
    # a whole rest equal to a short id
    nested = IdLabels(["toolu_ab12345", "toolu_ab123456", "ab12345"])
    assert len({nested(i) for i in ("toolu_ab12345", "toolu_ab123456", "ab12345")}) == 3


@given(st.sets(st.text(st.sampled_from("toolu_cal0123abAB"), min_size=1, max_size=20), max_size=12))
def test_labels_are_distinct_for_distinct_ids(ids: set[str]) -> None:
    labels = IdLabels(ids)
    assert len({labels(i) for i in ids}) == len(ids)
