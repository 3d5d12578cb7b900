"""After a property meets a kind, the search goes on within its budget: a kind hidden behind a
commoner one of the same property is found too, and its examples are examples, not shrinks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
from hypothesis import strategies as st

from ctxmodel import engine
from ctxmodel.engine import RunConfig
from ctxmodel.events import Callback, ExampleDrawn
from ctxmodel.profiles import get_profile
from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Property
from ctxmodel.targets import open_target


def _numbered(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    text = st.integers(0, 10_000).map(str)
    return st.fixed_dictionaries({"messages": st.lists(st.builds(lambda t: {"role": "user", "content": t}, text),
                                                       min_size=1, max_size=1)})


def _common_and_rare(probe: Probe, ex: Exchange) -> Iterable[Finding]:
    """Fails everywhere (kind ``common``), and where the number is 9000 or more (kind ``rare``)."""
    number = int(ex.params["messages"][0]["content"])
    if number >= 9000:
        yield Finding.fail("a rare number", "below 9000", code="rare")
    else:
        yield Finding.fail("any number", "none", code="common")


TWO_KINDS = Property("toy.two-kinds", "normalize", "contract §7", "two kinds", _numbered, _common_and_rare,
                     requires=frozenset({"normalize"}))


def test_a_kind_behind_a_commoner_one_is_found_and_the_search_uses_its_budget(tmp_path: Path) -> None:
    drawn: list[object] = []
    config = RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / "fx", seed=0, max_examples=200,
                       database=None, minimize=False)
    (outcome,) = engine.run([TWO_KINDS], config, target=open_target("reference"),
                            handlers=[Callback(drawn.append, frozenset({ExampleDrawn}))]).outcomes
    assert outcome.status == "failed"
    assert {k.key for k in outcome.kinds} == {"toy.two-kinds/common", "toy.two-kinds/rare"}
    assert outcome.examples > 100, outcome.examples  # it went on generating after the first kind
    assert len(drawn) == outcome.examples


def test_a_kind_stored_as_a_regression_fixture_does_not_end_the_search(tmp_path: Path) -> None:
    """Hypothesis stops at a failing explicit example; the gate judges the fixture, then searches."""
    fixture = {"messages": [{"role": "user", "content": "5"}]}
    config = RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / "fx", seed=0, max_examples=200,
                       database=None, minimize=False, regressions={TWO_KINDS.id: (fixture,)})
    (outcome,) = engine.run([TWO_KINDS], config, target=open_target("reference")).outcomes
    kinds = {k.key: k for k in outcome.kinds}
    assert set(kinds) == {"toy.two-kinds/common", "toy.two-kinds/rare"}
    assert kinds["toy.two-kinds/common"].first_example == 1
    assert outcome.examples > 100, outcome.examples


def test_a_failure_replayed_from_the_database_does_not_end_the_search(tmp_path: Path) -> None:
    """Hypothesis ends a run whose database gave back a shrunk failure; the gate searches on."""
    from hypothesis.database import InMemoryExampleDatabase

    database = InMemoryExampleDatabase()
    config = RunConfig(profile=get_profile("ci"), fixtures_dir=tmp_path / "fx", seed=0, max_examples=200,
                       database=database, minimize=False)
    engine.run([TWO_KINDS], config, target=open_target("reference"))
    (again,) = engine.run([TWO_KINDS], attrs.evolve(config, seed=1, fixtures_dir=tmp_path / "fx2"),
                          target=open_target("reference")).outcomes
    assert {k.key for k in again.kinds} == {"toy.two-kinds/common", "toy.two-kinds/rare"}
    assert again.examples > 100, again.examples
