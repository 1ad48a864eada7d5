"""The test-stub corpus: generated modules parse, are collected, and their doctest assertions pass.

``tests/data/test_stubs/`` holds small realistic modules (utilities, parsers, validators, a
package, classes with methods) whose docstrings carry doctests with correct expected values
and whose functions raise on simple conditions. The held-out answers are the doctests
themselves: a first pytest run checks them with ``--doctest-modules`` against the real code,
then the generated tests must reproduce them.

For every public function and method of the corpus, the tests are generated into a temporary
copy, placed by ``test_path`` and merged into one test module per corpus module, as the server
does. Then, in subprocesses with a time limit: ``pytest --collect-only`` (every module is
collected, every test function found) and a real run. Tests are told apart by name:
``*_example_<n>`` doctest-derived, ``*_returns_<n>`` return values the evaluator computed,
``*_raises_*`` pytest.raises cases, ``*_property`` hypothesis
stubs, ``*_todo*`` skipped TODOs.

Floors: every generated module parses and is collected; at least 90% of the doctest-derived
assertions pass; every doctest example with an expected output became a test. A generator that
returns nothing or TODOs only fails them.
"""

from __future__ import annotations

import ast
import doctest
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fastedit_lsp.engines import test_stubs as stubs

CORPUS = Path(__file__).resolve().parent.parent / "data" / "test_stubs"
DOCTEST_FLOOR = 0.90
# A hang guard for the subprocesses, not a performance assertion.
SUBPROCESS_LIMIT_S = 240


@dataclass
class Run:
    root: Path
    single: Path
    modules: list[Path]
    targets: int
    defined: dict[str, list[str]]  # test module -> its test function names
    collect: subprocess.CompletedProcess[str]
    outcomes: dict[str, str] = field(default_factory=dict)  # "file::name" -> outcome
    doctest_outcomes: dict[str, str] = field(default_factory=dict)
    output: str = ""


def corpus_targets(source: str) -> list[stubs.Target]:
    """Every public function and method, found the way the server finds them: by a line."""
    targets = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
            "_"
        ):
            target = stubs.find_target(source, node.lineno - 1)
            if target.lineno == node.lineno - 1:
                targets.append(target)
    return sorted(targets, key=lambda t: t.lineno)


def pytest_subprocess(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_LIMIT_S,
        check=False,
    )


def junit_outcomes(path: Path) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        if "failure" in kinds or "error" in kinds:
            outcomes[key] = "failed"
        elif "skipped" in kinds:
            outcomes[key] = "skipped"
        else:
            outcomes[key] = "passed"
    return outcomes


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("corpus")
    shutil.copytree(CORPUS, root, dirs_exist_ok=True)
    tests_dir = root / "tests"
    tests_dir.mkdir()
    modules = sorted(p for p in root.rglob("*.py") if p.name != "__init__.py")
    package_dirs = [str(p.parent) for p in root.rglob("__init__.py")]
    targets = 0
    single = root / "single"  # each generated module as generate() returned it
    single.mkdir()
    for module_path in modules:
        source = module_path.read_text()
        module = stubs.module_name(str(module_path), str(root), package_dirs)
        destination = Path(stubs.test_path(str(module_path), str(root), [str(tests_dir)]))
        for target in corpus_targets(source):
            generated = stubs.generate(source, target, module)
            ast.parse(generated)
            targets += 1
            name = f"test_{module.replace('.', '_')}_{target.qualname.replace('.', '_')}.py"
            (single / name).write_text(generated)
            if destination.exists():
                generated = stubs.merge(destination.read_text(), generated)
            destination.write_text(generated)
    defined = {}
    for test_module in sorted(tests_dir.glob("test_*.py")):
        tree = ast.parse(test_module.read_text())  # every generated module parses
        defined[test_module.name] = [
            n.name
            for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
        ]

    collect = pytest_subprocess(root, "--collect-only", "-q", "tests")
    result = Run(root, single, modules, targets, defined, collect)
    junit = root / "junit.xml"
    executed = pytest_subprocess(
        root,
        "-q",
        "--doctest-modules",
        f"--junitxml={junit}",
        "--hypothesis-seed=0",
        "--timeout=60",
        *(str(m.relative_to(root)) for m in modules),
        "tests",
    )
    result.output = executed.stdout[-4000:] + executed.stderr[-2000:]
    for key, outcome in junit_outcomes(junit).items():
        if key.startswith("tests."):
            result.outcomes[key] = outcome
        else:
            result.doctest_outcomes[key] = outcome
    return result


