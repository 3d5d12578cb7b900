"""A baseline of known failures: turning the gate on before its first findings are fixed (contract §8, §9).

A baseline is a directory of fixtures kept in the repository (the first run's, as ``check`` wrote
them). A finding is known when its kind (``Kind.key``: the property and the code, or a target fault)
has a fixture there; ``check --baseline DIR`` then fails only on kinds that are new.

Whether a known kind is still there is decided by replaying its own fixture by value before the
search, never by whether a random search happens to meet it again: a search that misses a kind has
not shown it fixed. A kind whose fixture still reproduces is not raised during the search (its
minimal input is the fixture already, so shrinking it again would only cost time). A kind whose
fixture no longer reproduces is searched for like any other: met again, it is shrunk and written so
the stale fixture can be replaced, and it is still known; not met, it is fixed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs

from ctxmodel.errors import UsageError
from ctxmodel.fixtures import Fixture, FixtureError, load_fixture
from ctxmodel.gate import replay
from ctxmodel.properties.catalogue import Property
from ctxmodel.results import Outcome, finding_key
from ctxmodel.targets.base import Target

__all__ = ["Baseline", "Entry", "Verdict", "load_baseline", "mark", "replay_baseline", "verdicts"]

#: What replaying one baseline fixture before the search showed.
Replayed = Literal["", "reproduces", "passes", "not-selected", "no-op"]
#: What a run says of one kind: ``new`` fails the run; the others do not.
Status = Literal["new", "known", "fixed", "passes", "not-checked"]


@attrs.frozen
class Entry:
    """One baseline fixture, and what its replay showed (empty until replayed)."""

    path: Path
    fixture: Fixture
    replayed: Replayed = ""
    #: Why it was not replayed, for ``not-selected`` and ``no-op``.
    reason: str = ""

    @property
    def kind(self) -> str:
        return self.fixture.kind or self.fixture.property


@attrs.frozen
class Baseline:
    directory: Path
    entries: tuple[Entry, ...]

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(e.kind for e in self.entries)

    @property
    def reproducing(self) -> frozenset[str]:
        """Kinds with a fixture that still fails: the search need not shrink them again."""
        return frozenset(e.kind for e in self.entries if e.replayed == "reproduces")


def _kind_belongs(kind: str, property_id: str) -> bool:
    return kind == property_id or kind.startswith(property_id + "/") or kind.startswith("target-")


def load_baseline(
    directory: str | os.PathLike[str], *, fixtures_dir: str | os.PathLike[str] | None = None
) -> Baseline:
    """Every fixture of the directory, each checked against this ctxmodel's catalogue: a fixture
    whose property no longer exists, or whose kind is not one its property can report, could never
    be matched, so it is an error (exit 2) rather than a kind silently reported fixed forever."""
    from ctxmodel.properties.registry import get

    path = Path(directory)
    if not path.is_dir():
        raise UsageError(f"--baseline {directory}: not a directory (a baseline is a directory of fixtures)")
    if fixtures_dir is not None and Path(fixtures_dir).resolve() == path.resolve():
        # New findings would land in the baseline and be known from the next run on.
        raise UsageError(f"--baseline {directory}: the same directory as --fixtures; keep new fixtures apart")
    entries: list[Entry] = []
    for file in sorted(p for p in path.glob("*.json") if not p.name.startswith(".")):
        fixture = load_fixture(file)
        try:
            get(fixture.property)
        except KeyError:
            raise FixtureError(
                str(file), "property", f"unknown property {fixture.property!r} (renamed or removed since the "
                "baseline was written: replace this fixture with a fresh one, or delete it)"
            ) from None
        entry = Entry(file, fixture)
        if not _kind_belongs(entry.kind, fixture.property):
            raise FixtureError(str(file), "kind", f"{entry.kind!r} is not a kind of property {fixture.property!r}")
        entries.append(entry)
    return Baseline(path, tuple(entries))


def replay_baseline(
    baseline: Baseline, target: Target, props: Sequence[Property], *, policies: Mapping[str, str]
) -> Baseline:
    """Each fixture of a selected property, once, against the target under the run's policies (what
    the search judges with). A fixture reproduces when its own kind shows, whatever else does: a
    kind is about that kind, and another kind on the same input is the search's to find."""
    selected = {p.id: p for p in props}
    out: list[Entry] = []
    for entry in baseline.entries:
        prop = selected.get(entry.fixture.property)
        if prop is None:
            out.append(attrs.evolve(entry, replayed="not-selected", reason="its property is not selected"))
            continue
        missing = sorted(set(prop.requires) - set(target.description.ops))
        if missing:
            out.append(attrs.evolve(entry, replayed="no-op", reason=f"the target has no {', '.join(missing)}"))
            continue
        verdict = replay(entry.fixture, target, policies=policies, source=str(entry.path))
        shown = any(finding_key(prop, f) == entry.kind for f in verdict.findings)
        out.append(attrs.evolve(entry, replayed="reproduces" if shown else "passes"))
    return attrs.evolve(baseline, entries=tuple(out))


