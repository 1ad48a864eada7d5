"""Offline syntax repair beyond Python, measured on mutants of code nobody here wrote.

Real files (read where ``.ci/run`` installs them, the same sources as the parse check's corpus:
tests/unit/test_parse_check_corpus.py) that parse cleanly are broken inside a real function at a
seeded random place, one mutation each, in equal shares: delete a closer (``)``, ``]``, ``}``), a
semicolon, a closing quote, a comma. Mutants that still parse are dropped. The repair gets the
region the action gives it (:func:`error_region`: the first error's lines ± 2); a mutant counts as
repaired when the file parses again and every line changed lies inside that region. Printed per
language and mutant class, with how often the repair restored the original exactly.
Floors: >= 70 % repaired over all mutants, >= 60 % per class (per language, where a class has at
least :data:`MIN_CLASS` mutants), and no line changed outside the region.
"""

from __future__ import annotations

import difflib
import os
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fastedit_lsp.engines import parse as ts_parse
from fastedit_lsp.engines.syntax_fix.treesitter import error_region, repair
from tests.support.summary_figures import section_lines

from .test_parse_check_corpus import SOURCES, VSCODE_E2E, _files, _read

#: Where ``.ci/run`` installs the npm package ``edge-js`` (its C# sources; npm's node-gyp ships
#: only two C# files).
CORPORA = Path.home() / ".cache" / "fastedit" / "corpora"


#: More of each: C# from edge-js; JavaScript written with semicolons (npm's own omits them)
#: from code-server's dependencies (editors/vscode/scripts/e2e-setup.sh).
EXTRA = {
    "c_sharp": ([f"{CORPORA}/node_modules/edge-js/**/*.cs"], "edge-js (npm, .ci/run)"),
    "javascript": (
        [f"{VSCODE_E2E}/cs/node_modules/*/lib/*.js", f"{VSCODE_E2E}/cs/node_modules/*/*.js"],
        "code-server's dependencies",
    ),
}


def _sources(language: str) -> tuple[Callable[[], Iterator[tuple[str, str]]], str]:
    make, package = SOURCES[language]
    if language not in EXTRA:
        return make, package
    patterns, extra = EXTRA[language]

    def more() -> Iterator[tuple[str, str]]:
        yield from make()
        yield from _read([p for p in _files(patterns) if ".min." not in p])

    return more, f"{package} and {extra}"


SEED = "syntax-repair"
FILES = 24
MAX_BYTES = 70_000
PER_CLASS = 16
MIN_CLASS = 5
FLOOR = 0.70
CLASS_FLOOR = 0.60
KINDS = {
    "closer": frozenset({")", "]", "}"}),
    "semicolon": frozenset({";"}),
    "quote": frozenset({'"', "'", "`"}),
    "comma": frozenset({","}),
}
#: Function-like nodes per grammar: mutations land inside one.
FUNCTIONS = {
    "javascript": {"function_declaration", "method_definition", "function_expression"},
    "typescript": {"function_declaration", "method_definition", "function_expression"},
    "go": {"function_declaration", "method_declaration"},
    "rust": {"function_item"},
    "java": {"method_declaration", "constructor_declaration"},
    "c": {"function_definition"},
    "cpp": {"function_definition"},
    "c_sharp": {"method_declaration", "constructor_declaration"},
}


def _mutants(language: str, files: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(class, original, mutant)."""
    rng = random.Random(f"{SEED}/{language}")
    files = [(p, t) for p, t in files if len(t.encode("utf-8")) <= MAX_BYTES]
    rng.shuffle(files)
    by_kind: dict[str, list[tuple[str, str, str]]] = {kind: [] for kind in KINDS}
    used = 0
    for _path, text in files:
        if used >= FILES or all(len(v) >= PER_CLASS for v in by_kind.values()):
            break
        parsed = ts_parse.parse(language, text)
        if parsed.has_errors:
            continue
        functions = parsed.nodes(frozenset(FUNCTIONS[language]))
        if not functions:
            continue
        used += 1
        leaves = parsed.nodes()
        for kind, tokens in KINDS.items():
            # Deleting a JavaScript semicolon mostly leaves valid code (ASI): more tries.
            for _ in range(PER_CLASS // 2):
                if len(by_kind[kind]) >= PER_CLASS:
                    break
                _type, f_start, f_end, _first = rng.choice(functions)
                chosen = [
                    (start, end)
                    for type_, start, end, first in leaves
                    if f_start <= start < f_end
                    and type_ in tokens
                    and end - start == 1
                    # A closing quote: not the string's first child.
                    and (kind != "quote" or not first)
                ]
                if not chosen:
                    continue
                start, end = rng.choice(chosen)
                data = parsed.data
                mutant = (data[:start] + data[end:]).decode("utf-8", "surrogatepass")
                if ts_parse.parse(language, mutant).has_errors:
                    by_kind[kind].append((kind, text, mutant))
    return [m for ms in by_kind.values() for m in ms]


def _changed_lines(old: str, new: str) -> set[int]:
    """0-based lines of ``old`` that ``new`` changes (an insertion counts on its line)."""
    matcher = difflib.SequenceMatcher(
        None, old.splitlines(keepends=True), new.splitlines(keepends=True), autojunk=False
    )
    out: set[int] = set()
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            out.update(range(i1, max(i2, i1 + 1)))
    return out


def _attempt(language: str, mutant: str) -> tuple[str | None, tuple[int, int]]:
    found = error_region(ts_parse.parse(language, mutant))
    _problem, first, last = found if found is not None else (None, 0, 0)
    lines = mutant.splitlines(keepends=True)
    start = sum(len(line) for line in lines[:first])
    end = start + len("".join(lines[first : last + 1]).rstrip("\r\n"))
    fixed = repair(language, mutant, start, end)
    if fixed is None:
        return None, (first, last)
    return mutant[:start] + fixed.text + mutant[end:], (first, last)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "syntax repair corpus (beyond Python)")


@pytest.mark.parametrize("language", sorted(FUNCTIONS))
def test_offline_repair_of_mutants(language: str, figures: list[str]) -> None:
    make, package = _sources(language)
    files = list(make())
    if len(files) < 2:
        message = f"no {language} sources installed: install {package}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    mutants = _mutants(language, files)
    total: Counter[str] = Counter()
    repaired: Counter[str] = Counter()
    exact: Counter[str] = Counter()
    outside = 0
    for kind, original, mutant in mutants:
        total[kind] += 1
        fixed, (first, last) = _attempt(language, mutant)
        if fixed is None:
            continue
        changed = _changed_lines(mutant, fixed)
        if not changed <= set(range(first, last + 1)):
            outside += 1
            continue
        if not ts_parse.parse(language, fixed).has_errors:
            repaired[kind] += 1
            exact[kind] += fixed == original
    count = sum(total.values())
    share = sum(repaired.values()) / max(1, count)
    per_class = "; ".join(
        f"{kind} {repaired[kind]}/{total[kind]} ({exact[kind]} exact)" for kind in KINDS
    )
    figures.append(
        f"{language}: {sum(repaired.values())}/{count} repaired ({share:.1%}, floor "
        f"{FLOOR:.0%}; {sum(exact.values())} restored exactly); {per_class}; {outside} changed "
        f"lines outside the region; from {package}"
    )
    assert count >= 20
    assert outside == 0
    assert share >= FLOOR
    for kind in KINDS:
        if total[kind] >= MIN_CLASS:
            assert repaired[kind] / total[kind] >= CLASS_FLOOR, (kind, repaired[kind], total[kind])
