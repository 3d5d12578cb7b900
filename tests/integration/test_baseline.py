"""The engine's side of a baseline (contract §8): known kinds are noted, not raised, not shrunk."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ctxmodel import engine, exitcodes, results
from ctxmodel.baseline import Baseline, Entry, mark, verdicts
from ctxmodel.engine import RunConfig
from ctxmodel.fixtures import Fixture
from ctxmodel.profiles import get_profile
from ctxmodel.properties.catalogue import Exchange, Finding, Probe, Property
from ctxmodel.targets import open_target


def _messages(policies: Mapping[str, str]) -> st.SearchStrategy[dict[str, Any]]:
    message = st.fixed_dictionaries({"role": st.just("user"), "content": st.text("ab", min_size=1, max_size=3)})
    return st.fixed_dictionaries({"messages": st.lists(message, max_size=4)})


def _bb_and_warn(probe: Probe, ex: Exchange) -> Iterable[Finding]:
    """Fails on any "bb" (code ``bb``), fails on any "aa" (code ``aa``), warns on every non-empty input."""
    for code in ("bb", "aa"):
        if any(code in m["content"] for m in ex.result["messages"]):
            yield Finding.fail(f"reads {code}", f"no {code}", code=code)
    if ex.params["messages"]:
        yield Finding.warn("a toy warning", code="noisy")


TOY = Property("toy.letters", "normalize", "contract §7", "no bb, no aa", _messages, _bb_and_warn,
               requires=frozenset({"normalize"}))


def _run(tmp_path: Path, known: set[str], strict: bool = False) -> results.Outcome:
    (outcome,) = engine.run([TOY], RunConfig(
        policies={}, profile=get_profile("ci"), fixtures_dir=tmp_path / "fx",
        max_examples=60, database=None, known_kinds=known, strict=strict,
    ), target=open_target("reference")).outcomes
    return outcome


def _baseline(*kinds: str) -> Baseline:
    def entry(kind: str) -> Entry:
        fixture = Fixture(property=TOY.id, op="normalize", params={"messages": []}, observed=[], target={},
                          policies={}, tokenizer="zoo", found={}, note="", kind=kind)
        return Entry(Path(f"base/{kind}.json"), fixture, replayed="reproduces")

    return Baseline(Path("base"), tuple(entry(k) for k in kinds))


def test_known_kinds_are_met_but_neither_raised_nor_shrunk(tmp_path: Path) -> None:
    every = _run(tmp_path, {"toy.letters/bb", "toy.letters/aa"})
    assert every.status == "passed" and every.kinds == () and every.shrink_steps == 0
    assert set(every.known) == {"toy.letters/bb", "toy.letters/aa"}
    assert not list((tmp_path / "fx").glob("toy.letters.bb-*.json"))


def test_a_new_kind_still_fails_beside_a_known_one(tmp_path: Path) -> None:
    outcome = _run(tmp_path, {"toy.letters/bb"})
    assert outcome.status == "failed" and [k.key for k in outcome.kinds] == ["toy.letters/aa"]
    assert outcome.known == ("toy.letters/bb",)


def test_under_strict_a_known_warning_is_known_and_a_new_one_fails(tmp_path: Path) -> None:
    known = {"toy.letters/bb", "toy.letters/aa", "toy.letters/noisy"}
    assert _run(tmp_path, known, strict=True).status == "passed"
    outcome = _run(tmp_path, known - {"toy.letters/noisy"}, strict=True)
    assert outcome.status == "failed" and [k.key for k in outcome.kinds] == ["toy.letters/noisy"]


def test_marking_moves_known_kinds_out_of_the_failures_and_the_exit_code_follows(tmp_path: Path) -> None:
    raw = _run(tmp_path, set())  # nothing known to the engine: both kinds raised and shrunk
    assert {k.key for k in raw.kinds} == {"toy.letters/bb", "toy.letters/aa"}
    both = mark(raw, _baseline("toy.letters/bb", "toy.letters/aa"))
    assert both.status == "passed" and both.kinds == () and set(both.known) == {"toy.letters/bb", "toy.letters/aa"}
    assert engine.exit_code([both]) == exitcodes.OK
    one = mark(raw, _baseline("toy.letters/bb"))
    assert one.status == "failed" and [k.key for k in one.kinds] == ["toy.letters/aa"]
    assert engine.exit_code([one]) == exitcodes.FAILED
    said = {v.kind: v.status for v in verdicts(_baseline("toy.letters/bb"), [raw])}
    assert said == {"toy.letters/aa": "new", "toy.letters/bb": "known"}


def test_a_property_failing_only_on_baseline_kinds_does_not_stop_a_max_failures_run(tmp_path: Path) -> None:
    quiet = Property("toy.quiet", "normalize", "contract §7", "holds", _messages, lambda probe, ex: (),
                     requires=frozenset({"normalize"}))
    kinds = {"toy.letters/bb", "toy.letters/aa"}
    first, second = engine.run([TOY, quiet], RunConfig(
        policies={}, profile=get_profile("ci"),
        fixtures_dir=tmp_path / "fx", max_examples=60, database=None, max_failures=1, baseline_kinds=kinds,
    ), target=open_target("reference")).outcomes
    assert first.status == "failed" and {k.key for k in first.kinds} == kinds  # searched for, so shrunk
    assert second.status == "passed"
