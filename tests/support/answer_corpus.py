"""A corpus of realistic model-answer shapes over third-party code, and how each lands.

Functions of code nobody here wrote (Python's stdlib, @tanstack/react-router's TypeScript,
golang.org/x/text's Go, regex-syntax's Rust, OpenJDK 17's java.util) are cut at statement
boundaries; the stub model's answer is the missing code in the shapes chat models produce
(fences, prose, ``<think>``, the target line or the lines above repeated, the function re-sent,
dedented, run on into the code that follows, CRLF, spaces in a tabbed file). Each case says what
the buffer must hold after the answer lands: the original text.

``land`` streams a case's answer, in pieces, through the server's own path for its action and
returns the resulting text (no server process: the pure stages the server runs). Cases whose file
path hashes into :data:`HELD_OUT_BUCKETS` are the held-out part, chosen before any tuning.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import sysconfig
import textwrap
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.tools.stub_answers import split_tokens

if TYPE_CHECKING:
    from fastedit_lsp.prompting.reconcile.target import Target

#: Files whose path's hash modulo 5 is 0 are held out (about a fifth), fixed before tuning.
HELD_OUT_BUCKETS = 5

NODE_SRC = Path.home() / ".cache/fastedit/corpora/node_modules/@tanstack/react-router/src"
GO_SRC = Path("/usr/share/gocode/src/golang.org/x/text")
RUST_GLOB = "/usr/share/cargo/registry"
JAVA_ZIP = Path("/usr/lib/jvm/openjdk-17/lib/src.zip")

LANGUAGES = ("python", "typescript", "go", "rust", "java")
FENCE_TAG = {"python": "python", "typescript": "tsx", "go": "go", "rust": "rust", "java": "java"}
FUNCTIONS_PER_LANGUAGE = 40


@dataclass(frozen=True)
class Case:
    action: str  # complete_rest, edit_selection, inline
    language: str
    path: str
    shape: str
    text: str  # the document as the model sees it
    start: Point
    end: Point
    answer: str
    expected: str  # the document after the answer landed
    cut: str  # for inline: the original's text from the target on
    control: bool = False

    @property
    def held_out(self) -> bool:
        digest = hashlib.sha256(self.path.encode()).digest()
        return digest[0] % HELD_OUT_BUCKETS == 0


# -- sources ----------------------------------------------------------------------------------


def missing_sources() -> list[str]:
    """The languages whose third-party sources are absent here, with why."""
    missing = []
    if not NODE_SRC.is_dir():
        missing.append(f"typescript: {NODE_SRC} absent")
    if not GO_SRC.is_dir():
        missing.append(f"go: {GO_SRC} absent (Debian golang-golang-x-text-dev)")
    if not sorted(Path(RUST_GLOB).glob("regex-syntax*")):
        missing.append(f"rust: {RUST_GLOB}/regex-syntax* absent")
    if not JAVA_ZIP.is_file():
        missing.append(f"java: {JAVA_ZIP} absent")
    return missing


def _files(language: str) -> Iterator[tuple[str, str]]:
    if language == "python":
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        names = ("textwrap", "shlex", "fractions", "calendar", "difflib", "heapq", "bisect")
        names += ("ipaddress", "statistics", "string", "glob", "fnmatch", "csv", "configparser")
        for name in names:
            yield f"stdlib/{name}.py", (stdlib / f"{name}.py").read_text(encoding="utf-8")
    elif language == "typescript" and NODE_SRC.is_dir():
        for path in sorted(NODE_SRC.rglob("*.ts*")):
            yield f"react-router/{path.relative_to(NODE_SRC)}", path.read_text(encoding="utf-8")
    elif language == "go" and GO_SRC.is_dir():
        for path in sorted(GO_SRC.rglob("*.go")):
            if not path.name.endswith("_test.go") and "tables" not in path.name:
                yield f"x/text/{path.relative_to(GO_SRC)}", path.read_text(encoding="utf-8")
    elif language == "rust":
        for root in sorted(Path(RUST_GLOB).glob("regex-syntax*"))[:1]:
            for path in sorted(root.rglob("*.rs")):
                if "unicode_tables" not in str(path):
                    yield f"regex-syntax/{path.relative_to(root)}", path.read_text("utf-8")
    elif language == "java" and JAVA_ZIP.is_file():
        with zipfile.ZipFile(JAVA_ZIP) as archive:
            for name in sorted(archive.namelist()):
                if re.fullmatch(r"java\.base/java/util/[A-Z]\w+\.java", name):
                    yield f"jdk/{name}", archive.read(name).decode("utf-8")


@dataclass(frozen=True)
class Function:
    path: str
    lines: list[str]  # the file's lines, without line breaks
    header: int  # the first line's index
    last: int  # the last line of the body that may be cut away (before a closing brace)
    statements: list[int]  # lines where a statement of the body starts


def _python_functions(path: str, text: str) -> Iterator[Function]:
    lines = text.split("\n")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.end_lineno is None:
            continue
        header = node.lineno - 1
        if node.decorator_list or len(node.body) < 3:
            continue
        body_start = node.body[0].lineno - 1
        statements = sorted(
            {
                n.lineno - 1
                for n in ast.walk(node)
                if isinstance(n, ast.stmt) and n.lineno - 1 > body_start and n is not node
            }
        )
        statements = [s for s in statements if lines[s].strip() and not _in_docstring(node, s)]
        if len(statements) >= 2 and node.end_lineno - node.lineno < 60:
            yield Function(path, lines, header, node.end_lineno - 1, statements)


def _in_docstring(node: ast.FunctionDef, line: int) -> bool:
    first = node.body[0]
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and first.lineno - 1 <= line <= (first.end_lineno or first.lineno) - 1
    )


_HEADERS = {
    "typescript": re.compile(r"^(\s*)(export\s+)?(async\s+)?function\b.*\{\s*$"),
    "go": re.compile(r"^func\b.*\{\s*$"),
    "rust": re.compile(r"^(\s*)(pub(\([^)]*\))?\s+)?fn\b.*\{\s*$"),
    "java": re.compile(
        r"^(\s+)(public|private|protected|static|final|\s)+[\w<>\[\], ?]+\s+\w+\(.*\)"
        r"(\s*throws [\w., ]+)?\s*\{\s*$"
    ),
}
_CONTINUES = re.compile(r"[,(\[+\-*/&|=.?:!<>]\s*$|^\s*(//|/\*|\*)")
_STARTS_CONT = re.compile(r"^\s*([.)\]}&|+?:*]|\|\||&&|where\b|else\b|catch\b|finally\b)")


def _brace_functions(path: str, text: str, language: str) -> Iterator[Function]:
    lines = text.split("\n")
    header_re = _HEADERS[language]
    for index, line in enumerate(lines):
        # Every header ends with "{" (and blanks): the rest skip the regex, which backtracks long
        # on some lines (Java's).
        if not line.rstrip().endswith("{") or not header_re.match(line):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        end = next(
            (j for j in range(index + 1, min(len(lines), index + 60)) if lines[j] == indent + "}"),
            None,
        )
        if end is None or end - index < 4:
            continue
        body = lines[index + 1 : end]
        if any("`" in b or "/*" in b or '"""' in b for b in body):
            continue
        statements = []
        for j in range(index + 2, end):
            previous = next((lines[p] for p in range(j - 1, index, -1) if lines[p].strip()), "")
            current = lines[j]
            if not current.strip() or current.strip().startswith(("//", "*", "/*", "#[")):
                continue
            if _CONTINUES.search(previous) or _STARTS_CONT.match(current):
                continue
            statements.append(j)
        if len(statements) >= 2:
            yield Function(path, lines, index, end - 1, statements)


