"""C's and C++'s names check on injected mistakes in real third-party code, with the correct
answers as controls, per kind; the headers are read from disk as the server reads them
(``project.c_headers``). Built like ``test_names_check_corpus`` (the same held-out quarter of
files by a hash of the path, chosen before tuning). Sources: C — the examples of Debian's
``zlib1g-dev`` and ``nettle-dev``, the C of Go's runtime/cgo and misc/cgo (``golang-1.19-src``),
mypy's mypyc runtime (``lib-rt``, in site-packages); C++ — the native modules npm packages ship
(edge-js, which ``.ci/run`` unpacks under ``~/.cache/fastedit/corpora``; those under
``~/.cache/fastedit/vscode-e2e``'s code-server), greenlet's C++ (site-packages). Kinds:
``synonym`` (a call of a function the file defines, renamed), ``misspelled`` (a local's or
parameter's read), ``import`` (an ``#include <…>`` of the C library removed, the body reading
a name only it brings); no ``member`` kind (members are not checked).
"""

from __future__ import annotations

import functools
import os
import random
import re
import sysconfig
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tree_sitter import Node

from fastedit_lsp.actions import parse_check
from fastedit_lsp.core.document import Document
from fastedit_lsp.engines.names import c as c_names
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.engines.parse_trees import ParseTrees
from fastedit_lsp.project.c_headers import CHeaders
from tests.support.summary_figures import section_lines
from tests.unit.test_names_check_corpus import (
    MAX_BYTES,
    Sample,
    _Cut,
    _Function,
    _misspell,
    _synonym,
    held_out,
)

HOME = Path.home()
SITE = sysconfig.get_paths()["purelib"]
SOURCES = {
    "c": (
        "/usr/share/doc/zlib1g-dev/examples/*.c",
        "/usr/share/doc/nettle-dev/examples/*.c",
        "/usr/share/go-1.19/src/runtime/cgo/*.c",
        "/usr/share/go-1.19/misc/cgo/**/*.c",
        f"{SITE}/mypyc/lib-rt/**/*.c",
    ),
    "cpp": (
        f"{HOME}/.cache/fastedit/corpora/node_modules/edge-js/src/**/*.cpp",
        f"{HOME}/.cache/fastedit/vscode-e2e/**/node_modules/**/*.cpp",
        f"{HOME}/.cache/fastedit/vscode-e2e/**/node_modules/**/*.cc",
        f"{SITE}/greenlet/**/*.cpp",
        "/usr/share/go-1.19/misc/cgo/**/*.cc",
    ),
}
KINDS = ("synonym", "misspelled", "import")
#: Functions sampled per file at most; files per language at most.
PER_FILE = 8
FILES = 160
#: Floors: the false-alarm goal; caught: guards under the held-out figures, far below the goal
#: of 85 %: most files include a header that cannot be read (a build's generated header, one
#: found through the build's -I flags, Node's or another platform's), so their names are not
#: flagged. Held out, measured blind once: C 33/85 (38.8 %), 1/75 false alarms; C++ 19/131
#: (14.5 %), 1/123; both false alarms then fixed (a macro pasting tokens on a continuation
#: line; a file another includes), after which: C 31/85 (36.5 %), C++ 11/131 (8.4 %), 0 and 0.
CAUGHT_FLOORS = {"c": 0.30, "cpp": 0.05}
FALSE_ALARM_CEILING = 0.01
_HEADERS = CHeaders()
_INCLUDE = re.compile(r"^#include <([\w/.]+)>[^\n]*\n", re.M)


def _files(language: str) -> list[str]:
    found: set[str] = set()
    for pattern in SOURCES[language]:
        root = pattern.partition("*")[0]
        base = Path(root).parent if not root.endswith("/") else Path(root)
        glob = pattern[len(str(base)) + 1 :]
        if base.is_dir():
            found.update(str(p) for p in base.glob(glob) if p.stat().st_size <= MAX_BYTES)
    files = sorted(f for f in found if "/test" not in f.lower() or "misc/cgo" in f)
    rng = random.Random(f"names-corpus/{language}")
    return sorted(rng.sample(files, min(FILES, len(files))))


def _texts(node: Node, kinds: tuple[str, ...]) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        stack.extend(current.children)
        if current.type in kinds:
            yield current


def _name(function: Node) -> str | None:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return None
    name = declarator.child_by_field_name("declarator")
    if name is None or name.type != "identifier" or name.text is None:
        return None
    return name.text.decode()


