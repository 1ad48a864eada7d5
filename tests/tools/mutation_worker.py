"""Runs generated tests against installed packages and against mutants of the functions they test.

Run as a script in a subprocess (``python mutation_worker.py JOB.json``), never run by the test
process: it imports third-party code and swaps function bodies (``test_mutation_worker`` only
imports it, for :func:`run_test`'s time limit). ``JOB.json`` lists cases
(``module``, ``qualname``, ``lineno``, ``test_file``); the answer (JSON, written to the job's
``output`` file) gives, per case, each generated test's outcome on the unchanged code, and per
mutant whether the tests that passed on the unchanged code killed it.

A mutant replaces the ``__code__`` of the function object itself, so every reference to it (the
test module's import, a re-export, a decorator's wrapper) runs the mutant. Mutants (of the
function's own body only): statement deletion, ``return None``, comparison and arithmetic
operator swaps, constant changes; at most ``PER_KIND`` of each kind per function, spread over
the body.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.util
import inspect
import io
import json
import resource
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings

from fastedit_lsp.engines.test_stubs.variants import copy_tree
from fastedit_lsp.project.record_worker import function_behind

PER_KIND = 3
BASELINE_EXAMPLES = 100
MUTANT_EXAMPLES = 20
# Generous on a loaded machine: a test that times out on the unchanged code counts as failing.
TEST_SECONDS = 30.0
# A mutant that loops forever is killed by the time limit (a slow one, under load, too).
MUTANT_TEST_SECONDS = 2.0
MEMORY_LIMIT = 3 * 1024**3
#: How soon the time limit's alarm comes again if the code under test swallowed it.
_TIMEOUT_REPEAT = 0.1

settings.register_profile(
    "baseline",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=BASELINE_EXAMPLES,
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)
# A mutant is killed by a test's first failing example: no shrinking it, no explaining it
# (either may run the function hundreds of times more; the outcome, fail, is the same).
settings.register_profile(
    "mutants",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=MUTANT_EXAMPLES,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target],
    suppress_health_check=list(HealthCheck),
    print_blob=False,
)


class _Timeout(BaseException):
    pass


#: Whether a test is running under the time limit (an alarm outside one is ignored).
_armed = False


def _alarm(_signum: int, _frame: object) -> None:
    if _armed:
        raise _Timeout


class _Capsys:
    """Enough of pytest's ``capsys`` for the generated tests: ``readouterr().out``."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()

    def readouterr(self) -> types.SimpleNamespace:
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return types.SimpleNamespace(out=text, err="")


def run_test(test: Callable[..., object], seconds: float) -> tuple[str, str]:
    """("pass" | "skip" | "fail", a short reason)."""
    params = inspect.signature(test).parameters
    capsys = _Capsys()
    kwargs = {"capsys": capsys} if "capsys" in params else {}
    global _armed
    # The alarm repeats until disarmed: one raised where Python ignores it (a gc callback,
    # a trace function) does not let the test run on unbounded. It is disarmed before any
    # handler runs: one raised in a handler would escape this function and end the worker.
    signal.setitimer(signal.ITIMER_REAL, seconds, _TIMEOUT_REPEAT)
    _armed = True
    try:
        try:
            with contextlib.redirect_stdout(capsys.buffer) if kwargs else contextlib.nullcontext():
                test(**kwargs)
        finally:
            _armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        return "fail", "timeout"
    except BaseException as exc:
        if type(exc).__name__ in ("Skipped", "SkipTest"):
            return "skip", ""
        if isinstance(exc, KeyboardInterrupt):
            raise
        return "fail", f"{type(exc).__name__}: {str(exc)[:300]}"
    return "pass", ""


# -- mutants -------------------------------------------------------------------------------


_CMP_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_ARITH_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}


def _docstring_ids(fn: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first))
                ids.add(id(first.value))
    return ids


