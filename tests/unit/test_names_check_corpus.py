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

import hashlib
import os
import random
import re
import sysconfig
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fastedit_lsp.actions import parse_check
from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.engines.names.python_stdlib import builtins, is_stdlib, members
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.engines.parse_trees import ParseTrees
from tests.support.summary_figures import section_lines

KINDS = ("synonym", "misspelled", "member", "import")
#: Files per language and the largest file read.
FILES = 160
MAX_BYTES = 150_000
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
FALSE_ALARM_CEILING = 0.01


@dataclass(frozen=True)
class Sample:
    """One answer: the document before the job, the region, the draft, and its kind."""

    path: str
    kind: str  # "control" or one of KINDS
    before: str
    start: Point
    end: Point
    draft: str


def held_out(path: str) -> bool:
    """One file in four, by a hash of its path (chosen before any tuning)."""
    return hashlib.sha1(path.encode()).digest()[0] % 4 == 0


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


#: Verbs a model swaps for one another in a function's name.
SYNONYMS = {
    "get": "fetch",
    "fetch": "get",
    "read": "load",
    "load": "read",
    "make": "create",
    "create": "make",
    "build": "construct",
    "parse": "decode",
    "decode": "parse",
    "find": "search",
    "search": "find",
    "check": "validate",
    "validate": "check",
    "remove": "delete",
    "delete": "remove",
    "add": "append",
    "write": "save",
    "save": "write",
    "compute": "calculate",
    "update": "refresh",
    "is": "has",
    "has": "is",
    "to": "as",
    "format": "render",
    "split": "tokenize",
    "open": "load",
    "run": "execute",
    "set": "put",
    "new": "create",
    "init": "setup",
}

#: Members a model invents for a stdlib module (checked absent from its stubs before use).
INVENTED = ("parse", "clamp", "reverse", "to_string", "read_all", "exists_ok", "safe_join")


def _synonym(name: str) -> str:
    core = name.lstrip("_")
    head, _, tail = core.partition("_")
    lead = name[: len(name) - len(core)]
    if tail and head in SYNONYMS:
        return f"{lead}{SYNONYMS[head]}_{tail}"
    for verb, other in SYNONYMS.items():
        if core.startswith(verb) and core[len(verb) : len(verb) + 1].isupper():
            return lead + other + core[len(verb) :]
    return f"{lead}{core}_all" if "_" in core else f"{lead}{core}s"


def _misspell(name: str) -> str:
    for i in range(1, len(name)):
        if name[i] == name[i - 1] and name[i].isalpha():
            return name[:i] + name[i + 1 :]  # buffer → bufer
    middle = len(name) // 2
    return name[:middle] + name[middle + 1 :] if len(name) > 3 else name + "x"


@dataclass
class _Function:
    start: int  # the first statement of the body (character offset)
    end: int
    names: list[tuple[str, int, int]]  # identifiers in the body: (name, start, end)


def _functions(text: str) -> tuple[list[_Function], dict[str, str]] | None:
    """The file's functions (bodies of ≥ 3 statements) and its single-name import lines
    (name → the statement's text); None when the file does not parse or is not ASCII."""
    if not text.isascii():
        return None
    parsed = parse("python", text)
    if parsed.has_errors:
        return None
    out: list[_Function] = []
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
        out.append(_Function(first.start_byte, body.end_byte, sorted(ids, key=lambda x: x[1])))
    return out, imports


def _binds(body: str, at: int) -> bool:
    """Whether the identifier at ``at`` is on a ``def``/``for``/``with``/``except`` line or
    a parameter (a misspelled binding is not a misspelled read)."""
    line = body[body.rfind("\n", 0, at) + 1 : body.find("\n", at) % (len(body) + 1)]
    return re.match(
        r"\s*(?:async\s+)?(?:def|for|with|except|class|lambda)\b", line
    ) is not None or (body[at - 1 : at] == "*")


def _point(text: str, offset: int) -> Point:
    line = text.count("\n", 0, offset)
    return Point(line, offset - (text.rfind("\n", 0, offset) + 1))


class _Cut:
    """One function's cut: the text before it, the body from the cut on, the text after."""

    def __init__(self, path: str, text: str, function: _Function, *, edit: bool) -> None:
        self.path, self.edit = path, edit  # edit selection: the region holds the original
        self.head, self.tail = text[: function.start], text[function.end :]
        self.body = text[function.start : function.end]

    def sample(self, kind: str, draft: str, head: str | None = None) -> Sample:
        head = self.head if head is None else head
        start = _point(head, len(head))
        if self.edit:
            before = head + self.body + self.tail
            end = _point(before, len(head) + len(self.body))
            return Sample(self.path, kind, before, start, end, draft)
        return Sample(self.path, kind, head + self.tail, start, start, draft)

    def replaced(self, at: tuple[str, int, int], new: str) -> str:
        return self.body[: at[1]] + new + self.body[at[2] :]

    def is_call(self, at: tuple[str, int, int]) -> bool:
        body = self.body
        return body[at[2] : at[2] + 1] == "(" and body[at[1] - 1 : at[1]] != "."