def _samples_of(language: str, path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    if not text.isascii():
        return
    parsed = parse(language, text)
    every = set(re.findall(r"[A-Za-z_]\w*", text))
    functions = list(_texts(parsed.tree.root_node, ("function_definition",)))
    declared = {n for n in map(_name, functions) if n is not None}
    system = {m.group(1): m.group(0) for m in _INCLUDE.finditer(text)}
    picked = []
    for node in functions:
        body = node.child_by_field_name("body")
        if body is None or node.has_error or body.type != "compound_statement":
            continue
        statements = [c for c in body.named_children if c.type != "comment"]
        if len(statements) < 3:
            continue
        first = statements[len(statements) // 3]
        picked.append((node, first.start_byte, body.end_byte - 1))
    picked.sort(key=lambda f: f[1])
    for index, (node, lo, hi) in enumerate(rng.sample(picked, min(PER_FILE, len(picked)))):
        cut = _Cut(path, text, _Function(lo, hi, []), edit=index % 2 == 1)
        body = cut.body
        yield cut.sample("control", body)
        ids = sorted(
            (n.text.decode(), n.start_byte - lo, n.end_byte - lo)
            for n in _texts(node, ("identifier",))
            if n.text and lo <= n.start_byte < hi
        )
        ids.sort(key=lambda i: i[1])
        reads = [
            (i, n)
            for i, n in ((i, _node_at(parsed.tree, lo + i[1], lo + i[2])) for i in ids)
            if n is not None and not c_names.declares(n)
        ]
        calls = [
            i
            for i, n in reads
            if i[0] in declared
            and n.parent is not None
            and n.parent.type == "call_expression"
            and n.parent.child_by_field_name("function") == n
        ]
        if calls:
            at = rng.choice(calls)
            new = _synonym(at[0])
            if new not in every:
                yield cut.sample("synonym", cut.replaced(at, new))
        bound = {
            n.text.decode()
            for n in _texts(node, ("identifier",))
            if n.text and c_names.declares(n) and n.start_byte < hi
        }
        local_reads = [
            i for i, n in reads if len(i[0]) > 3 and i[0] in bound and i[0] not in declared
        ]
        if local_reads:
            at = rng.choice(local_reads)
            new = _misspell(at[0])
            if new not in every:
                yield cut.sample("misspelled", cut.replaced(at, new))
        read_names = {i[0] for i, _n in reads}
        for header in sorted(system):
            mine = c_names.system_header(header, language == "cpp")
            if mine is None or any(c_names.system_header(h, True) is None for h in system):
                continue
            others: set[str] = set()
            for other in system:
                if other != header:
                    others |= c_names.system_header(other, language == "cpp") or set()
            only = sorted(n for n in read_names & mine if n not in others and n not in declared)
            if only and text.count(system[header]) == 1 and '#include "' not in text:
                yield cut.sample("import", body, cut.head.replace(system[header], "", 1))
                break


def _node_at(tree: object, start: int, end: int) -> Node | None:
    node = tree.root_node.descendant_for_byte_range(start, end)  # type: ignore[attr-defined]
    return node if node is not None and node.type == "identifier" else None


@functools.cache
def _corpus(language: str) -> tuple[Sample, ...]:
    out: list[Sample] = []
    for path in _files(language):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(_samples_of(language, path, text, random.Random(f"names/{path}")))
    return tuple(out)


def _verify(language: str, sample: Sample) -> dict[str, object] | None:
    class Data:  # the fields the verifier reads of an ActionInput
        document = Document(f"file://{sample.path}", sample.before, language_id=language)
        path = sample.path
        start, end = sample.start, sample.end
        original = None
        trees = ParseTrees()

        @staticmethod
        def package() -> object:
            return _HEADERS.includes(sample.path)

    verify = parse_check.verifier(Data())  # type: ignore[arg-type]
    return None if verify is None else verify(sample.draft)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "names check corpus")


@pytest.mark.parametrize("part", ["tuned", "held-out"])
@pytest.mark.parametrize("language", ["c", "cpp"])
def test_injected_c_mistakes_are_caught_and_correct_answers_pass(
    language: str, part: str, figures: list[str]
) -> None:
    samples = [s for s in _corpus(language) if held_out(s.path) == (part == "held-out")]
    if len(samples) < 10:
        message = f"no {language} sources: install zlib1g-dev, nettle-dev (.ci/run)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    count: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    alarms: list[str] = []
    missed: list[str] = []
    for sample in samples:
        result = _verify(language, sample)
        count[sample.kind] += 1
        if result is not None and result["ok"] is False:
            failed[sample.kind] += 1
            if sample.kind == "control" and len(alarms) < 5:
                alarms.append(f"{sample.path}: {result['details']}")
        elif sample.kind != "control" and len(missed) < 40 and os.environ.get("NAMES_MISSED"):
            missed.append(f"{sample.kind} {sample.path}: {result and result['details']}")
    mistakes = sum(count[k] for k in KINDS)
    caught = sum(failed[k] for k in KINDS)
    alarm_rate = failed["control"] / count["control"]
    floor = CAUGHT_FLOORS[language]
    per_kind = ", ".join(
        f"{k} {failed[k]}/{count[k]} ({failed[k] / count[k]:.1%})" for k in KINDS if count[k]
    )
    figures.append(
        f"{language} ({part}): caught {caught}/{mistakes} ({caught / mistakes:.1%}, floor "
        f"{floor:.0%}) — {per_kind}; false alarms {failed['control']}/{count['control']} "
        f"({alarm_rate:.1%}, ceiling {FALSE_ALARM_CEILING:.0%})"
    )
    figures.extend(f"  false alarm: {alarm}" for alarm in alarms)
    figures.extend(f"  missed: {m}" for m in missed)
    assert mistakes >= 10 and count["control"] >= 10
    assert alarm_rate <= FALSE_ALARM_CEILING
    assert caught / mistakes >= floor
