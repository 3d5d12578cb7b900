"""Fixtures (contract §8): schema, atomic writes, one-line errors, promotion, replay by value."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from ctxmodel.fixtures import (
    SCHEMA,
    Fixture,
    FixtureError,
    examples_by_property,
    expand_paths,
    fixture_name,
    load_fixture,
    promote,
    write_atomic,
)
from ctxmodel.gate import replay
from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Property
from ctxmodel.targets import open_target


def _params(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.just({"messages": []})


def _no_two_users(probe: Probe, ex: Exchange) -> Iterable[Finding]:
    reply = ex.result
    roles = [m["role"] for m in reply["messages"]]
    if roles[:2] == ["user", "user"]:
        yield Finding.fail("messages.1: a second user message", "alternating roles")


TOY = Property(
    "toy.alternates", "normalize", "contract §7", "toy", _params, _no_two_users, requires=frozenset({"normalize"})
)
TWO_USERS = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}


def fixture(**changes: Any) -> dict[str, Any]:
    value = Fixture(
        property="toy.alternates",
        op="normalize",
        params=TWO_USERS,
        observed=[{"op": "normalize", "params": TWO_USERS, "result": TWO_USERS}],
        target={"name": "t", "version": "1"},
        policies={"orphans": "drop"},
        tokenizer="zoo",
        found={"date": "2025-01-01T00:00:00Z", "seed": 0, "hypothesis": "6"},
        note="messages.1: a second user message\ncontract §7",
    ).to_json()
    value.update(changes)
    return value


def test_write_is_atomic_and_round_trips(tmp_path: Path) -> None:
    path = write_atomic(tmp_path / "deep" / "f.json", fixture())
    write_atomic(path, fixture(note="second"))
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]  # no temporary left behind
    loaded = load_fixture(path)
    assert loaded.note == "second" and loaded.params == TWO_USERS and loaded.schema == SCHEMA
    assert loaded.to_json() == fixture(note="second")


def test_names_depend_on_params_only() -> None:
    a = fixture_name("p.x", {"messages": [], "contextWindow": 5})
    assert a == fixture_name("p.x", {"contextWindow": 5, "messages": []})
    assert a != fixture_name("p.x", {"messages": [], "contextWindow": 6})
    assert a.startswith("p.x-") and a.endswith(".json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema": "ctxmodel-fixture/9"}, "schema: expected 'ctxmodel-fixture/1', got 'ctxmodel-fixture/9'"),
        ({"params": [1]}, "params: expected an object (the op's params)"),
        ({"observed": [{"params": {}}]}, "observed.0.op: expected an op name string"),
        ({"policies": {"orphans": 3}}, "policies.orphans: expected a string"),
        ({"property": None}, "property: expected a property id string"),
    ],
)
def test_bad_fixtures_are_named_by_file_and_path(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(fixture(**change)))
    with pytest.raises(FixtureError) as info:
        load_fixture(path)
    assert str(info.value) == f"{path}: {message}"


def test_unreadable_fixtures(tmp_path: Path) -> None:
    (tmp_path / "nan.json").write_text('{"schema": NaN}')
    with pytest.raises(FixtureError, match=r"nan\.json: not JSON: NaN is not valid JSON"):
        load_fixture(tmp_path / "nan.json")
    with pytest.raises(FixtureError, match=r"missing\.json: no such file"):
        expand_paths([tmp_path / "missing.json"])


def test_directories_expand_to_their_fixtures(tmp_path: Path) -> None:
    for name in ("b.json", "a.json", ".a.json.tmp", "notes.txt"):
        (tmp_path / name).write_text(json.dumps(fixture()))
    assert [p.name for p in expand_paths([tmp_path])] == ["a.json", "b.json"]
    assert examples_by_property(tmp_path) == {"toy.alternates": [TWO_USERS, TWO_USERS]}
    assert examples_by_property(tmp_path / "nowhere") == {}


def test_promote_moves_under_a_readable_name(tmp_path: Path) -> None:
    found = write_atomic(tmp_path / "fx" / "toy.alternates-123.json", fixture())
    dest = promote(found, into=tmp_path / "regressions")
    assert dest.name == "toy.alternates--a-second-user-message.json" and not found.exists()
    again = write_atomic(tmp_path / "fx" / "toy.alternates-456.json", fixture(params={"messages": []}))
    second = promote(again, into=tmp_path / "regressions")
    assert second.name == "toy.alternates--a-second-user-message-2.json"
    named = write_atomic(tmp_path / "fx" / "x.json", fixture())
    assert promote(named, into=tmp_path / "r2", name="Two Users!").name == "toy.alternates--two-users.json"


def test_replay_by_value_against_any_target() -> None:
    loaded = Fixture(**{k: v for k, v in fixture().items() if k != "schema"})
    verdict = replay(loaded, open_target("reference"), resolve={"toy.alternates": TOY}.__getitem__)
    assert verdict.failed and verdict.failures[0].message == "messages.1: a second user message"
    assert verdict.calls[0].params["policies"]["orphans"] == "drop"  # the fixture's policies were sent
    with pytest.raises(FixtureError, match=r"f\.json: property: unknown property 'toy\.alternates'"):
        no_properties: dict[str, Property] = {}
        replay(loaded, open_target("reference"), source="f.json", resolve=no_properties.__getitem__)
