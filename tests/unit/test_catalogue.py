"""The catalogue: one registration, a listing that matches PROPERTIES.md, small public faces, no
import cycles, and no judge that decides with the reference (contract §7, §8)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxmodel
import ctxmodel.properties
import ctxmodel.strategies
from ctxmodel.cli import cli
from ctxmodel.cli.gate import properties_table
from ctxmodel.partition import EVERY_REGIME, Plan, judged
from ctxmodel.properties import catalogue
from ctxmodel.properties.registry import all_properties, get

ROOT = Path(__file__).parents[2]
PACKAGE = Path(ctxmodel.__file__).parent
#: Where each package's files are: strategies/ and properties/ are mapped into ctxmodel from the
#: repository's top (pyproject's package-dir), not folders under ctxmodel/.
PACKAGE_ROOTS = {
    module.__name__: Path(module.__file__).parent
    for module in (ctxmodel, ctxmodel.strategies, ctxmodel.properties)
    if module.__file__ is not None
}


def test_properties_md_carries_the_registry_table() -> None:
    text = (ROOT / "PROPERTIES.md").read_text(encoding="utf-8")
    table = properties_table()
    assert table in text, "PROPERTIES.md's table differs from `ctxmodel properties --format markdown`"


def test_the_properties_command_lists_every_property() -> None:
    result = CliRunner().invoke(cli, ["properties"])
    assert result.exit_code == 0, result.output
    for prop in all_properties():
        assert f"{prop.id}  [{prop.op}]  {prop.clause}" in result.output


def test_a_duplicate_id_is_refused() -> None:
    (prop, *_) = all_properties()
    with pytest.raises(ValueError, match="duplicate property id"):
        catalogue.check(prop.id, op=prop.op, clause=prop.clause, summary="again", params=prop.params)(prop.check)


def test_a_property_without_a_plan_declares_its_params_or_its_op_does() -> None:
    with pytest.raises(ValueError, match="declares its params"):
        catalogue.check("undeclared.unplanned", op="undeclared", clause="contract §3", summary="s")


def test_a_property_draws_its_ops_params_and_reads_its_ops_policies() -> None:
    """What every property of an op shares is declared once with the op, not wrapped per suite."""
    op = catalogue.declared_ops()["trim"]
    for prop in (p for p in catalogue.registered().values() if p.op == "trim"):
        assert prop.policies[: len(op.policies)] == op.policies == ("dialect",), prop.id
    assert get("trim.fits").params is op.params
    assert op.rebudget is not None and catalogue.declared_ops()["recover"].rebudget is not None


def test_a_recover_property_without_a_plan_draws_and_judges_every_regime() -> None:
    """``purity.recover`` declares no plan: it gets the default, never a missing table entry."""
    prop = get("purity.recover")
    assert prop.plan == Plan(EVERY_REGIME)
    assert judged(prop.id, prop.op) == EVERY_REGIME


def test_an_op_is_declared_once() -> None:
    (op, inputs), *_ = catalogue.declared_ops().items()
    with pytest.raises(ValueError, match="declared twice"):
        catalogue.declare_op(op, params=inputs.params, purity_witnesses=inputs.purity_witnesses)


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package, root in PACKAGE_ROOTS.items():
        for path in root.rglob("*.py"):
            rel = path.relative_to(root).with_suffix("")
            name = ".".join((package, *rel.parts)).removesuffix(".__init__")
            out.setdefault(name, path)
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every import of a ctxmodel module, wherever it stands: a function-level import is still a
    dependency, and so is one under ``TYPE_CHECKING`` (two modules that need each other's types are
    one concern split in two, whether or not the interpreter ever sees the circle)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(name, path, known) for name, path in modules.items()}
    # A package's __init__ importing its submodules is how a package is built, not a cycle.
    for name in graph:
        own = modules[name].name == "__init__.py"
        graph[name] = {t for t in graph[name] if not (own and t.startswith(name + "."))}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle_between_modules() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


LAYERS = {
    # core: the model and the reference; it knows nothing of Hypothesis, properties or the engine
    "core": re.compile(r"ctxmodel\.(model|codec|errors|exitcodes|policies|visibility|normalize|oracle|recover|"
                       r"repair|tokens|render|contract_data|json_types)(\.|$)"),
}


def test_the_core_imports_no_engine_properties_or_cli() -> None:
    graph = _graph()
    for name, deps in graph.items():
        if LAYERS["core"].match(name):
            upper = r"ctxmodel\.(properties|strategies|gate|engine|events|parallel|report|fuzz|cli|pytest_plugin)"
            bad = [d for d in deps if re.match(upper, d)]
            assert not bad, f"{name} (core) imports {bad}"


def test_every_run_of_properties_goes_through_the_engine() -> None:
    """One orchestrator: only the engine and its worker processes call the property runner; ``check``,
    the pytest plugin and the fuzz campaign (a scheduler of the same workers) run through them."""
    graph = _graph()
    callers = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if "run_property(" in path.read_text(encoding="utf-8")
    )
    assert callers == ["engine.py", "gate.py", "parallel_worker.py"], callers
    assert "ctxmodel.pool" in graph["ctxmodel.fuzz.campaign"] and "ctxmodel.gate" not in graph["ctxmodel.fuzz.campaign"]
    assert "ctxmodel.engine" in graph["ctxmodel.cli.gate"] and "ctxmodel.engine" in graph["ctxmodel.pytest_plugin"]


def test_the_pytest_plugin_never_imports_the_cli() -> None:
    deps = _graph()["ctxmodel.pytest_plugin"]
    assert not [d for d in deps if d.startswith("ctxmodel.cli")], deps


def test_no_judge_decides_with_the_reference() -> None:
    """Properties decide with ``ctxmodel.properties.yardsticks``, never with the reference's
    visibility, normalize or recover; the one exception asks the reference by design."""
    graph = _graph()
    reference = {"ctxmodel.visibility", "ctxmodel.normalize", "ctxmodel.recover"}
    for name, deps in graph.items():
        if name.startswith("ctxmodel.properties.") and name != "ctxmodel.properties.suite_recover":
            assert not deps & reference, f"{name} imports {deps & reference}"
    text = (PACKAGE_ROOTS["ctxmodel.properties"] / "suite_recover.py").read_text(encoding="utf-8")
    assert text.count("from ctxmodel.recover import") == 1  # recover.gives-up-where-possible, by design