def mark(outcome: Outcome, baseline: Baseline) -> Outcome:
    """The outcome as the run judges it: its known kinds moved out of its failures, joined by the
    kinds whose baseline fixture of this property still reproduces. Only new kinds fail it."""
    known = list(outcome.known)
    for kind in (*outcome.kinds, *outcome.warned):
        if kind.key in baseline.kinds and kind.key not in known:
            known.append(kind.key)
    for entry in baseline.entries:
        if entry.fixture.property == outcome.prop.id and entry.replayed == "reproduces" and entry.kind not in known:
            known.append(entry.kind)
    new = tuple(k for k in outcome.kinds if k.key not in baseline.kinds)
    warned = tuple(k for k in outcome.warned if k.key not in baseline.kinds)
    status = outcome.status
    if status == "failed" and not new:
        status = "passed"
    return attrs.evolve(
        outcome, status=status, kinds=new, warned=warned, known=tuple(known), flaky=outcome.flaky and bool(new),
        warnings_total=outcome.warnings_total - (len(outcome.warned) - len(warned)),
    )


@attrs.frozen
class Verdict:
    """What the run says of one kind, new or in the baseline."""

    kind: str
    status: Status
    detail: str


def verdicts(baseline: Baseline, outcomes: Iterable[Outcome]) -> tuple[Verdict, ...]:
    """Per kind: new (fails the run), known (still fails), fixed, passes (its fixture no longer
    reproduces but its property's search did not run to confirm it), not checked. ``outcomes`` are
    the engine's, unmarked: a known kind met again keeps its fresh fixture there."""
    runs = list(outcomes)
    met: dict[str, Path | None] = {}
    for o in runs:
        for kind in (*o.kinds, *o.warned):
            met.setdefault(kind.key, kind.fixture)
        for key in o.known:
            met.setdefault(key, None)
    searched = {o.prop.id for o in runs if o.status in ("passed", "failed")}
    out: list[Verdict] = []
    for o in runs:
        for kind in o.kinds:
            if kind.key not in baseline.kinds and all(v.kind != kind.key for v in out):
                where = f"fixture {kind.fixture}" if kind.fixture is not None else "no fixture"
                out.append(Verdict(kind.key, "new", where))
    by_kind: dict[str, list[Entry]] = {}
    for entry in baseline.entries:
        by_kind.setdefault(entry.kind, []).append(entry)
    out.extend(_known_verdict(key, entries, met, searched) for key, entries in by_kind.items())
    return tuple(out)


def _known_verdict(key: str, entries: Sequence[Entry], met: Mapping[str, Path | None], searched: set[str]) -> Verdict:
    reproducing = [e for e in entries if e.replayed == "reproduces"]
    if reproducing:
        return Verdict(key, "known", f"still fails: {', '.join(str(e.path) for e in reproducing)} reproduces")
    replayed = [e for e in entries if e.replayed == "passes"]
    names = ", ".join(str(e.path) for e in replayed)
    if key in met:
        fresh = met[key]
        again = f"; a fresh fixture to replace it: {fresh}" if fresh is not None else ""
        stale = f"{names} no longer reproduces, but" if names else f"({entries[0].reason})"
        return Verdict(key, "known", f"still fails: {stale} the run met it{again}")
    if not replayed:
        return Verdict(key, "not-checked", f"not checked: {entries[0].reason or 'not replayed'}")
    if any(e.fixture.property in searched for e in replayed):
        return Verdict(key, "fixed", f"{names} no longer reproduces and the run did not meet it "
                       "(remove it from the baseline)")
    return Verdict(key, "passes", f"{names} no longer reproduces; its property's search did not run")
