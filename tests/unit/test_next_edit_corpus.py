"""The offline next-edit engine on a corpus generated at test time from installed code.

Modules of the standard library are read where they are installed (never copied in). In each, a
scripted edit is applied at one or two places the way a user makes it (through the document's
edit history), and the places it has not reached are held out:
- rename: a function's local variable renamed at its first one or two occurrences;
- argument: a keyword (or positional) argument added to the first one or two calls of a function;
- rewrite: a method renamed at its first calls (``.append(`` -> ``.add_item(``), and ``%``
  formatting turned into an f-string on the first lines that use it.
Points with no next edit: the same edits once every place is done, a variable swapped for another
one already in scope, a changed number.

Per kind, the floors: at least 60 % of the suggestions are exactly a held-out edit, a suggestion
comes at >= 50 % of the points that have a next edit and at <= 10 % of those that have none.
"""

from __future__ import annotations

import ast
import re
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.engines.next_edit.history import EditHistory
from fastedit_lsp.engines.next_edit.lines import Prediction
from fastedit_lsp.engines.next_edit.predict import predict

STDLIB = Path(sysconfig.get_paths()["stdlib"])
MODULES = (
    "argparse.py",
    "difflib.py",
    "textwrap.py",
    "configparser.py",
    "csv.py",
    "ftplib.py",
    "http/client.py",
    "imaplib.py",
    "logging/__init__.py",
    "mailbox.py",
    "pickletools.py",
    "pstats.py",
    "shutil.py",
    "smtplib.py",
    "tarfile.py",
    "trace.py",
    "zipfile/__init__.py",
    "email/_header_value_parser.py",
    "calendar.py",
    "pydoc.py",
    "inspect.py",
    "dis.py",
    "json/encoder.py",
    "json/decoder.py",
    "fractions.py",
    "gettext.py",
    "optparse.py",
)
#: Points per module and kind, so that no module dominates.
PER_MODULE = 6

Edit = tuple[int, int, int, str]  # line, start col, end col, new text


@dataclass
class CorpusPoint:
    kind: str
    source: list[str]
    steps: list[Edit]  # the user's edits, applied in order
    held_out: set[Edit]  # the places not reached yet, in the document after the steps


@dataclass
class Tally:
    positive: int = 0
    suggested_positive: int = 0
    right: int = 0
    negative: int = 0
    suggested_negative: int = 0
    misses: list[str] = field(default_factory=list)

    def line(self, kind: str) -> str:
        exact = self.right / max(1, self.suggested_positive)
        coverage = self.suggested_positive / max(1, self.positive)
        noise = self.suggested_negative / max(1, self.negative)
        return (
            f"{kind:8} exact {exact:6.1%} ({self.right}/{self.suggested_positive})  "
            f"suggested at {coverage:6.1%} of {self.positive} points with a next edit, "
            f"{noise:5.1%} of {self.negative} without"
        )


def _modules() -> list[tuple[str, list[str]]]:
    out = []
    for name in MODULES:
        path = STDLIB / name
        if path.is_file():
            out.append((name, path.read_text(encoding="utf-8").split("\n")))
    return out


def _col(line: str, byte_offset: int) -> int:
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))


# -- renames ---------------------------------------------------------------------------------------


