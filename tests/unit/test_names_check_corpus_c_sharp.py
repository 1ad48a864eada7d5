"""C#'s names check on injected mistakes in real third-party code (the C# sources npm packages
ship: edge-js, which ``.ci/run`` unpacks under ``~/.cache/fastedit/corpora``, and node-gyp's),
with the correct answers as controls, per kind. Built like ``test_names_check_corpus`` (the same
held-out quarter of files by a hash of the path, chosen before tuning). Kinds: ``synonym`` (an
unqualified call of a method the file declares, renamed) and ``misspelled``; no ``member`` or
``import`` kind (what ``using`` brings is not known without the assemblies, and is not checked).
The sources are few: every method with a long enough body is sampled.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tree_sitter import Node

from fastedit_lsp.engines.parse import parse
from tests.support.names_corpus import (
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

NPM_CORPORA = Path.home() / ".cache" / "fastedit" / "corpora"
NODE_GYP = Path("/usr/lib/node_modules/npm/node_modules/node-gyp/lib")
KINDS = ("synonym", "misspelled")
#: Functions sampled per file at most.
PER_FILE = 40
#: Floors: the false-alarm goal; caught: a guard under the held-out figure, the sources being
#: few. Blind: 63.6 %, 7 of 11 (tuned part 15/15): the four misses were in one file, whose enum
#: declared its integral type (``enum InstanceState : uint``), read as a base class of another
#: file; an enum's and a struct's bases no longer count, nor a class's after the first: 11/11.
CAUGHT_FLOOR = 0.90
_BINDING_PARENTS = frozenset(
    {"variable_declarator", "parameter", "foreach_statement", "catch_declaration"}
)


def _files() -> list[str]:
    found = sorted(NPM_CORPORA.glob("node_modules/**/*.cs")) + sorted(NODE_GYP.glob("*.cs"))
    return [str(p) for p in found if p.stat().st_size <= MAX_BYTES]


def _pascalsynonym(name: str) -> str:
    if name[:1].isupper():
        other = synonym(name[0].lower() + name[1:])
        return other[0].upper() + other[1:]
    return synonym(name)


def _locals(function: Node) -> set[str]:
    """Names the method binds (parameters, locals, ``foreach`` and ``catch`` variables)."""
    out: set[str] = set()
    stack = [function]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        parent = node.parent
        if node.type != "identifier" or parent is None or node.text is None:
            continue
        if parent.type in _BINDING_PARENTS and node in (
            parent.child_by_field_name("name"),
            parent.child_by_field_name("left"),
        ):
            out.add(node.text.decode())
    return out


def _samples_of(path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    parsed = parse("c_sharp", text)
    if parsed.has_errors:
        return
    every = set(re.findall(r"[A-Za-z_]\w*", text))
    declared: set[str] = set()
    functions = []
    # Byte offsets (tree-sitter's) → character offsets (the text's).
    chars = [i for i, ch in enumerate(text) for _ in range(len(ch.encode()))] + [len(text)]
    stack = [parsed.tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type in ("method_declaration", "local_function_statement"):
            name = node.child_by_field_name("name")
            if name is not None and name.text is not None:
                declared.add(name.text.decode())
        if node.type not in ("method_declaration", "constructor_declaration"):
            continue
        body = node.child_by_field_name("body")
        if body is None:
            continue
        statements = [c for c in body.named_children if not c.type.endswith("comment")]
        if len(statements) < 3:
            continue
        first = statements[len(statements) // 3]
        functions.append((node, chars[first.start_byte], chars[body.end_byte - 1]))
    functions.sort(key=lambda f: f[1])
    for index, (node, lo, hi) in enumerate(rng.sample(functions, min(PER_FILE, len(functions)))):
        cut = Cut(path, text, Function(lo, hi, []), edit=index % 2 == 1)
        body = cut.body
        yield cut.sample("control", body)
        ids = []
        walk = [node]
        while walk:
            current = walk.pop()
            walk.extend(current.children)
            at = chars[current.start_byte]
            if current.type == "identifier" and lo <= at < hi and current.text:
                ids.append((current.text.decode(), at - lo, chars[current.end_byte] - lo))
        ids.sort(key=lambda i: i[1])
        calls = [
            i
            for i in ids
            if i[0] in declared
            and body[i[2] : i[2] + 1] == "("
            and body[i[1] - 1 : i[1]] != "."
            and not re.search(r"\w\s+$", body[: i[1]])
        ]
        yield from cut.renamed("synonym", calls, _pascalsynonym, every, rng)
        bound = _locals(node)
        reads = [
            i
            for i in ids
            if len(i[0]) > 3
            and i[0] in bound
            and body[i[1] - 1 : i[1]] != "."
            and not re.match(r"\s*(?:=[^=>]|[,:)])", body[i[2] :])
            and not re.search(r"(?:[\w>\]]\s+|\(|,\s*)$", body[: i[1]])
        ]
        yield from cut.renamed("misspelled", reads, misspell, every, rng)


@functools.cache
def _c_sharp() -> tuple[Sample, ...]:
    out: list[Sample] = []
    for path in _files():
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(_samples_of(path, text, random.Random(f"names/{path}")))
    return tuple(out)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "names check corpus")


@pytest.mark.parametrize("part", ["tuned", "held-out"])
def test_injected_c_sharp_mistakes_are_caught_and_correct_answers_pass(
    part: str, figures: list[str]
) -> None:
    samples = [s for s in _c_sharp() if held_out(s.path) == (part == "held-out")]
    corpus = Corpus(
        "c#",
        "edge-js and node-gyp",
        ".ci/run unpacks edge-js under ~/.cache/fastedit/corpora",
        KINDS,
        CAUGHT_FLOOR,
        10,
    )
    score(corpus, part, samples, lambda sample: verify(sample, "csharp"), figures)
