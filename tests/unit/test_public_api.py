"""``ctxmodel``'s public names: each imports, is the object its defining module holds, and importing
the package loads neither Hypothesis nor a tokenizer until a counter is asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import ctxmodel

#: The module that defines each public name (the pinned interfaces of HACKING.md, the codec, and
#: the harness: the check decorator, targets, the engine's run).
HOMES = {
    "Counter": "ctxmodel.tokens.counter",
    "CtxmodelError": "ctxmodel.errors",
    "Degraded": "ctxmodel.recover",
    "Finding": "ctxmodel.properties.catalogue",
    "GateReport": "ctxmodel.results",
    "History": "ctxmodel.model",
    "HistoryError": "ctxmodel.errors",
    "Message": "ctxmodel.model",
    "NormalizeReport": "ctxmodel.normalize",
    "Recovery": "ctxmodel.recover",
    "RepairReport": "ctxmodel.repair",
    "RunConfig": "ctxmodel.runs",
    "Witness": "ctxmodel.properties.catalogue",
    "check": "ctxmodel.properties.catalogue",
    "get_profile": "ctxmodel.profiles",
    "open_target": "ctxmodel.targets.spec",
    "run": "ctxmodel.engine",
    "Violation": "ctxmodel.oracle",
    "allowed_tokens": "ctxmodel.recover",
    "dump": "ctxmodel.codec",
    "dumps": "ctxmodel.codec",
    "effective": "ctxmodel.visibility",
    "get_counter": "ctxmodel.tokens.counter",
    "load": "ctxmodel.codec",
    "loads": "ctxmodel.codec",
    "normalize": "ctxmodel.normalize",
    "normalize_report": "ctxmodel.normalize",
    "read": "ctxmodel.codec",
    "recover": "ctxmodel.recover",
    "render": "ctxmodel.render",
    "repair": "ctxmodel.repair",
    "request_tokens": "ctxmodel.tokens",
    "validate": "ctxmodel.oracle",
    "visible_mask": "ctxmodel.visibility",
    "write": "ctxmodel.codec",
}
HEAVY = {"hypothesis", "tiktoken", "regex", "ctxmodel.tokens.counter", "ctxmodel.gate"}


def _loaded_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nsys.stdout.write('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


def test_all_names_what_the_table_names() -> None:
    assert sorted(ctxmodel.__all__) == sorted(HOMES)
    assert len(set(ctxmodel.__all__)) == len(ctxmodel.__all__)


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_public_name_imports_as_its_modules_object(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from ctxmodel import {name}", namespace)
    assert namespace[name] is getattr(importlib.import_module(HOMES[name]), name)
    assert getattr(ctxmodel, name) is namespace[name]


def test_star_import_binds_every_name() -> None:
    namespace: dict[str, object] = {}
    exec("from ctxmodel import *", namespace)
    assert set(HOMES) <= set(namespace)


@pytest.mark.parametrize("first", ["ctxmodel.recover", "ctxmodel.normalize", "ctxmodel.repair", "ctxmodel.render"])
def test_an_op_named_like_its_module_stays_the_function(first: str) -> None:
    """Importing the module first (its own name) must not leave the package's name the module."""
    name = first.rpartition(".")[2]
    code = f"import {first}\nimport ctxmodel\nassert callable(ctxmodel.{name}), ctxmodel.{name}"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_importing_the_package_loads_no_hypothesis_and_no_tokenizer() -> None:
    loaded = _loaded_after("import ctxmodel\nfrom ctxmodel import normalize, recover, repair, validate, load")
    assert not HEAVY & loaded, HEAVY & loaded


def test_the_counter_loads_on_first_use() -> None:
    loaded = _loaded_after("import ctxmodel\nctxmodel.get_counter('zoo')")
    assert "ctxmodel.tokens.counter" in loaded
    assert "hypothesis" not in loaded


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        ctxmodel.no_such_name  # noqa: B018


def test_the_harness_runs_from_its_public_names(tmp_path: Path) -> None:
    """A property run by ``ctxmodel.run`` against a target ``ctxmodel.open_target`` opened, with a
    ``ctxmodel.RunConfig`` of a ``ctxmodel.get_profile`` profile: what a maintainer's script needs,
    without reaching into the harness's modules (``ctxmodel.check`` is the catalogue's decorator,
    checked above; registering one here would add it to every later test's registry)."""
    from ctxmodel.properties.registry import get

    target = ctxmodel.open_target("reference")
    try:
        config = ctxmodel.RunConfig(profile=ctxmodel.get_profile("ci"), max_examples=5, database=None,
                                    fixtures_dir=tmp_path)
        report = ctxmodel.run([get("trim.fits")], config, target=target)
    finally:
        target.close()
    assert isinstance(report, ctxmodel.GateReport)
    [outcome] = report.outcomes
    assert outcome.status == "passed" and outcome.examples == 5
