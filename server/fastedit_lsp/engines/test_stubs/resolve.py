"""The names check on a generated test module: every name a test reads resolves.

A docstring example runs in its module's namespace, where ``math`` may be bound by an import the
test module does not repeat, or by nothing (the example assumed it). Each test is checked by the
names check (``engines.names``) against the generated module: a standard-library module read by
name and bound nowhere gets ``import <module>``; a test reading any other name that resolves to
nothing is left out (a draft that would fail with ``NameError`` tests nothing).
"""

from __future__ import annotations

from collections.abc import Callable

from ..names import check_names
from ..names.python_stdlib import is_stdlib
from ..parse_tree import parse
from .imports import _Imports

#: Assembles the module from its imports and rendered tests.
Assemble = Callable[[str, list[str]], str]


def resolved(imports: _Imports, tests: list[str], assemble: Assemble) -> list[str]:
    """``tests`` (rendered) whose names resolve, with the imports they lacked added to
    ``imports``; a test reading a name nothing can bind is left out."""
    for _ in range(3):
        missing, unresolved = _findings(imports.render(), tests, assemble)
        if not missing and not unresolved:
            break
        for module in missing:
            imports.plain(module)
        tests = [test for i, test in enumerate(tests) if i not in unresolved]
    return tests


def _findings(header: str, tests: list[str], assemble: Assemble) -> tuple[set[str], set[int]]:
    """The standard-library modules the tests read unbound, and the tests that read another
    unresolved name (by index)."""
    text = assemble(header, tests)
    parsed = parse("python", text)
    data = parsed.data
    missing: set[str] = set()
    unresolved: set[int] = set()
    position = 0
    for i, test in enumerate(tests):
        at = text.index(test, position)
        position = at + len(test)
        start = len(text[:at].encode("utf-8", "surrogatepass"))
        end = start + len(test.encode("utf-8", "surrogatepass"))
        verdict = check_names("python", parsed.tree, data, start, end)
        for finding in verdict.findings:
            if finding.kind == "undefined" and is_stdlib(finding.name) and "." not in finding.name:
                missing.add(finding.name)
            else:
                unresolved.add(i)
    return missing, unresolved
