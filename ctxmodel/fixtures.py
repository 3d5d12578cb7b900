"""Failures as values (contract §8): the fixture schema, atomic writing, loading, promotion.

A fixture holds the shrunk params and what the target answered, never a Hypothesis blob or
database key: those do not survive an upgrade or another machine (the
database's format and keys are Hypothesis's own and change between its releases).
It is written before anything is printed, atomically, so an interrupted run never leaves a torn
file and a reported failure always has its fixture.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import attrs

from ctxmodel.errors import CtxmodelError

__all__ = [
    "SCHEMA",
    "Fixture",
    "FixtureError",
    "examples_by_property",
    "expand_paths",
    "fixture_name",
    "load_fixture",
    "params_problem",
    "promote",
    "write_atomic",
    "write_failure",
    "write_text_atomic",
]

SCHEMA = "ctxmodel-fixture/1"


class FixtureError(CtxmodelError):
    """A fixture file that cannot be used: one line naming the file and the JSON path (exit 2)."""

    def __init__(self, source: str, path: str, message: str) -> None:
        super().__init__(source, path, message)
        self.source, self.path, self.message = source, path, message

    def __str__(self) -> str:
        return ": ".join(p for p in (self.source, self.path, self.message) if p)


@attrs.frozen
class Fixture:
    property: str
    op: str
    params: dict[str, Any]
    observed: list[dict[str, Any]]
    target: dict[str, str]
    policies: dict[str, str]
    tokenizer: str
    found: dict[str, Any]
    note: str
    #: The finding's kind (``normalize.results-lead/result-after-image``, ``target-timeout``).
    kind: str = ""
    #: ``fail``, or ``warn`` for a warning kept with its input (contract §8).
    severity: str = "fail"
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "property": self.property,
            "op": self.op,
            "params": self.params,
            "observed": self.observed,
            "target": self.target,
            "policies": self.policies,
            "tokenizer": self.tokenizer,
            "found": self.found,
            "note": self.note,
            "kind": self.kind or self.property,
            "severity": self.severity,
        }


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def params_hash(params: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(params).encode()).hexdigest()[:10]


def fixture_name(property_id: str, params: Mapping[str, Any]) -> str:
    """``<property-id>-<hash of params>.json``: the same failure lands on the same file."""
    return f"{property_id}-{params_hash(params)}.json"


def found_now(seed: int | None, hypothesis_version: str) -> dict[str, Any]:
    date = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return {"date": date, "seed": seed, "hypothesis": hypothesis_version}


def write_failure(
    directory: str | os.PathLike[str],
    *,
    property_id: str,
    op: str,
    kind: str,
    params: Mapping[str, Any],
    calls: Iterable[Any],
    target: Mapping[str, str],
    policies: Mapping[str, str],
    tokenizer: str,
    seed: int | None,
    notes: Sequence[str],
    severity: str = "fail",
) -> Path:
    """The fixture of one failing kind, written atomically under its own name (contract §8): every
    runner (the gate, the fuzz campaign, the agent loop) writes a failure through here, so a
    fixture means the same and replays the same whoever found it."""
    import hypothesis

    fixture = Fixture(
        property=property_id,
        op=op,
        params=dict(params),
        observed=exchanges_json(calls),
        target={"name": str(target.get("name", "")), "version": str(target.get("version", ""))},
        policies=dict(policies),
        tokenizer=tokenizer,
        found=found_now(seed, hypothesis.__version__),
        note="\n".join(notes),
        kind=kind,
        severity=severity,
    )
    return write_atomic(Path(directory) / fixture_name(kind.replace("/", "."), params), fixture.to_json())


_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogates_escaped(text: str) -> str:
    """JSON text with its lone surrogates (a failing input's own, domain §5.6) written as ``\\uXXXX``
    escapes: UTF-8 cannot carry them raw, and ``json.load`` reads the escape back as the same string."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def write_atomic(path: str | os.PathLike[str], value: Any) -> Path:
    """Write JSON so that readers see the old file or the new one, never half of one."""
    text = surrogates_escaped(json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)) + "\n"
    return write_text_atomic(path, text)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Any text (a fixture, a report page) written so that a stop at any moment leaves the old file
    or the new one, with the permissions ``open()`` would give it: fixtures and reports are shared."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def load_fixture(path: str | os.PathLike[str]) -> Fixture:
    source = str(path)

    def bad(where: str, message: str) -> NoReturn:
        raise FixtureError(source, where, message)

    try:
        data = json.loads(Path(path).read_bytes(), parse_constant=_reject_constant)
    except OSError as exc:
        bad("", f"cannot read: {exc.strerror or exc}")
    except (ValueError, RecursionError) as exc:
        bad("", f"not JSON: {exc}")
    if not isinstance(data, dict):
        bad("", "expected a fixture object")
    if data.get("schema") != SCHEMA:
        bad("schema", f"expected {SCHEMA!r}, got {data.get('schema')!r}")

    def field(key: str, kind: type | tuple[type, ...], expected: str) -> Any:
        if key not in data:
            bad(key, f"expected {expected}, got nothing (key missing)")
        if not isinstance(data[key], kind) or (isinstance(data[key], bool) and kind is not bool):
            bad(key, f"expected {expected}")
        return data[key]

    prop = field("property", str, "a property id string")
    op = field("op", str, "an op name string")
    params = field("params", dict, "an object (the op's params)")
    observed = field("observed", list, "an array of exchanges")
    for i, exchange in enumerate(observed):
        if not isinstance(exchange, dict):
            bad(f"observed.{i}", "expected an exchange object")
        if not isinstance(exchange.get("op"), str):
            bad(f"observed.{i}.op", "expected an op name string")
    target = field("target", dict, "an object with name and version")
    policies = field("policies", dict, "an object of policy values")
    for key, value in policies.items():
        if not isinstance(value, str):
            bad(f"policies.{key}", "expected a string")
    tokenizer = data.get("tokenizer", "zoo")
    if not isinstance(tokenizer, str):
        bad("tokenizer", "expected a string")
    found = data.get("found", {})
    if not isinstance(found, dict):
        bad("found", "expected an object")
    note = data.get("note", "")
    if not isinstance(note, str):
        bad("note", "expected a string")
    kind = data.get("kind", prop)
    if not isinstance(kind, str):
        bad("kind", "expected a string")
    severity = data.get("severity", "fail")
    if severity not in ("fail", "warn"):
        bad("severity", 'expected "fail" or "warn"')
    return Fixture(
        property=prop,
        op=op,
        params=params,
        observed=observed,
        target={str(k): str(v) for k, v in target.items()},
        policies=policies,
        tokenizer=tokenizer,
        found=found,
        note=note,
        kind=kind,
        severity=severity,
    )


