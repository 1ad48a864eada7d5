"""Java's names check on injected mistakes in real third-party code (the OpenJDK 17 sources of
modules other than ``java.base``, whose types the check knows from its own table: ``java.sql``,
``java.logging``, ``java.net.http``, … from ``openjdk-17-source``'s ``src.zip``, unpacked so that
the package's other files are on disk as the server reads them, ``project.java_package``), with
the correct answers as controls, per kind. Built like ``test_names_check_corpus`` (same kinds,
the held-out quarter chosen by a hash of the file's path in the archive before tuning).
"""

from __future__ import annotations

import functools
import glob
import random
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tree_sitter import Node

from fastedit_lsp.engines.names.java import stdlib, stdlib_packages
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.project.java_package import JavaPackages
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

#: The modules unpacked (not java.base: the check's table is made from it).
MODULES = (
    "java.sql",
    "java.logging",
    "java.net.http",
    "java.prefs",
    "java.management",
    "java.naming",
    "jdk.httpserver",
    "java.rmi",
)
#: Files drawn (more than the other languages: Java files hold fewer long methods).
FILES = 240
#: Floors: the issue's goals.
CAUGHT_FLOOR = 0.85
#: Members a model invents for a JDK type (checked absent before use).
INVENTED = ("parse", "clamp", "reverse", "toList", "readAll", "sum", "format", "contains")
_BINDING_PARENTS = frozenset(
    {
        "formal_parameter",
        "variable_declarator",
        "catch_formal_parameter",
        "enhanced_for_statement",
        "resource",
    }
)


@functools.cache
def _packages() -> JavaPackages:
    """One reader of the corpus' packages for the whole run (as the server keeps one): each
    file of a package is parsed once, not once per sample of its package."""
    return JavaPackages()


@functools.cache
def _unpacked(root: str) -> list[tuple[str, str]]:
    """(path on disk, path in the archive) of the sampled files, the modules unpacked under
    ``root``."""
    archives = sorted(glob.glob("/usr/lib/jvm/*17*/lib/src.zip"))
    if not archives:
        return []
    found: list[str] = []
    with zipfile.ZipFile(archives[0]) as zf:
        for info in zf.infolist():
            module = info.filename.split("/", 1)[0]
            if module in MODULES and info.filename.endswith(".java"):
                zf.extract(info, root)
                if info.file_size <= MAX_BYTES and not info.filename.endswith("-info.java"):
                    found.append(info.filename)
    rng = random.Random("names-corpus/java")
    chosen = sorted(rng.sample(sorted(found), min(FILES, len(found))))
    return [(str(Path(root) / name), name) for name in chosen]


def _locals(function: Node) -> set[str]:
    out: set[str] = set()
    stack = [function]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        parent = node.parent
        if node.type != "identifier" or parent is None or node.text is None:
            continue
        if parent.type in _BINDING_PARENTS and parent.child_by_field_name("name") == node:
            out.add(node.text.decode())
    return out


def _samples_of(path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    if not text.isascii():
        return
    parsed = parse("java", text)
    if parsed.has_errors:
        return
    every = set(re.findall(r"[A-Za-z_$][\w$]*", text))
    package = _packages().package(path)
    if package is None:
        return
    every |= package.types
    declared = set(re.findall(r"\b([a-z]\w*)\s*\([^;{}]*\)\s*(?:throws [\w., ]+)?\{", text))
    imports = {
        m.group(2): (m.group(0), m.group(1))
        for m in re.finditer(r"^import ([\w.]+\.([A-Z]\w*));\n", text, re.M)
    }
    wildcard = re.search(r"^import [\w.]+\.\*;", text, re.M) is not None
    java_lang = stdlib_packages()["java.lang"]
    functions = []
    stack = [parsed.tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type not in ("method_declaration", "constructor_declaration"):
            continue
        body = node.child_by_field_name("body")
        if body is None:
            continue
        statements = [c for c in body.named_children if not c.type.endswith("comment")]
        if len(statements) < 3:
            continue
        functions.append((node, statements[len(statements) // 3].start_byte, body.end_byte - 1))
    functions.sort(key=lambda f: f[1])
    for index, (node, lo, hi) in enumerate(rng.sample(functions, min(3, len(functions)))):
        cut = Cut(path, text, Function(lo, hi, []), edit=index % 2 == 1)
        body = cut.body
        yield cut.sample("control", body)
        ids = []
        walk = [node]
        while walk:
            current = walk.pop()
            walk.extend(current.children)
            if current.type == "identifier" and lo <= current.start_byte < hi:
                ids.append((current.text.decode(), current.start_byte - lo, current.end_byte - lo))  # type: ignore[union-attr]
        ids.sort(key=lambda i: i[1])
        calls = [
            i
            for i in ids
            if i[0] in declared and body[i[2] : i[2] + 1] == "(" and body[i[1] - 1 : i[1]] != "."
        ]
        yield from cut.renamed("synonym", calls, synonym, every, rng)
        bound = _locals(node)
        reads = [
            i
            for i in ids
            if len(i[0]) > 3
            and i[0] in bound
            and body[i[1] - 1 : i[1]] != "."
            and not re.match(r"\s*(?:=[^=]|[,;)])", body[i[2] :])
            and not re.search(r"[\w>\]]\s+$", body[: i[1]])
        ]
        yield from cut.renamed("misspelled", reads, misspell, every, rng)

        def qualified(name: str) -> str | None:
            if name in imports and imports[name][1] in stdlib():
                return imports[name][1]
            if name in java_lang and name not in package.types:
                return f"java.lang.{name}"
            return None

        uses = [
            i
            for i in ids
            if qualified(i[0]) is not None
            and i[0] not in bound
            and body[i[2] : i[2] + 1] == "."
            and body[i[1] - 1 : i[1]] != "."
        ]
        if uses:
            at = rng.choice(uses)
            member = re.match(r"\.([A-Za-z_]\w*)", body[at[2] :])
            owner = stdlib()[qualified(at[0]) or ""]
            invented = [m for m in INVENTED if m not in owner.members]
            if member is not None and invented:
                start = at[2] + 1
                new_body = (
                    body[:start] + rng.choice(invented) + body[start + len(member.group(1)) :]
                )
                yield cut.sample("member", new_body)
        named = set(re.findall(r"\b[A-Z]\w*", body))
        used = [n for n in sorted(named) if n in imports and n not in package.types]
        if used and not wildcard:
            line = imports[rng.choice(used)][0]
            without = cut.head.replace(line, "", 1)
            if without != cut.head and text.count(line) == 1:
                yield cut.sample("import", body, without)


@functools.cache
def _java(root: str) -> tuple[tuple[Sample, str], ...]:
    out: list[tuple[Sample, str]] = []
    for path, name in _unpacked(root):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend((s, name) for s in _samples_of(path, text, random.Random(f"names/{name}")))
    return tuple(out)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "names check corpus")


@pytest.fixture(scope="session")
def jdk_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("jdk17-src"))


@pytest.mark.parametrize("part", ["tuned", "held-out"])
def test_injected_java_mistakes_are_caught_and_correct_answers_pass(
    part: str, figures: list[str], jdk_root: str
) -> None:
    samples = [s for s, name in _java(jdk_root) if held_out(name) == (part == "held-out")]
    packages = _packages()
    corpus = Corpus(
        "java", "OpenJDK 17's sources", "install openjdk-17-source", KINDS, CAUGHT_FLOOR, 40
    )
    score(
        corpus,
        part,
        samples,
        lambda sample: verify(sample, "java", lambda: packages.package(sample.path)),
        figures,
    )
