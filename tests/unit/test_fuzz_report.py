"""The report writer, the input features and the database plumbing, without running a campaign."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis.database import DirectoryBasedExampleDatabase

from ctxmodel.errors import UsageError
from ctxmodel.fuzz.database import check_database, describe_database, open_database
from ctxmodel.fuzz.features import features_of
from ctxmodel.fuzz.report import conversation_html, render_html, write_report
from ctxmodel.fuzz.results import CampaignResult, FailureRecord, PropertyStats, paths_in

HISTORY = [
    {"role": "user", "content": "read <a.py> please"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b.py"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "x" * 1000},
            {"type": "text", "text": "and"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}],
            },
            {"type": "tool_result", "tool_use_id": "toolu_9", "content": "orphan"},
        ],
    },
]


def _result() -> CampaignResult:
    failure = FailureRecord(
        property="normalize.results-lead",
        op="normalize",
        clause="contract §3.1",
        findings=("messages.2.content.2: a tool_result after a text block </script>",),
        params={"messages": HISTORY},
        observed={"messages": HISTORY},
        target_failure=None,
        worker=1,
        found_at=1.5,
        examples_until_failure=12,
        fixture="fixtures/normalize.results-lead-abc.json",
        steps=("user_starts(words=1)", "assistant_turn(say=False, tools=2)"),
    )
    props = (
        PropertyStats("normalize.results-lead", "normalize", "contract §3.1", "s", 40, {"a": 3, "b": 1}, 1),
        PropertyStats("count.agrees", "count", "contract §5", "s", skipped="target has no count"),
    )
    return CampaignResult(
        target={"spec": "reference", "name": "t", "version": "1"},
        policies={"orphans": "drop"},
        database="directory:.ctxmodel/db",
        workers=2,
        seed=7,
        started="2026-01-01T00:00:00Z",
        finished="2026-01-01T00:00:04Z",
        duration=4.0,
        stopped="time-limit",
        properties=props,
        failures=(failure,),
        timeline=((0.0, 0, 0), (2.0, 20, 1)),
        versions={"ctxmodel": "0", "hypothesis": "6"},
        exit_code=1,
    )


def test_conversation_draws_pairs_orphans_images_and_highlight() -> None:
    page = conversation_html(HISTORY, highlight={"messages.2.content.2"}, anchor_prefix="t")
    # Each tool_use is an anchor; its results link to it, an orphan result does not.
    assert 'id="t-tu-toolu_1"' in page and 'href="#t-tu-toolu_1"' in page
    assert 'class="tid orphan"' in page and "toolu_9" in page
    assert "image image/png, 4 base64 chars" in page
    assert page.count("offending") == 1
    assert 'data-path="messages.2.content.2"' in page
    assert "&lt;a.py&gt;" in page  # user text is escaped, never markup
    assert "more characters" in page  # long text is cut, the fixture keeps it whole


def test_conversation_tolerates_malformed_input() -> None:
    page = conversation_html([{"role": 3, "content": None}, "junk", {"role": "user", "content": [None]}])
    assert page.count('class="msg') == 3
    assert "(no messages)" in conversation_html([])


def test_report_files_agree_and_embed_safely(tmp_path: Path) -> None:
    json_path, html_path = write_report(_result(), tmp_path)
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["schema"] == "ctxmodel-fuzz-report/1"
    assert data["totals"] == {
        "examples": 40,
        "examplesPerSecond": 10.0,
        "failures": 1,
        "distinctEvents": 2,
        "properties": 2,
    }
    assert data["failures"][0]["highlight"] == ["messages.2.content.2"]
    html = html_path.read_text(encoding="utf-8")
    assert html == render_html(data)
    assert "</script>" not in html.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert 'data-total="examples">40<' in html
    assert "<li><code>user_starts(words=1)</code></li>" in html
    assert "http" not in html.replace("http-equiv", "")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_paths_in_names_each_place_once() -> None:
    assert paths_in(["messages.3.content.1: x; messages.3.content.1 and messages.4"]) == (
        "messages.3.content.1",
        "messages.4",
    )


def test_features_of_names_shapes() -> None:
    found = features_of({"params": {"messages": HISTORY}})
    assert {
        "messages:1-3",
        "content:string",
        "block:tool_use",
        "pairing:parallel-tool-uses",
        "pairing:result-after-other-block",
        "pairing:orphan-result",
        "tool_result:list-content",
    } <= found
    assert features_of(None) == set()


def test_database_specs(tmp_path: Path) -> None:
    db = open_database(str(tmp_path / "db"))
    assert isinstance(db, DirectoryBasedExampleDatabase)
    assert describe_database("x") == "directory:x"
    assert describe_database("redis://h:1/0") == "redis://h:1/0"
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="not a directory"):
        open_database(str(tmp_path / "file"))
    with pytest.raises(UsageError, match="cannot reach the Redis server"):
        check_database("redis://127.0.0.1:1/0")


def _coverage_page(policies: dict[str, str]) -> str:
    import attrs

    result = _result()
    props = (
        PropertyStats(
            "effective.visibility", "effective", "contract §2", "s", 30,
            {"cell: effective:condenseParent/last-summary/before": 30, "feature: x": 4}, 0,
        ),
    )
    return render_html(json.loads(json.dumps(attrs.evolve(result, policies=policies, properties=props).to_json())))


def test_the_coverage_table_names_cells_never_reached_and_those_the_declared_inputs_leave_out() -> None:
    """The report reads coverage the way ``check --coverage`` does: a cell the target's declared
    input space leaves out is listed with its reason and is not counted as never reached."""
    any_inputs = _coverage_page({"inputs": "any"})
    stored = _coverage_page({"inputs": "agent-stored"})
    dangling = "condenseParent/dangling/before"
    never_any = any_inputs.split('data-figure="never">', 1)[1].split("<", 1)[0]
    never_stored = stored.split('data-figure="never">', 1)[1].split("<", 1)[0]
    assert dangling in never_any and dangling not in never_stored
    left_out = stored.split('data-figure="left-out">', 1)[1].split("<", 1)[0]
    assert dangling in left_out
    assert 'data-figure="cells-left-out"' in stored and "a rewind strips every tag" in stored
    assert 'data-figure="cells-left-out"' not in any_inputs
    reached = int(stored.split('data-figure="cells-reached">', 1)[1].split("<", 1)[0])
    assert reached == 1
    assert "feature: x" not in stored.split('class="coverage"', 1)[1].split("</table>", 1)[0]
