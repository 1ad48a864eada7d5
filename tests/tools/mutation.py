"""Generated tests measured on third-party code: do they pass, and which mutants do they kill.

The offline generator writes tests for the top-level functions of installed modules (read where
pip installed them, never copied here); ``mutation_worker.py`` runs them in a subprocess with a
time limit, on the unchanged code and on simple AST mutants of each function. Used by
``test_test_stubs_mutation.py`` (held-out packages, floors) and, for tuning on other packages,
as a script: ``python tests/tools/mutation.py humanize.number inflection boltons.strutils``.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.machinery
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastedit_lsp.engines import test_stubs as stubs
from fastedit_lsp.project import recorder

WORKER = Path(__file__).with_name("mutation_worker.py")
#: The recorder's budget for one function and for a whole corpus (far above what it takes).
RECORD_TARGET_SECONDS = 3.0
RECORD_SECONDS = 240.0


@dataclass
class Case:
    module: str
    qualname: str
    lineno: int  # 1-based line of the def
    generated: str


@dataclass
class Report:
    results: list[dict[str, Any]]
    seconds: float
    functions: int = 0
    failing: list[str] = field(default_factory=list)  # functions with a test failing unchanged
    mutants: int = 0
    killed: int = 0
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (killed, total)
    tests: Counter[str] = field(default_factory=Counter)  # kind of test -> count

    @property
    def pass_rate(self) -> float:
        return 1 - len(self.failing) / self.functions if self.functions else 0.0

    @property
    def score(self) -> float:
        return self.killed / self.mutants if self.mutants else 0.0

    def summary(self, title: str) -> str:
        kinds = ", ".join(f"{k} {kl}/{t}" for k, (kl, t) in sorted(self.by_kind.items()))
        tests = ", ".join(f"{k} {n}" for k, n in sorted(self.tests.items()))
        return (
            f"{title}: {self.functions} functions, generated tests ({tests}); "
            f"{self.functions - len(self.failing)}/{self.functions} functions' tests pass on the "
            f"unchanged code ({self.pass_rate:.1%}); mutation score {self.killed}/{self.mutants} "
            f"({self.score:.1%}: {kinds}); {self.seconds:.1f} s"
            + (f"\n  failing: {', '.join(self.failing)}" if self.failing else "")
        )


def module_file(module: str) -> Path:
    """Where an installed module's source is, found without importing it (or its package)."""
    path: list[str] | None = None
    spec = None
    for part in module.split("."):
        spec = importlib.machinery.PathFinder.find_spec(part, path)
        assert spec is not None, module
        path = list(spec.submodule_search_locations or [])
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin)


def _reader(module: str) -> Callable[[str], str | None]:
    """The project's other modules, as the server reads a workspace: the same top package."""
    top = module.split(".")[0]

    def read(dotted: str) -> str | None:
        if dotted.split(".")[0] != top:
            return None
        try:
            return module_file(dotted).read_text(encoding="utf-8")
        except (AssertionError, ImportError, ValueError, OSError):
            return None

    return read


def _targets(modules: list[str]) -> list[tuple[str, str, stubs.Target, int]]:
    """(module, its source, target, line of the def) for every top-level function (not dunder)
    of each module, in source order."""
    out: list[tuple[str, str, stubs.Target, int]] = []
    for module in modules:
        source = module_file(module).read_text(encoding="utf-8")
        for node in ast.parse(source).body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.name.startswith("__") or any(
                "overload" in ast.unparse(d) for d in node.decorator_list
            ):
                continue  # dunders; typing stubs of an overloaded function
            out.append((module, source, stubs.find_target(source, node.lineno - 1), node.lineno))
    return out


def cases(modules: list[str]) -> list[Case]:
    """The offline generator's tests (static: nothing of the package is run) for every
    top-level function (not dunder) of each module, in source order."""
    return [
        Case(module, target.qualname, line, stubs.generate(source, target, module, _reader(module)))
        for module, source, target, line in _targets(modules)
    ]