def _sites(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[tuple[int, ...]]]:
    """Mutation sites by kind: paths (indices into a pre-order walk of the def)."""
    nodes = list(_walk(fn))
    docs = _docstring_ids(fn)
    joined = {id(v) for n in nodes if isinstance(n, ast.JoinedStr) for v in n.values}
    sites: dict[str, list[tuple[int, ...]]] = {
        "statement deletion": [],
        "return None": [],
        "comparison swap": [],
        "arithmetic swap": [],
        "constant change": [],
    }
    # Annotations and decorators are not the function's behaviour.
    skipped = {
        id(n)
        for part in [
            *fn.decorator_list,
            *([fn.returns] if fn.returns else []),
            *(a.annotation for a in ast.walk(fn.args) if isinstance(a, ast.arg) and a.annotation),
        ]
        for n in ast.walk(part)
    }
    for index, node in enumerate(nodes):
        if node is fn or id(node) in skipped:
            continue
        if (
            isinstance(node, ast.stmt)
            and id(node) not in docs
            and not isinstance(node, ast.Pass | ast.FunctionDef | ast.AsyncFunctionDef)
            and not isinstance(node, ast.ClassDef | ast.Global | ast.Nonlocal)
        ):
            sites["statement deletion"].append((index,))
        if isinstance(node, ast.Return) and not (
            node.value is None
            or (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            sites["return None"].append((index,))
        if isinstance(node, ast.Compare):
            for op_index, op in enumerate(node.ops):
                if type(op) in _CMP_SWAP:
                    sites["comparison swap"].append((index, op_index))
        if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _ARITH_SWAP:
            sites["arithmetic swap"].append((index,))
        if (
            isinstance(node, ast.Constant)
            and id(node) not in docs
            and id(node) not in joined
            and (
                isinstance(node.value, bool | int | float)
                or (isinstance(node.value, str) and node.value)
            )
        ):
            sites["constant change"].append((index,))
    return sites


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _walk(child)


def _spread(items: list[tuple[int, ...]], count: int) -> list[tuple[int, ...]]:
    if len(items) <= count:
        return items
    step = len(items) / count
    return [items[int(i * step + step / 2)] for i in range(count)]


def _mutate(fn: ast.AST, kind: str, site: tuple[int, ...]) -> ast.AST:
    clone = copy_tree(fn)
    nodes = list(_walk(clone))
    node = nodes[site[0]]
    if kind == "statement deletion":
        for parent in nodes:
            for field, value in ast.iter_fields(parent):
                if isinstance(value, list) and any(v is node for v in value):
                    setattr(
                        parent,
                        field,
                        [ast.copy_location(ast.Pass(), node) if v is node else v for v in value],
                    )
    elif kind == "return None":
        assert isinstance(node, ast.Return)
        node.value = ast.copy_location(ast.Constant(None), node)
    elif kind == "comparison swap":
        assert isinstance(node, ast.Compare)
        node.ops[site[1]] = _CMP_SWAP[type(node.ops[site[1]])]()
    elif kind == "arithmetic swap":
        assert isinstance(node, ast.BinOp | ast.AugAssign)
        node.op = _ARITH_SWAP[type(node.op)]()
    else:
        assert isinstance(node, ast.Constant)
        value = node.value
        if isinstance(value, bool):
            node.value = not value
        elif isinstance(value, int | float):
            node.value = value + 1
        else:
            node.value = "XX" + value + "XX"
    return clone


def _compile(
    mutated: ast.AST, classes: list[str], module: types.ModuleType, name: str
) -> types.FunctionType:
    body: ast.stmt = mutated  # type: ignore[assignment]
    assert isinstance(body, ast.FunctionDef | ast.AsyncFunctionDef)
    body.decorator_list = []
    for cls in reversed(classes):
        body = ast.ClassDef(
            name=cls, bases=[], keywords=[], body=[body], decorator_list=[], type_params=[]
        )
    tree = ast.fix_missing_locations(ast.Module(body=[body], type_ignores=[]))
    namespace = dict(vars(module))
    exec(compile(tree, module.__file__ or "<mutant>", "exec"), namespace)
    obj: Any = namespace[classes[0]] if classes else namespace[name]
    for cls in classes[1:]:
        obj = vars(obj)[cls]
    if classes:
        obj = vars(obj)[name]
    return obj  # type: ignore[no-any-return]


def _find_def(tree: ast.Module, qualname: str, lineno: int) -> tuple[ast.AST, list[str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == lineno:
            return node, qualname.split(".")[:-1]
    raise LookupError(qualname)


@functools.cache
def _tree(path: str) -> ast.Module:
    """A module's tree, parsed once for all its functions (mutants change copies)."""
    return ast.parse(Path(path).read_text(encoding="utf-8"))


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    started = time.monotonic()
    result: dict[str, Any] = {"module": case["module"], "qualname": case["qualname"]}
    try:
        module = importlib.import_module(case["module"])
        path = case["test_file"]
        spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        assert spec is not None and spec.loader is not None
        tests_module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tests_module)
    except BaseException as exc:  # an import error fails every test of the case
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["tests"] = {}
        result["mutants"] = []
        return result
    tests = {
        name: value
        for name, value in vars(tests_module).items()
        if name.startswith("test") and callable(value)
    }
    settings.load_profile("baseline")
    outcomes = {name: run_test(test, TEST_SECONDS) for name, test in tests.items()}
    result["tests"] = {name: list(outcome) for name, outcome in outcomes.items()}
    passing = [tests[n] for n, (o, _) in outcomes.items() if o == "pass"]
    mutants: list[dict[str, Any]] = []
    result["mutants"] = mutants
    try:
        original, caches = function_behind(module, case["qualname"])
        fn, classes = _find_def(_tree(module.__file__ or ""), case["qualname"], case["lineno"])
    except (TypeError, LookupError, OSError, KeyError, AttributeError) as exc:
        result["mutant_error"] = f"{type(exc).__name__}: {exc}"
        return result
    assert isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
    saved = original.__code__
    saved_defaults, saved_kwdefaults = original.__defaults__, original.__kwdefaults__
    settings.load_profile("mutants")
    nodes = list(_walk(fn))
    for kind, sites in _sites(fn).items():
        for site in _spread(sites, PER_KIND):
            try:
                mutant = _compile(_mutate(fn, kind, site), classes, module, fn.name)
                if mutant.__code__.co_freevars != saved.co_freevars:
                    continue
            except Exception:
                continue
            line = nodes[site[0]]
            killed_by = ""
            original.__code__ = mutant.__code__
            original.__defaults__ = mutant.__defaults__
            original.__kwdefaults__ = mutant.__kwdefaults__
            try:
                for cache in caches:
                    cache.cache_clear()
                for test in passing:
                    outcome, reason = run_test(test, MUTANT_TEST_SECONDS)
                    if outcome == "fail":
                        killed_by = f"{test.__name__}: {reason[:80]}"
                        break
            finally:
                original.__code__ = saved
                original.__defaults__ = saved_defaults
                original.__kwdefaults__ = saved_kwdefaults
                for cache in caches:
                    cache.cache_clear()
            mutants.append(
                {
                    "kind": kind,
                    "line": getattr(line, "lineno", 0),
                    "killed": bool(killed_by),
                    "by": killed_by,
                }
            )
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def main() -> None:
    # A test or a mutant that asks for gigabytes gets a MemoryError, not the machine's memory.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    sys.path.insert(0, job["tests_dir"])
    signal.signal(signal.SIGALRM, _alarm)
    out = [run_case(case) for case in job["cases"]]
    # A file, not stdout: the code under test may print.
    Path(job["output"]).write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main()
