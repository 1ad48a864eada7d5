"""The names check on injected mistakes in real third-party code, with the correct answers as
controls, per language and kind.

Each sample takes a real function from a file the machine has installed (never copied here),
cuts the rest of its body from a statement on (what "complete the rest" writes; every other
sample replaces the same lines instead, as "edit selection" does), and answers it through the
job's verifier (``actions.parse_check``: parse, CPython, names) four ways, each with one mistake
a parser cannot see, and once exactly:

- ``synonym``: a call of a function the file defines, renamed to a plausible synonym defined
  nowhere (``read_config`` → ``load_config``);
- ``misspelled``: one read of a local variable misspelled (``buffer`` → ``bufer``);
- ``member``: a member the module does not have (``json.loads`` → ``json.parse``);
- ``import``: a name the answer uses whose import the file no longer has (``Path(…)`` with no
  ``from pathlib import Path``).

A mistake is caught when the verification fails; a correct answer that fails is a false alarm.
The samples are split by a hash of the file's path: one part in four is held out, measured blind
(never looked at while the check was tuned), the rest is the tuning part. Floors guard both.
A language whose sources are missing is skipped with the package to install, and fails
when ``CI=true``.
"""

from __future__ import annotations

import functools
import random
import re
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fastedit_lsp.engines.names.python_stdlib import builtins, is_stdlib, members
from fastedit_lsp.engines.parse import parse
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

#: Files per language.
FILES = 160
#: The site-packages read: the server's dependencies and its test extras'.
PACKAGES = (
    "pygls",
    "lsprotocol",
    "httpx",
    "httpcore",
    "pydantic",
    "hypothesis",
    "_pytest",
    "mypy",
    "jedi",
    "pynvim",
    "natsort",
    "toolz",
    "pydash",
)
#: npm packages ``.ci/run`` unpacks for the corpora (no install scripts).
NPM_CORPORA = Path.home() / ".cache" / "fastedit" / "corpora"
#: Floors (the issue's goals: ≥ 85 % caught over all kinds; ≤ 1 % false alarms).
#: Per language, a guard a little under what was measured where it is close to the goal
#: (Python tuned: 85.5 %, JavaScript held-out: 86.2 %; the goal is 85 % over all).
CAUGHT_FLOORS = {"python": 0.84, "javascript": 0.82}


def _python_files() -> list[str]:
    stdlib = sysconfig.get_paths()["stdlib"]
    site = sysconfig.get_paths()["purelib"]
    found: list[str] = []
    patterns = [(stdlib, "*.py"), (stdlib, "*/*.py")]
    # Site-packages: only the packages the project's own install brings (pinned by its
    # dependencies), so that the draw does not change with what else a machine has installed.
    patterns += [(site, f"{package}/*.py") for package in PACKAGES]
    for root, pattern in patterns:
        for path in sorted(Path(root).glob(pattern)):
            text = str(path)
            if any(part in text for part in ("/test/", "/tests/", "/lib2to3/", "/idle_test/")):
                continue
            if "/site-packages/" in text and root == stdlib:
                continue
            if "fastedit_lsp" in text or path.stat().st_size > MAX_BYTES:
                continue
            found.append(text)
    rng = random.Random("names-corpus/python")
    return sorted(rng.sample(found, min(FILES, len(found))))


#: Members a model invents for a stdlib module (checked absent from its stubs before use).
INVENTED = ("parse", "clamp", "reverse", "to_string", "read_all", "exists_ok", "safe_join")