def recorded_cases(modules: list[str]) -> tuple[list[Case], float]:
    """As :func:`cases`, with recorded tests: the recorder runs the functions as the server
    does with ``tests.run`` on (``project.recorder``, one worker for all of them); and how long
    the recording took."""
    targets = _targets(modules)
    plans = [
        stubs.record_plan(source, target, module, _reader(module))
        for module, source, target, _ in targets
    ]
    wanted = [p for p in plans if p is not None]
    started = time.monotonic()
    recordings = iter(
        asyncio.run(
            recorder.record(
                wanted,
                [],
                target_seconds=RECORD_TARGET_SECONDS,
                seconds=RECORD_SECONDS,
            )
        )
    )
    seconds = time.monotonic() - started
    out: list[Case] = []
    for (module, source, target, line), plan in zip(targets, plans, strict=True):
        recording = next(recordings) if plan is not None else None
        generated = stubs.generate(source, target, module, _reader(module), recording)
        out.append(Case(module, target.qualname, line, generated))
    return out, seconds


def kind_of(name: str) -> str:
    for kind in ("todo", "example", "returns", "raises", "property", "recorded"):
        if f"_{kind}" in name:
            return kind
    return "other"


def measure(all_cases: list[Case], timeout: float = 600) -> Report:
    """Run the generated tests and the mutants in a subprocess; the figures."""
    with tempfile.TemporaryDirectory(prefix="fastedit-mutation-") as tmp:
        job_cases = []
        for index, case in enumerate(all_cases):
            test_file = Path(tmp) / f"test_generated_{index}.py"
            test_file.write_text(case.generated, encoding="utf-8")
            job_cases.append(
                {
                    "module": case.module,
                    "qualname": case.qualname,
                    "lineno": case.lineno,
                    "test_file": str(test_file),
                }
            )
        output = Path(tmp) / "out.json"
        job = Path(tmp) / "job.json"
        job.write_text(
            json.dumps({"cases": job_cases, "tests_dir": tmp, "output": str(output)}),
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(WORKER), str(job)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        seconds = time.monotonic() - started
        if not output.exists():
            raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
        results = json.loads(output.read_text(encoding="utf-8"))
    report = Report(results, seconds, functions=len(results))
    kinds: dict[str, list[int]] = {}
    for result in results:
        name = f"{result['module']}.{result['qualname']}"
        outcomes = [o for o, _ in result["tests"].values()]
        for test in result["tests"]:
            report.tests[kind_of(test)] += 1
        if result.get("error") or "fail" in outcomes:
            report.failing.append(name)
        for mutant in result["mutants"]:
            counts = kinds.setdefault(mutant["kind"], [0, 0])
            counts[0] += mutant["killed"]
            counts[1] += 1
    report.mutants = sum(t for _, t in kinds.values())
    report.killed = sum(k for k, _ in kinds.values())
    report.by_kind = {k: (v[0], v[1]) for k, v in kinds.items()}
    return report


def _main() -> None:
    modules = sys.argv[1:]
    recorded = os.environ.get("RECORDED")
    if recorded:
        all_cases, record_seconds = recorded_cases(modules)
        sys.stderr.write(f"recorded in {record_seconds:.1f} s\n")
    else:
        all_cases = cases(modules)
    report = measure(all_cases)
    verbose = os.environ.get("VERBOSE")
    for result in report.results:
        fails = {n: r for n, (o, r) in result["tests"].items() if o == "fail"}
        survived = [m for m in result["mutants"] if not m["killed"]]
        if verbose or fails:
            sys.stderr.write(
                f"{result['module']}.{result['qualname']}: {len(result['tests'])} tests, "
                f"{len(result['mutants']) - len(survived)}/{len(result['mutants'])} killed "
                f"{result.get('error', '')}{result.get('mutant_error', '')}\n"
            )
            for name, reason in fails.items():
                sys.stderr.write(f"   FAIL {name}: {reason[:200]}\n")
            if verbose:
                for m in survived:
                    sys.stderr.write(f"   survived {m['kind']} line {m['line']}\n")
    sys.stderr.write(report.summary(" ".join(modules)) + "\n")


if __name__ == "__main__":
    _main()