@functools.cache  # read once per run: the corpus test and the reconciler's tests share it
def functions(language: str) -> tuple[Function, ...]:
    """Up to :data:`FUNCTIONS_PER_LANGUAGE` functions, spread over the language's files."""
    found: list[Function] = []
    for path, text in _files(language):
        if "\t" in text and language != "go":
            continue
        if language == "python":
            found.extend(list(_python_functions(path, text))[:4])
        else:
            found.extend(list(_brace_functions(path, text, language))[:3])
    step = max(1, len(found) // FUNCTIONS_PER_LANGUAGE)
    return tuple(found[::step][:FUNCTIONS_PER_LANGUAGE])


# -- cases ------------------------------------------------------------------------------------


def _pick(options: list[int], salt: str) -> int:
    digest = hashlib.sha256(salt.encode()).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _offset(lines: list[str], point: Point) -> int:
    return sum(len(line) + 1 for line in lines[: point.line]) + point.col


def _wrap(language: str, code: str, shape: str) -> str:
    tag = FENCE_TAG[language]
    if shape == "fence":
        return f"```{tag}\n{code}\n```"
    if shape == "fence_notag_prose":
        return (
            f"Here is the rest of the code:\n\n```\n{code}\n```\n\nThis keeps the original logic."
        )
    if shape == "fence_unterminated":
        return f"```{tag}\n{code}\n"
    if shape == "think":
        reasoning = "The user wants the missing code. I should keep the style."
        return f"<think>\n{reasoning}\n</think>\n\n{code}"
    if shape == "think_fence":
        reasoning = "Let me look at the surrounding code first."
        return f"<think>{reasoning}</think>\n```{tag}\n{code}\n```"
    if shape == "prose":
        return f"Sure! Here's the completed code:\n{code}"
    return code


_WRAPPERS = ("fence", "fence_notag_prose", "fence_unterminated", "think", "think_fence", "prose")


def _completion_cases(fn: Function, language: str, action: str) -> Iterator[Case]:
    lines = fn.lines
    c = _pick(fn.statements, fn.path + str(fn.header) + action)
    indent = _indent(lines[c])
    start = Point(c, len(indent))
    end_line = fn.last
    end = Point(end_line, len(lines[end_line]))
    original = "\n".join(lines)
    a, b = _offset(lines, start), _offset(lines, end)
    missing = original[a:b]
    document = original[:a] + original[b:]
    after = original[b:]
    # A control: the right answer repeats the text around the target.
    around = {lines[c - 1].strip(), after.lstrip("\n").split("\n", 1)[0].strip()}
    control = any(m.strip() in around for m in missing.split("\n") if m.strip())

    def case(shape: str, answer: str, *, text: str = document, exp: str = original) -> Case:
        return Case(
            action,
            language,
            fn.path,
            shape,
            text,
            start,
            start,
            answer,
            exp,
            missing,
            control and shape == "plain",
        )

    yield case("plain", missing)
    yield case("plain_newline", missing + "\n")
    yield case("head_repeat", indent + missing)
    for shape in _WRAPPERS:
        yield case(shape, _wrap(language, missing, shape))
    above = [p for p in range(c - 1, fn.header, -1) if lines[p].strip()][:2]
    if len(above) == 2 and all(len(lines[p].strip()) >= 8 for p in above):
        repeated = "\n".join(lines[min(above) : c]) + "\n" + indent + missing
        yield case("lines_above", repeated)
    whole = "\n".join(lines[fn.header : c]) + "\n" + indent + missing
    yield case("resent_function_fence", _wrap(language, whole, "fence"))
    yield case("resent_function_dedented", _wrap(language, textwrap.dedent(whole), "fence"))
    yield case("dedent", textwrap.dedent(indent + missing))
    yield case(
        "think_dedent_fence", _wrap(language, textwrap.dedent(indent + missing), "think_fence")
    )
    following = after.split("\n")[1:4]
    if sum(1 for f in following if f.strip()) >= 2:
        yield case("run_on", missing + "\n" + "\n".join(following) + "\n")
    closer = after.lstrip("\n").split("\n", 1)[0]
    if closer.strip() in ("}", "};"):
        yield case("closer_there", missing + "\n" + closer + "\n")
    yield case("crlf_answer", missing.replace("\n", "\r\n") + "\r\n")
    crlf_doc = document.replace("\n", "\r\n")
    yield case(
        "crlf_document",
        missing.replace("\n", "\r\n"),
        text=crlf_doc,
        exp=original.replace("\n", "\r\n"),
    )
    if "\t" in indent:
        yield case(
            "spaces_in_tabs",
            _wrap(language, textwrap.dedent((indent + missing).expandtabs(4)), "fence"),
        )
    # Mid-line: after the line's first words (``return ``, ``x = ``), the line repeated.
    head = re.match(r"\s*(return\s+|(let\s+|var\s+|const\s+)?[\w.]+\s*:?=\s*)", lines[c])
    if head and head.end() < len(lines[c]):
        mid = Point(c, head.end())
        a2 = _offset(lines, mid)
        mid_doc = original[:a2] + original[b:]
        rest = original[a2:b]
        for shape, answer in (
            ("mid_plain", rest),
            ("mid_line_repeated", lines[c].lstrip() + rest[len(lines[c]) - head.end() :]),
            ("mid_line_repeated_indented", lines[c] + rest[len(lines[c]) - head.end() :]),
            (
                "mid_line_repeated_fence",
                _wrap(language, lines[c] + rest[len(lines[c]) - head.end() :], "fence"),
            ),
        ):
            yield Case(action, language, fn.path, shape, mid_doc, mid, mid, answer, original, rest)


def _rename(text: str, salt: str) -> str | None:
    keywords = {
        "return",
        "self",
        "this",
        "true",
        "false",
        "None",
        "True",
        "False",
        "null",
        "nil",
        "const",
        "let",
        "var",
        "for",
        "while",
        "if",
        "else",
        "func",
        "new",
        "def",
        "in",
        "not",
        "and",
        "raise",
        "match",
        "break",
        "continue",
        "pass",
        "mut",
        "final",
    }
    names = [
        n
        for n in dict.fromkeys(re.findall(r"\b[a-z_][a-zA-Z0-9_]{2,}\b", text))
        if n not in keywords
    ]
    if not names:
        return None
    name = names[int(hashlib.sha256(salt.encode()).hexdigest(), 16) % len(names)]
    return re.sub(rf"\b{name}\b", name + "Renamed", text)


def _selection_cases(fn: Function, language: str) -> Iterator[Case]:
    lines = fn.lines
    first = _pick(fn.statements, fn.path + str(fn.header) + "sel")
    last = min(fn.last, first + 1 + _pick([0, 1, 2], fn.path + "n"))
    start, end = Point(first, 0), Point(last, len(lines[last]))
    original = "\n".join(lines)
    a, b = _offset(lines, start), _offset(lines, end)
    selection = original[a:b]
    renamed = _rename(selection, fn.path + str(first))
    if renamed is None or not selection.strip():
        return
    expected = original[:a] + renamed + original[b:]
    above = [p for p in range(first - 1, fn.header, -1) if lines[p].strip()][:2]
    around = {lines[first - 1].strip(), lines[last + 1].strip() if last + 1 < len(lines) else ""}
    control = any(m.strip() in around for m in renamed.split("\n") if m.strip())

    def case(shape: str, answer: str, *, text: str = original, exp: str = expected) -> Case:
        return Case(
            "edit_selection",
            language,
            fn.path,
            shape,
            text,
            start,
            end,
            answer,
            exp,
            renamed,
            control and shape == "plain",
        )

    yield case("plain", renamed)
    yield case("plain_newline", renamed + "\n")
    for shape in _WRAPPERS:
        yield case(shape, _wrap(language, renamed, shape))
    yield case("dedent", textwrap.dedent(renamed))
    yield case("think_dedent_fence", _wrap(language, textwrap.dedent(renamed), "think_fence"))
    yield case("bare_first_line", renamed.lstrip(" \t"))
    if len(above) == 2 and all(len(lines[p].strip()) >= 8 for p in above):
        yield case("lines_above", "\n".join(lines[min(above) : first]) + "\n" + renamed)
    tail = lines[last + 1 : fn.last + 2]
    whole = "\n".join([*lines[fn.header : first], renamed, *tail])
    yield case("resent_function_fence", _wrap(language, whole, "fence"))
    yield case("resent_function_dedented", _wrap(language, textwrap.dedent(whole), "fence"))
    following = lines[last + 1 : last + 4]
    if sum(1 for f in following if f.strip()) >= 2:
        yield case("run_on", renamed + "\n" + "\n".join(following))
    yield case(
        "crlf_document",
        renamed.replace("\n", "\r\n"),
        text=original.replace("\n", "\r\n"),
        exp=expected.replace("\n", "\r\n"),
    )
    if "\t" in renamed:
        yield case("spaces_in_tabs", _wrap(language, renamed.expandtabs(4), "fence"))


def cases() -> list[Case]:
    """Every case of every language whose sources are here."""
    result: list[Case] = []
    for language in LANGUAGES:
        for fn in functions(language):
            result.extend(_completion_cases(fn, language, "complete_rest"))
            result.extend(
                replace(c, action="inline") for c in _completion_cases(fn, language, "inline")
            )
            result.extend(_selection_cases(fn, language))
    return result


# -- landing ----------------------------------------------------------------------------------


def chunkings(answer: str) -> list[list[str]]:
    """The pieces a case's answer is streamed in: the stub's 3-code-point tokens, and 7."""
    return [split_tokens(answer, 3), split_tokens(answer, 7)]


def _apply(text: str, start: Point, end: Point, insert: str) -> str:
    lines = text.split("\n")
    a, b = _offset(lines, start), _offset(lines, end)
    return text[:a] + insert + text[b:]


# The cases of one function share their document, and each case is landed in several chunkings:
# the document (split into lines) and the case's target (both read-only) are built once.
@functools.lru_cache(maxsize=8)
def _document(text: str, language: str) -> Document:
    return Document("file:///corpus", text, language_id=language)


@functools.lru_cache(maxsize=8)
def _target(case: Case) -> Target:
    """The reconciler's target of the case (as the server's path for its action builds it)."""
    from fastedit_lsp.prompting import reconcile

    document = _document(case.text, case.language)
    replace = case.action == "edit_selection"
    return reconcile.target_at(document, case.start, case.end, replace=replace)


def _insertion(case: Case, chunks: list[str]) -> str:
    """The text the server's path for the case's action inserts at the target."""
    document = _document(case.text, case.language)
    try:
        from fastedit_lsp.prompting import reconcile
    except ImportError:  # the path before the reconciler (main at 60af93d), for the before figure
        return _insertion_before(case, document, chunks)
    rec = reconcile.Reconciler(_target(case))
    raw = "".join(rec.feed(c) for c in chunks) + rec.finish()
    if case.action == "inline":
        from fastedit_lsp.completion import cut as completion_text

        prefix = document.get_text(Point(0, 0), case.start)
        suffix = document.get_text(case.end, document.end)
        return completion_text.finish(raw, prefix, suffix, case.language)
    return raw


def _insertion_before(case: Case, document: Document, chunks: list[str]) -> str:
    from fastedit_lsp.prompting.filters import (  # type: ignore[attr-defined]
        FenceFilter,
        Pipeline,
        SuffixDedup,
    )

    prefix = document.get_text(Point(0, 0), case.start)
    suffix = document.get_text(case.end, document.end)
    if case.action == "complete_rest":
        pipeline = Pipeline(FenceFilter(), SuffixDedup(suffix))
    else:
        pipeline = Pipeline(FenceFilter())
    raw = "".join(pipeline.feed(c) for c in chunks) + pipeline.finish()
    if case.action != "inline":
        return raw
    from fastedit_lsp.completion import cut as completion_text

    return completion_text.finish(raw, prefix, suffix, case.language)


def lands_exactly(case: Case, chunks: list[str]) -> bool:
    inserted = _insertion(case, chunks)
    if case.action != "inline":
        return _apply(case.text, case.start, case.end, inserted) == case.expected
    # An item is exact when it is a start of the missing text, at least its first line whole.
    cut = case.cut.replace("\r\n", "\n")
    shown = inserted.replace("\r\n", "\n")
    first_line = cut.split("\n", 1)[0]
    return bool(shown) and cut.startswith(shown) and len(shown) >= len(first_line)


def strict() -> bool:
    return os.environ.get("CI", "").lower() == "true"