def _spans(path: str, text: str, rng: random.Random) -> Iterator[Sample]:
    """A control over two consecutive top-level definitions (an edit selection of both)."""
    root = parse("python", text).tree.root_node
    tops = [c for c in root.children if c.type in ("function_definition", "decorated_definition")]
    if len(tops) < 2:
        return
    index = rng.randrange(len(tops) - 1)
    lo, hi = tops[index].start_byte, tops[index + 1].end_byte
    cut = _Cut(path, text, _Function(lo, hi, []), edit=True)
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
        cut = _Cut(path, text, function, edit=index % 2 == 1)
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
        if calls:
            at = rng.choice(calls)
            new = _synonym(at[0])
            if new not in every:
                yield sample("synonym", replaced(at, new))
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
            new = _misspell(at[0])
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
        function = _Function(lo, hi, [])
        ids = [
            (m.group(0), m.start(), m.end())
            for m in re.finditer(r"(?<![\w$.])[A-Za-z_$][\w$]*(?![\w$])", text[lo:hi])
        ]
        cut = _Cut(path, text, function, edit=index % 2 == 1)
        body = cut.body
        yield cut.sample("control", body)
        calls = [i for i in ids if i[0] in declared and body[i[2] : i[2] + 1] == "("]
        if calls:
            at = rng.choice(calls)
            new = _synonym(at[0])
            if new not in every:
                yield cut.sample("synonym", cut.replaced(at, new))
        reads = [
            i
            for i in ids
            if len(i[0]) > 3
            and i[0] not in declared
            and re.search(rf"\b(?:const|let|var)\s+{re.escape(i[0])}\b", text)
            and not body[i[2] :].lstrip(" ").startswith(("=", ":", "(", ","))
            and not body[: i[1]].rstrip(" ").endswith(("const", "let", "var", "function"))
        ]
        if reads:
            at = rng.choice(reads)
            new = _misspell(at[0])
            if new not in every:
                yield cut.sample("misspelled", cut.replaced(at, new))
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


def _verify(sample: Sample, language: str) -> dict[str, object] | None:
    class Data:  # the fields the verifier reads of an ActionInput
        document = Document(f"file://{sample.path}", sample.before, language_id=language)
        path = sample.path
        start, end = sample.start, sample.end
        original = None
        trees = ParseTrees()

    verify = parse_check.verifier(Data())  # type: ignore[arg-type]
    return None if verify is None else verify(sample.draft)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "names check corpus")


def _measure(samples: list[Sample], language: str) -> tuple[Counter[str], Counter[str], list[str]]:
    """(samples per kind, failed verifications per kind, the first false alarms)."""
    count: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    alarms: list[str] = []
    for sample in samples:
        result = _verify(sample, language)
        count[sample.kind] += 1
        if result is not None and result["ok"] is False:
            failed[sample.kind] += 1
            if sample.kind == "control" and len(alarms) < 5:
                alarms.append(f"{sample.path}: {result['details']}")
    return count, failed, alarms


@pytest.mark.parametrize("part", ["tuned", "held-out"])
@pytest.mark.parametrize("language", sorted(SOURCES))
def test_injected_mistakes_are_caught_and_correct_answers_pass(
    language: str, part: str, figures: list[str]
) -> None:
    make, package = SOURCES[language]
    samples = [s for s in make() if held_out(s.path) == (part == "held-out")]
    if len(samples) < 20:
        message = f"no {language} sources installed: install {package}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    count, failed, alarms = _measure(samples, language)
    mistakes = sum(count[k] for k in KINDS)
    caught = sum(failed[k] for k in KINDS)
    alarm_rate = failed["control"] / count["control"]
    per_kind = ", ".join(
        f"{k} {failed[k]}/{count[k]} ({failed[k] / count[k]:.1%})" for k in KINDS if count[k]
    )
    figures.append(
        f"{language} ({part}): caught {caught}/{mistakes} ({caught / mistakes:.1%}, floor "
        f"{CAUGHT_FLOORS[language]:.0%}) — {per_kind}; false alarms "
        f"{failed['control']}/{count['control']} "
        f"({alarm_rate:.1%}, ceiling {FALSE_ALARM_CEILING:.0%}); from {package}"
    )
    figures.extend(f"  false alarm: {alarm}" for alarm in alarms)
    assert mistakes >= 40 and count["control"] >= 40
    assert alarm_rate <= FALSE_ALARM_CEILING
    assert caught / mistakes >= CAUGHT_FLOORS[language]
