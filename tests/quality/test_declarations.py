"""Every variant of the zoo and the outside folder is declared the one way ``tests.quality.variants``
reads: a bug names its mistake and the clause it breaks, a legitimate variant its choice, and each
is a ``python:`` target the gate can open by its package name (no ``sys.path`` of its own)."""

from __future__ import annotations

import pytest

from ctxmodel.targets.python import load_ops
from tests.quality.variants import Variant, collect, expected_of

PACKAGES = ("tests.quality.zoo", "tests.quality.outside.variants")
ALL = [v for package in PACKAGES for v in collect(package)]


def test_the_names_say_what_is_expected() -> None:
    assert expected_of("bug_x") == "bug"
    assert expected_of("legit_x") == "legit"
    assert expected_of("_common") is None
    assert expected_of("run") is None


def test_each_folder_holds_bugs_and_legitimate_variants() -> None:
    for package in PACKAGES:
        found = collect(package)
        assert sum(v.expected == "bug" for v in found) >= 25, package
        assert sum(v.expected == "legit" for v in found) >= 7, package
        assert all(v.module == f"{package}.{v.name}" for v in found)


@pytest.mark.parametrize("variant", ALL, ids=[v.module.removeprefix("tests.quality.") for v in ALL])
def test_variant_is_declared_and_loads(variant: Variant) -> None:
    assert variant.description, f"{variant.name}: no docstring saying what it does"
    if variant.expected == "bug":
        assert variant.clause.startswith("contract §"), f"{variant.name}: no clause it breaks"
    _, ops = load_ops(variant.spec.removeprefix("python:"))
    assert "describe" in ops