def params_problem(op: str, params: Any) -> str:
    """Why a fixture's params cannot be what its op was called with (contract §7), or "".

    A hand-made or damaged fixture would otherwise be replayed, fail on the target's refusal and be
    counted as reproducing its kind."""
    if not isinstance(params, dict):
        return "expected an object"
    if op == "describe":
        return ""
    messages = params.get("messages")
    if not isinstance(messages, list):
        return f"{op} takes a messages array"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return f"messages.{i}: expected a message object with a role"
    numbers = {"recover": ("contextWindow", "maxTokens")}.get(op, ())
    for key in numbers:
        if not isinstance(params.get(key), int) or isinstance(params.get(key), bool):
            return f"{key}: {op} takes an integer"
    if "systemPrompt" in params and not isinstance(params["systemPrompt"], str):
        return "systemPrompt: expected a string"
    return ""


def expand_paths(paths: Sequence[str | os.PathLike[str]], default: str = "regressions") -> list[Path]:
    """Files as given; directories become their ``*.json`` files, sorted."""
    out: list[Path] = []
    for raw in paths or [default]:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.glob("*.json") if not p.name.startswith(".")))
        elif path.exists():
            out.append(path)
        else:
            raise FixtureError(str(path), "", "no such file or directory")
    return out


def slug(text: str, limit: int = 48) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:limit].rstrip("-") or "case"


def promote(
    path: str | os.PathLike[str], *, into: str | os.PathLike[str] = "regressions", name: str | None = None
) -> Path:
    """Move a fixture into the committed corpus under ``<property-id>--<slug>.json``.

    The slug comes from ``--name`` or from the fixture's first finding, so a reader of
    ``regressions/`` sees what each file is about; an existing file is never overwritten.
    """
    fixture = load_fixture(path)
    label = slug(name) if name else slug(_first_line(fixture.note) or fixture.op)
    dest_dir = Path(into)
    dest = dest_dir / f"{fixture.property}--{label}.json"
    n = 2
    while dest.exists():
        if dest.read_bytes() == Path(path).read_bytes():
            Path(path).unlink()
            return dest
        dest = dest_dir / f"{fixture.property}--{label}-{n}.json"
        n += 1
    write_atomic(dest, fixture.to_json())
    Path(path).unlink()
    return dest


def _first_line(note: str) -> str:
    # Notes start with the clause and the first finding; skip the clause for the slug.
    for line in note.splitlines():
        line = line.strip()
        if line and not line.startswith("contract §") and not line.startswith("domain §"):
            return re.sub(r"^(messages(\.\d+)+(\.[a-z_]+)*:?\s*)", "", line)
    return ""


def exchanges_json(calls: Iterable[Any]) -> list[dict[str, Any]]:
    """``Exchange`` records as fixture JSON: what was sent and what came back (or how it failed)."""
    out: list[dict[str, Any]] = []
    for call in calls:
        item: dict[str, Any] = {"op": call.op, "params": call.params}
        if call.failure is not None:
            item["failure"] = call.failure
        else:
            item["result"] = call.result
        out.append(item)
    return out


def examples_by_property(directory: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """Promoted fixtures' params by property id, to run first as explicit examples
    (regressions as ``@example``s, never through the database, which is a cache). No directory, no
    examples."""
    path = Path(directory)
    if not path.is_dir():
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for file in sorted(path.glob("*.json")):
        fixture = load_fixture(file)
        out.setdefault(fixture.property, []).append(fixture.params)
    return out