def kind(key: str) -> str:
    name = key.rsplit("::", 1)[-1]
    if "_todo" in name:
        return "todo"
    if re.search(r"_example_\d+$", name):
        return "example"
    if re.search(r"_returns_\d+$", name):
        return "returns"
    if re.search(r"_raises_\w+?(_\d+)?$", name):
        return "raises"
    if re.search(r"_property(_\d+)?$", name):
        return "property"
    return "other"


def counts(outcomes: dict[str, str], which: str) -> tuple[int, int, int]:
    """(total, passed, failed) of one kind of test."""
    chosen = [o for k, o in outcomes.items() if kind(k) == which]
    return len(chosen), chosen.count("passed"), chosen.count("failed")


def expected_examples() -> int:
    """Doctest examples with an expected output or traceback in the corpus, counted apart."""
    parser = doctest.DocTestParser()
    total = 0
    for path in CORPUS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                docstring = ast.get_docstring(node) or ""
                total += sum(
                    1
                    for example in parser.get_examples(docstring)
                    if example.want or example.exc_msg
                )
    return total


def test_corpus_has_at_least_20_functions_with_doctests_or_raises() -> None:
    functions = 0
    for path in CORPUS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                has_doctest = ">>>" in (ast.get_docstring(node) or "")
                has_raise = any(isinstance(n, ast.Raise) for n in ast.walk(node))
                functions += has_doctest or has_raise
    assert functions >= 20


def test_corpus_doctests_are_right(run: Run) -> None:
    """The held-out answers: the corpus's own doctests pass against its real code."""
    assert run.doctest_outcomes, run.output
    failed = [k for k, o in run.doctest_outcomes.items() if o != "passed"]
    assert not failed, run.output


def test_every_generated_module_parses_and_is_collected(run: Run) -> None:
    assert run.collect.returncode == 0, run.collect.stdout + run.collect.stderr
    collected = [line for line in run.collect.stdout.splitlines() if line.startswith("tests/test_")]
    for test_module, names in run.defined.items():
        found = sorted(
            line.split("::", 1)[1]
            for line in collected
            if line.startswith(f"tests/{test_module}::")
        )
        assert found == sorted(names), test_module
    # One test module per corpus module, each placed by test_path in the tests folder.
    assert sorted(run.defined) == sorted(f"test_{m.stem}.py" for m in run.modules)


def test_doctest_derived_assertions_pass(run: Run) -> None:
    examples, passed, _ = counts(run.outcomes, "example")
    raises, raises_passed, _ = counts(run.outcomes, "raises")
    given, given_passed, _ = counts(run.outcomes, "property")
    returns, returns_passed, _ = counts(run.outcomes, "returns")
    todos, _, _ = counts(run.outcomes, "todo")
    collected = len(run.outcomes)
    rate = passed / examples if examples else 0.0
    print(  # noqa: T201 (the corpus figures are the point of this test)
        f"\ntest stubs corpus: {len(run.modules)} modules, {run.targets} functions and methods, "
        f"{collected} generated tests collected\n"
        f"  doctest-derived assertions: {passed}/{examples} pass ({rate:.1%}; floor "
        f"{DOCTEST_FLOOR:.0%})\n"
        f"  raises cases: {raises} ({raises_passed} pass)\n"
        f"  return values the evaluator computed: {returns} ({returns_passed} pass)\n"
        f"  hypothesis @given stubs: {given} ({given_passed} pass; a failure is a finding "
        "about the corpus code)\n"
        f"  skipped TODOs: {todos}"
    )
    assert examples >= expected_examples(), "every doctest example with an output is a test"
    assert rate >= DOCTEST_FLOOR, run.output
    assert all(o == "skipped" for k, o in run.outcomes.items() if kind(k) == "todo")
    assert "other" not in {kind(k) for k in run.outcomes}
    assert returns_passed == returns, run.output


def test_generated_modules_are_lint_clean(run: Run) -> None:
    """ruff's default rules and import sorting on each module as generated; merged modules
    are checked without import sorting (merge adds import lines, it does not rewrite them)."""
    ruff = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--quiet"]
    single = subprocess.run(
        [*ruff, "--select", "E4,E7,E9,F,W,I", str(run.single)],
        cwd=run.root,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_LIMIT_S,
        check=False,
    )
    assert single.returncode == 0, single.stdout + single.stderr
    merged = subprocess.run(
        [*ruff, "--select", "E4,E7,E9,F,W", "tests"],
        cwd=run.root,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_LIMIT_S,
        check=False,
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