def _functions(text: str) -> tuple[list[Function], dict[str, str]] | None:
    """The file's functions (bodies of ≥ 3 statements) and its single-name import lines
    (name → the statement's text); None when the file does not parse or is not ASCII."""
    if not text.isascii():
        return None
    parsed = parse("python", text)
    if parsed.has_errors:
        return None
    out: list[Function] = []
    imports: dict[str, str] = {}
    for kind, start, end, _first in parsed.nodes(
        frozenset({"function_definition", "import_statement", "import_from_statement"})
    ):
        node = parsed.tree.root_node.descendant_for_byte_range(start, end)
        while node is not None and node.type != kind:
            node = node.parent
        if node is None:
            continue
        if kind != "function_definition":
            names = node.children_by_field_name("name")
            if node.parent is not None and node.parent.type == "module" and len(names) == 1:
                target = names[0]
                alias = (
                    target.child_by_field_name("alias") if target.type == "aliased_import" else None
                )
                bound = (alias or target).text.decode().split(".")[0]  # type: ignore[union-attr]
                imports[bound] = text[start:end]
            continue
        body = node.child_by_field_name("body")
        if body is None or body.named_child_count < 3:
            continue
        statements = body.named_children
        first = statements[len(statements) // 3]
        ids: list[tuple[str, int, int]] = []
        stack = [first.parent]
        while stack:
            current = stack.pop()
            if current is None:
                continue
            if current.type == "identifier" and current.start_byte >= first.start_byte:
                ids.append((current.text.decode(), current.start_byte, current.end_byte))  # type: ignore[union-attr]
            stack.extend(current.children)
        out.append(Function(first.start_byte, body.end_byte, sorted(ids, key=lambda x: x[1])))
    return out, imports


def _binds(body: str, at: int) -> bool:
    """Whether the identifier at ``at`` is on a ``def``/``for``/``with``/``except`` line or
    a parameter (a misspelled binding is not a misspelled read)."""
    line = body[body.rfind("\n", 0, at) + 1 : body.find("\n", at) % (len(body) + 1)]
    return re.match(
        r"\s*(?:async\s+)?(?:def|for|with|except|class|lambda)\b", line
    ) is not None or (body[at - 1 : at] == "*")


def _spans(path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    """A control over two consecutive top-level definitions (an edit selection of both)."""
    root = parse("python", text).tree.root_node
    tops = [c for c in root.children if c.type in ("function_definition", "decorated_definition")]
    if len(tops) < 2:
        return
    index = rng.randrange(len(tops) - 1)
    lo, hi = tops[index].start_byte, tops[index + 1].end_byte
    cut = Cut(path, text, Function(lo, hi, []), edit=True)
    yield cut.sample("control", cut.body)


def _samples_of(path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    found = _functions(text)
    if found is None:
        return
    functions, imports = found
    yield from _spans(path, text, rng)
    every = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    defined = set(re.findall(r"^def ([A-Za-z_][A-Za-z0-9_]*)", text, re.M))
    module_imports = set(re.findall(r"^import ([a-z_][a-z0-9_]*)\s*$", text, re.M))
    for index, function in enumerate(rng.sample(functions, min(3, len(functions)))):
        cut = Cut(path, text, function, edit=index % 2 == 1)
        body, head, sample, replaced, is_call = (
            cut.body,
            cut.head,
            cut.sample,
            cut.replaced,
            cut.is_call,
        )
        yield sample("control", body)
        ids = [(n, s - function.start, e - function.start) for n, s, e in function.names]
        calls = [i for i in ids if i[0] in defined and is_call(i)]
        yield from cut.renamed("synonym", calls, synonym, every, rng)
        locals_ = [
            i
            for i in ids
            if len(i[0]) > 3
            and i[0] not in defined
            and body[i[1] - 1 : i[1]] != "."
            and not body[i[2] :].lstrip(" ").startswith(("=", "(", ",", ":"))
            and not _binds(body, i[1])
            and re.search(rf"\b{re.escape(i[0])}\s*=[^=]", text) is not None
        ]
        if locals_:
            at = rng.choice(locals_)
            new = misspell(at[0])
            if new not in every and new not in builtins():
                yield sample("misspelled", replaced(at, new))
        uses = [
            i
            for i in ids
            if i[0] in module_imports and is_stdlib(i[0]) and body[i[2] : i[2] + 1] == "."
        ]
        if uses:
            at = rng.choice(uses)
            known = members(at[0])
            member = re.match(r"\.([A-Za-z_]\w*)", body[at[2] :])
            invented = [m for m in INVENTED if known is not None and m not in known]
            if member is not None and invented:
                start = at[2] + 1
                new_body = (
                    body[:start] + rng.choice(invented) + body[start + len(member.group(1)) :]
                )
                yield sample("member", new_body)
        imported = [i for i in ids if i[0] in imports and body[i[1] - 1 : i[1]] != "."]
        if imported:
            name = rng.choice(imported)[0]
            statement = imports[name]
            without = head.replace(statement + "\n", "", 1)
            if without != head and text.count(statement) == 1:
                yield sample("import", body, without)


@functools.cache  # built once for both parts
def _python() -> list[Sample]:
    out: list[Sample] = []
    for path in _python_files():
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(_samples_of(path, text, random.Random(f"names/{path}")))
    return out


_JS_FUNCTIONS = frozenset(
    {"function_declaration", "method_definition", "function_expression", "arrow_function"}
)
_JS_INVENTED = {"Math": "clamp", "JSON": "load", "Object": "merge", "Array": "range"}


def _js_files() -> list[str]:
    from tests.unit.test_parse_check_corpus import _npm_root

    roots = [r for r in (_npm_root(), NPM_CORPORA / "node_modules") if r is not None]
    found: list[str] = []
    for root in roots:
        if root.is_dir():
            found.extend(
                str(p)
                for p in sorted(root.glob("**/*.js"))
                if ".min." not in p.name and p.stat().st_size <= MAX_BYTES
            )
    rng = random.Random("names-corpus/javascript")
    return sorted(rng.sample(found, min(FILES, len(found))))


def _js_samples_of(path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    if not text.isascii():
        return
    parsed = parse("javascript", text)
    if parsed.has_errors:
        return
    root = parsed.tree.root_node
    declared = set(re.findall(r"\bfunction\s+([A-Za-z_$][\w$]*)", text))
    every = set(re.findall(r"[A-Za-z_$][\w$]*", text))
    requires = {
        m.group(1): m.group(0)
        for m in re.finditer(
            r"^(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\([^)]*\);?[ \t]*$",
            text,
            re.M,
        )
    }
    bodies = []
    for kind, start, end, _first in parsed.nodes(_JS_FUNCTIONS):
        node = root.descendant_for_byte_range(start, end)
        while node is not None and node.type != kind:
            node = node.parent
        body = node.child_by_field_name("body") if node is not None else None
        if body is None or body.type != "statement_block" or body.named_child_count < 3:
            continue
        first = body.named_children[body.named_child_count // 3]
        bodies.append((first.start_byte, body.end_byte - 1))
    for index, (lo, hi) in enumerate(rng.sample(bodies, min(3, len(bodies)))):
        function = Function(lo, hi, [])
        ids = [
            (m.group(0), m.start(), m.end())
            for m in re.finditer(r"(?<![\w$.])[A-Za-z_$][\w$]*(?![\w$])", text[lo:hi])
        ]
        cut = Cut(path, text, function, edit=index % 2 == 1)
        body = cut.body
        yield cut.sample("control", body)
        calls = [i for i in ids if i[0] in declared and body[i[2] : i[2] + 1] == "("]
        yield from cut.renamed("synonym", calls, synonym, every, rng)
        reads = [
            i
            for i in ids
            if len(i[0]) > 3
            and i[0] not in declared
            and re.search(rf"\b(?:const|let|var)\s+{re.escape(i[0])}\b", text)
            and not body[i[2] :].lstrip(" ").startswith(("=", ":", "(", ","))
            and not body[: i[1]].rstrip(" ").endswith(("const", "let", "var", "function"))
        ]
        yield from cut.renamed("misspelled", reads, misspell, every, rng)
        members_ = [i for i in ids if i[0] in _JS_INVENTED and body[i[2] : i[2] + 1] == "."]
        if members_:
            at = rng.choice(members_)
            member = re.match(r"\.([A-Za-z_$][\w$]*)", body[at[2] :])
            if member is not None:
                start = at[2] + 1
                invented = _JS_INVENTED[at[0]]
                yield cut.sample(
                    "member", body[:start] + invented + body[start + len(member.group(1)) :]
                )
        used = [i for i in ids if i[0] in requires]
        if used:
            statement = requires[rng.choice(used)[0]]
            without = cut.head.replace(statement + "\n", "", 1)
            if without != cut.head and text.count(statement) == 1:
                yield cut.sample("import", body, without)


@functools.cache  # built once for both parts
def _javascript() -> list[Sample]:
    out: list[Sample] = []
    for path in _js_files():
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(_js_samples_of(path, text, random.Random(f"names/{path}")))
    return out


SOURCES: dict[str, tuple[Callable[[], list[Sample]], str]] = {
    "python": (_python, "the Python stdlib and site-packages"),
    "javascript": (_javascript, "npm's own sources and the corpora .ci/run unpacks"),
}


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "names check corpus")


@pytest.mark.parametrize("part", ["tuned", "held-out"])
@pytest.mark.parametrize("language", sorted(SOURCES))
def test_injected_mistakes_are_caught_and_correct_answers_pass(
    language: str, part: str, figures: list[str]
) -> None:
    make, package = SOURCES[language]
    samples = [s for s in make() if held_out(s.path) == (part == "held-out")]
    corpus = Corpus(language, package, f"install {package}", KINDS, CAUGHT_FLOORS[language])
    score(corpus, part, samples, lambda sample: verify(sample, language), figures)
