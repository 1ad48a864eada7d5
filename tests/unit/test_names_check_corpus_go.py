"""Go's names check on injected mistakes in real third-party code (golang.org/x/text, which
``.ci/run`` installs as Debian's golang-golang-x-text-dev), with the correct answers as
controls, per kind. Built like ``test_names_check_corpus`` (same kinds, same held-out split by a
hash of the path, chosen before tuning); the package's other files are read from disk as the
server reads them (``project.go_package``).
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tree_sitter import Node

from fastedit_lsp.engines.names.go import stdlib
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.project.go_package import GoPackages
from tests.support.names_corpus import (
    KINDS,
    MAX_BYTES,
    Corpus,
    Cut,
    Function,
    Sample,
    held_out,
    misspell,
    score,
    synonym,
    verify,
)
from tests.support.summary_figures import section_lines

ROOT = Path("/usr/share/gocode/src/golang.org/x/text")
FILES = 160
#: Floors: the issue's goals (measured: tuned 99.3 %, held-out 100 % caught; no false alarm).
CAUGHT_FLOOR = 0.85
#: Members a model invents for a standard library package (checked absent before use).
INVENTED = ("Reverse", "Parse", "Clamp", "ToString", "ReadAll", "Sum", "Format", "Contains")
_BINDING_PARENTS = frozenset(
    {"parameter_declaration", "variadic_parameter_declaration", "var_spec", "const_spec"}
)


@functools.cache
def _packages() -> GoPackages:
    """One reader of the corpus' packages for the whole run (as the server keeps one): each
    file of a directory is parsed once, not once per sample of its directory."""
    return GoPackages()


def _files() -> list[str]:
    found = [
        str(p)
        for p in sorted(ROOT.glob("**/*.go"))
        if not p.name.endswith("_test.go")
        and "/testdata/" not in str(p)
        and p.stat().st_size <= MAX_BYTES
    ]
    rng = random.Random("names-corpus/go")
    return sorted(rng.sample(found, min(FILES, len(found))))


def _gosynonym(name: str) -> str:
    if name[:1].isupper():
        other = synonym(name[0].lower() + name[1:])
        return other[0].upper() + other[1:]
    return synonym(name)


def _locals(function: Node) -> set[str]:
    """Names the function binds (parameters, ``:=``, ``var``, range variables)."""
    out: set[str] = set()
    stack = [function]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        parent = node.parent
        if node.type != "identifier" or parent is None or node.text is None:
            continue
        grand = parent.parent
        binds = parent.type in _BINDING_PARENTS or (
            parent.type == "expression_list"
            and grand is not None
            and grand.type in ("short_var_declaration", "range_clause")
            and grand.child_by_field_name("left") == parent
        )
        if binds:
            out.add(node.text.decode())
    return out


def _samples_of(path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    if not text.isascii():
        return
    parsed = parse("go", text)
    if parsed.has_errors:
        return
    package = _packages().names(path)
    if package is None:
        return
    every = set(re.findall(r"[A-Za-z_]\w*", text)) | package
    declared = set(re.findall(r"^func ([A-Za-z_]\w*)", text, re.M)) | package
    imports = {
        (m.group(1) or m.group(2).rsplit("/", 1)[-1]): (m.group(0), m.group(2))
        for m in re.finditer(r'^(?:import |\t)(?:(\w+) )?"([\w./]+)"\n', text, re.M)
    }
    functions = []
    for child in parsed.tree.root_node.named_children:
        if child.type not in ("function_declaration", "method_declaration"):
            continue
        body = child.child_by_field_name("body")
        lists = [c for c in body.named_children if c.type == "statement_list"] if body else []
        if not lists or lists[0].named_child_count < 3:
            continue
        statements = lists[0].named_children
        functions.append((child, statements[len(statements) // 3].start_byte, lists[0].end_byte))
    for index, (node, lo, hi) in enumerate(rng.sample(functions, min(3, len(functions)))):
        cut = Cut(path, text, Function(lo, hi, []), edit=index % 2 == 1)
        body = cut.body
        yield cut.sample("control", body)
        ids = []
        stack = [node]
        while stack:
            current = stack.pop()
            stack.extend(current.children)
            if current.type == "identifier" and lo <= current.start_byte < hi:
                ids.append((current.text.decode(), current.start_byte - lo, current.end_byte - lo))
        ids.sort(key=lambda i: i[1])
        calls = [
            i
            for i in ids
            if i[0] in declared and body[i[2] : i[2] + 1] == "(" and body[i[1] - 1 : i[1]] != "."
        ]
        yield from cut.renamed("synonym", calls, _gosynonym, every, rng)
        bound = _locals(node)
        reads = [
            i
            for i in ids
            if len(i[0]) > 3
            and i[0] in bound
            and body[i[1] - 1 : i[1]] != "."
            and not re.match(r"\s*(?::=|,|=[^=])", body[i[2] :])
            and not re.search(r"(?:var|,)\s*$", body[: i[1]])
        ]
        yield from cut.renamed("misspelled", reads, misspell, every, rng)
        table = stdlib()
        uses = [
            i
            for i in ids
            if i[0] in imports
            and imports[i[0]][1] in table
            and i[0] not in bound
            and body[i[2] : i[2] + 1] == "."
        ]
        if uses:
            at = rng.choice(uses)
            member = re.match(r"\.([A-Za-z_]\w*)", body[at[2] :])
            invented = [m for m in INVENTED if m not in table[imports[at[0]][1]]]
            if member is not None and invented:
                start = at[2] + 1
                new_body = (
                    body[:start] + rng.choice(invented) + body[start + len(member.group(1)) :]
                )
                yield cut.sample("member", new_body)
        used = [i for i in ids if i[0] in imports and i[0] not in bound]
        if used:
            line = imports[rng.choice(used)[0]][0]
            without = cut.head.replace(line, "", 1)
            if without != cut.head and text.count(line) == 1:
                yield cut.sample("import", body, without)


@functools.cache
def _go() -> list[Sample]:
    out: list[Sample] = []
    for path in _files():
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(_samples_of(path, text, random.Random(f"names/{path}")))
    return out


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "names check corpus")


@pytest.mark.parametrize("part", ["tuned", "held-out"])
def test_injected_go_mistakes_are_caught_and_correct_answers_pass(
    part: str, figures: list[str]
) -> None:
    samples = [s for s in _go() if held_out(s.path) == (part == "held-out")]
    packages = _packages()
    corpus = Corpus(
        "go", "golang.org/x/text", "install golang-golang-x-text-dev", KINDS, CAUGHT_FLOOR, 40
    )
    score(
        corpus,
        part,
        samples,
        lambda sample: verify(sample, "go", lambda: packages.names(sample.path)),
        figures,
    )