def _rename_points(source: list[str], tree: ast.Module) -> Iterator[CorpusPoint]:
    made = 0
    for func in ast.walk(tree):
        if made >= PER_MODULE or not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        sites: dict[str, list[tuple[int, int]]] = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Name):
                sites.setdefault(node.id, []).append((node.lineno - 1, node.col_offset))
            elif isinstance(node, ast.arg):
                sites.setdefault(node.arg, []).append((node.lineno - 1, node.col_offset))
        stored = {
            n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
        local = sorted(n for n in stored if len(sites.get(n, [])) >= 3 and n != "self")
        if not local:
            continue
        name = local[0]
        places = sorted((line, _col(source[line], col)) for line, col in sites[name])
        new = f"{name}_renamed"
        edits = [(line, col, col + len(name), new) for line, col in places]
        made += 1
        for k in (1, 2):
            if k < len(edits):
                yield CorpusPoint("rename", source, edits[:k], set(edits[k:]))
        yield CorpusPoint("rename", source, edits, set())  # done: nothing left
        others = [n for n in local if n != name]
        if others:
            # A variable swapped for another one in scope: not a rename.
            loads = [
                (n.lineno - 1, _col(source[n.lineno - 1], n.col_offset))
                for n in ast.walk(func)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
            ]
            if loads:
                line, col = max(loads)
                yield CorpusPoint(
                    "rename", source, [(line, col, col + len(name), others[0])], set()
                )


# -- added arguments -------------------------------------------------------------------------------


def _callee(call: ast.Call) -> tuple[str, bool] | None:
    if isinstance(call.func, ast.Name):
        return call.func.id, False
    if isinstance(call.func, ast.Attribute):
        return call.func.attr, True
    return None


def _argument_points(source: list[str], tree: ast.Module) -> Iterator[CorpusPoint]:
    calls: dict[tuple[str, bool], list[ast.Call]] = {}
    every: dict[tuple[str, bool], int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (key := _callee(node)) is not None:
            every[key] = every.get(key, 0) + 1
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                continue
            calls.setdefault(key, []).append(node)
    made = 0
    for key in sorted(calls):
        group = sorted(calls[key], key=lambda c: (c.lineno, c.col_offset))
        if made >= PER_MODULE or len(group) < 3:
            continue
        made += 1
        keyword = made % 2 == 1
        text = "trace_id=None" if keyword else "None"
        first = group[0]
        count = len(first.args) + len(first.keywords)
        fits = [
            c
            for c in group
            if keyword or (not c.keywords and len(c.args) == count and not first.keywords)
        ]
        edits = [e for c in fits if (e := _insert_argument(source, c, text)) is not None]
        edits.sort()
        for k in (1, 2):
            if k < len(edits):
                yield CorpusPoint("argument", source, edits[:k], set(edits[k:]))
        if len(edits) >= 2:
            yield CorpusPoint("argument", source, edits, set())
    # A call of a function called only once: nothing to carry it to.
    singles = [g[0] for k, g in sorted(calls.items()) if every[k] == 1 and not k[1]]
    for call in singles[: PER_MODULE // 2]:
        edit = _insert_argument(source, call, "trace_id=None")
        if edit is not None:
            yield CorpusPoint("argument", source, [edit], set())


def _insert_argument(source: list[str], call: ast.Call, text: str) -> Edit | None:
    assert call.end_lineno is not None and call.end_col_offset is not None
    parts = [*call.args, *call.keywords]
    if not parts:
        line = call.end_lineno - 1
        col = _col(source[line], call.end_col_offset) - 1
        if source[line][col : col + 1] != ")" or source[line][col - 1 : col] != "(":
            return None
        return (line, col, col, text)
    last = max(parts, key=lambda p: (p.end_lineno or 0, p.end_col_offset or 0))
    assert last.end_lineno is not None and last.end_col_offset is not None
    line = last.end_lineno - 1
    col = _col(source[line], last.end_col_offset)
    return (line, col, col, ", " + text)


# -- rewrites --------------------------------------------------------------------------------------


_VALUE = r"[\w.]+(?:\([^()'\",]*\)|\[[^\[\]'\",]*\])*"
_SPEC = r"%(?:[0-9]*(?:\.[0-9]+)?[sdf]|r)"
_SIMPLE_PERCENT = re.compile(
    rf"""(?<![\w'"])(?P<q>["'])(?P<body>(?:(?!(?P=q))[^\\%{{}}\n])*(?:{_SPEC}(?:(?!(?P=q))[^\\%{{}}\n])*)+)(?P=q)"""
    rf""" % (?:(?P<one>{_VALUE})|\((?P<many>{_VALUE}(?:, {_VALUE})*)\))(?![\w.(\[])"""
)


def _to_fstring(line: str) -> str | None:
    """The corpus's own (deliberately simple) %-to-f-string conversion of one line."""
    match = _SIMPLE_PERCENT.search(line)
    if match is None:
        return None
    quote, body = match.group("q"), match.group("body")
    values = match.group("many").split(", ") if match.group("many") else [match.group("one")]
    fields = re.findall(_SPEC, body)
    if len(fields) != len(values) or any(quote in v for v in values):
        return None
    pieces = re.split(_SPEC, body)
    out = pieces[0]
    for spec, value, piece in zip(fields, values, pieces[1:], strict=True):
        width, kind = spec[1:-1], spec[-1]
        fmt = "!r" if kind == "r" else (f":{width}{kind}" if width or kind == "f" else "")
        out += "{" + value + fmt + "}" + piece
    return line[: match.start()] + "f" + quote + out + quote + line[match.end() :]


def _line_edit(line: int, old: str, new: str) -> Edit:
    i = 0
    while i < min(len(old), len(new)) and old[i] == new[i]:
        i += 1
    j, k = len(old), len(new)
    while j > i and k > i and old[j - 1] == new[k - 1]:
        j, k = j - 1, k - 1
    return (line, i, j, new[i:k])


def _rewrite_points(source: list[str], tree: ast.Module) -> Iterator[CorpusPoint]:
    # A method renamed at its calls.
    methods: dict[str, list[Edit]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func
            assert attr.end_lineno is not None and attr.end_col_offset is not None
            if attr.end_lineno != attr.lineno and attr.value.end_lineno != attr.end_lineno:
                continue
            line = attr.end_lineno - 1
            end = _col(source[line], attr.end_col_offset)
            start = end - len(attr.attr)
            if source[line][start:end] == attr.attr:
                methods.setdefault(attr.attr, []).append((line, start, end, attr.attr + "_v2"))
    made = 0
    for name in sorted(methods, key=lambda n: (-len(methods[n]), n)):
        edits = sorted(set(methods[name]))
        if made >= PER_MODULE // 2 or len(edits) < 3:
            continue
        made += 1
        for k in (1, 2):
            yield CorpusPoint("rewrite", source, edits[:k], set(edits[k:]))
        yield CorpusPoint("rewrite", source, edits, set())
    # %-formatting to f-strings.
    lines = [(i, new) for i, text in enumerate(source) if (new := _to_fstring(text)) is not None]
    edits = [_line_edit(i, source[i], new) for i, new in lines]
    if len(edits) >= 2:
        for k in (1, 2):
            if k < len(edits):
                yield CorpusPoint("rewrite", source, edits[:k], set(edits[k:]))
        yield CorpusPoint("rewrite", source, edits, set())
    # A changed number: not a rewrite to repeat.
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value == 1:
            line = node.lineno - 1
            col = _col(source[line], node.col_offset)
            if source[line][col : col + 1] == "1" and node.end_lineno == node.lineno:
                yield CorpusPoint("rewrite", source, [(line, col, col + 1, "2")], set())
                break


# -- running ---------------------------------------------------------------------------------------


def _run(point: CorpusPoint) -> Prediction | None:
    """Apply the user's edits through a document and its history; ask the engine."""
    document = Document("file:///corpus.py", "\n".join(point.source), language_id="python")
    history = EditHistory()
    cursor = Point(0, 0)
    for line, start, end, text in point.steps:
        col_shift = sum(d for (ln, c), d in _shifts(point, line, start) if ln == line)
        s, e = Point(line, start + col_shift), Point(line, end + col_shift)
        before = (document.line(line),)
        change = document.replace(s, e, text)
        history.record(change, before, (document.line(line),), own=False)
        cursor = Point(line, s.col + len(text))
    return predict(document, list(history.records), cursor, "python")


def _shifts(point: CorpusPoint, line: int, start: int) -> list[tuple[tuple[int, int], int]]:
    """How much the user's earlier edits on ``line`` moved column ``start``."""
    out = []
    for ln, s, e, text in point.steps:
        if ln == line and s < start:
            out.append(((ln, s), len(text) - (e - s)))
    return out


def _expected(point: CorpusPoint) -> set[Edit]:
    """The held-out edits in the coordinates of the document after the user's edits."""
    out = set()
    for line, start, end, text in point.held_out:
        shift = sum(d for _, d in _shifts(point, line, start))
        out.add((line, start + shift, end + shift, text))
    return out


@pytest.fixture(scope="module")
def tallies() -> dict[str, Tally]:
    modules = _modules()
    if len(modules) < 10:
        pytest.skip(f"the standard library's sources are not installed at {STDLIB}")
    out = {kind: Tally() for kind in ("rename", "argument", "rewrite")}
    for name, source in modules:
        tree = ast.parse("\n".join(source))
        for point in [
            *_rename_points(source, tree),
            *_argument_points(source, tree),
            *_rewrite_points(source, tree),
        ]:
            tally = out[point.kind]
            got = _run(point)
            found = None if got is None else (got.start.line, got.start.col, got.end.col, got.text)
            if got is not None and got.start.line != got.end.line:
                found = None
            if point.held_out:
                tally.positive += 1
                if got is not None:
                    tally.suggested_positive += 1
                    if found in _expected(point):
                        tally.right += 1
                    else:
                        tally.misses.append(f"{name}: {got} not in {sorted(_expected(point))[:3]}")
            else:
                tally.negative += 1
                if got is not None:
                    tally.suggested_negative += 1
                    tally.misses.append(f"{name}: {got} where nothing was left")
    return out


@pytest.mark.parametrize("kind", ["rename", "argument", "rewrite"])
def test_next_edit_corpus_floors(kind: str, tallies: dict[str, Tally]) -> None:
    tally = tallies[kind]
    shown = "\n    ".join([tally.line(kind), *tally.misses[:5]])
    print("\n" + shown)  # noqa: T201 (the corpus figures are the point of this test)
    assert tally.positive >= 20 and tally.negative >= 10, "the corpus is too small"
    assert tally.right >= 0.6 * tally.suggested_positive
    assert tally.suggested_positive >= 0.5 * tally.positive
    assert tally.suggested_negative <= 0.1 * tally.negative
