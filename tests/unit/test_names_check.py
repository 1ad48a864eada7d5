"""The names check (engines/names) and the verifier's ``checks`` (actions/parse_check): a draft
that reads a name defined nowhere, a misspelled local, a member a stdlib module lacks, or a
module it never imports fails; what cannot be known is not flagged; CPython has the last word
on Python's syntax."""

from __future__ import annotations

from typing import Any

import pytest

from fastedit_lsp.actions import parse_check
from fastedit_lsp.core.document import Document, Point
from fastedit_lsp.engines.names import check_names
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.engines.parse_trees import ParseTrees


def _names(text: str, region: str, language: str = "python") -> list[str]:
    """The findings' messages for the names read in ``region`` (the last such part of
    ``text``)."""
    parsed = parse(language, text)
    start = parsed.data.rindex(region.encode())
    verdict = check_names(language, parsed.tree, parsed.data, start, start + len(region.encode()))
    assert verdict.ok is not None, verdict.message
    return [f.message for f in verdict.findings]


MODULE = """\
import json
import os.path as osp
from pathlib import PurePath


def read_config(path):
    with open(path) as handle:
        return json.load(handle)


class Store:
    kind = "store"

    def __init__(self, buffer, *rest, size=1, **options):
        self.buffer = buffer
        total = sum(len(x) for x in rest)
        if (n := total) > size:
            print(n, options, osp.sep, PurePath)

    def get(self):
        BODY
"""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("return load_config('a')", ["line 21: 'load_config' is not defined"]),
        ("return bufer", ["line 21: 'bufer' is not defined"]),
        ("return json.parse('1')", ["line 21: 'json' has no member 'parse'"]),
        ("return Path('a')", ["line 21: 'Path' is not defined"]),
    ],
    ids=["a synonym of a defined function", "a misspelled local", "a member", "a missing import"],
)
def test_a_name_that_resolves_nowhere_is_found_with_its_line(
    body: str, expected: list[str]
) -> None:
    assert _names(MODULE.replace("BODY", body), body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "return read_config(self.buffer) or json.loads('1') or Store.kind",
        "return [k for k, v in {}.items() if v] or (lambda q, *w: q)(1) or __name__",
        "return ExceptionGroup, print, osp.join, PurePath('a'), later()",
        "global LATER\n        LATER = 1\n        return LATER",
    ],
    ids=["defined names", "scopes of comprehensions and lambdas", "builtins", "a global"],
)
def test_correct_code_has_no_finding(body: str) -> None:
    text = MODULE.replace("BODY", body) + "\n\ndef later():\n    return 1\n"
    assert _names(text, body) == []


def test_a_local_of_another_function_does_not_resolve_here() -> None:
    text = "def a():\n    total = 1\n    return total\n\ndef b():\n    return total\n"
    assert _names(text, "return total\n") == ["line 6: 'total' is not defined"]


@pytest.mark.parametrize(
    "head",
    [
        "from os import *",
        "globals()['x'] = 1",
        "exec('x = 1')",
        "import builtins\nbuiltins.load_config = print",
        "setattr(builtins, 'load_config', print)",
        "define(globals())",
    ],
    ids=["star import", "globals() write", "exec", "builtins", "setattr", "globals() handed over"],
)
def test_what_cannot_be_known_is_not_flagged(head: str) -> None:
    text = f"{head}\n\ndef f():\n    return load_config(1)\n"
    assert _names(text, "return load_config(1)") == []


def test_a_member_of_a_module_rebound_in_the_file_is_not_checked() -> None:
    text = "import json\njson = object()\n\ndef f():\n    return json.parse(1)\n"
    assert _names(text, "return json.parse(1)") == []


def test_importing_a_name_a_stdlib_module_lacks_is_found() -> None:
    text = "from json import parse, loads\n"
    assert _names(text, text) == ["line 1: cannot import 'parse' from 'json'"]


def test_a_c_name_an_unreadable_header_may_declare_is_not_checked_rather_than_ok() -> None:
    parsed = parse("c", '#include "generated.h"\nint f(void) { return g(); }\n')
    verdict = check_names("c", parsed.tree, parsed.data, 0, len(parsed.data))
    assert verdict.ok is None and "not checked" in verdict.message


class _Data:  # the fields the verifier reads of an ActionInput
    def __init__(self, text: str, start: Point, end: Point) -> None:
        self.document = Document("file:///a.py", text, language_id="python")
        self.path = "/a.py"
        self.start, self.end = start, end
        self.original = None
        self.trees = ParseTrees()


def _verify(text: str, start: Point, end: Point, draft: str) -> dict[str, object]:
    verify = parse_check.verifier(_Data(text, start, end))  # type: ignore[arg-type]
    assert verify is not None
    return verify(draft)


def test_the_verification_records_each_check_and_names_the_failed_one() -> None:
    text = "def read_config(path):\n    return path\n\n\ndef main():\n    pass\n"
    result = _verify(text, Point(5, 4), Point(5, 8), "return load_config('x')")
    assert result["ok"] is False
    assert result["details"] == "names check: line 6: 'load_config' is not defined"
    checks = result["checks"]
    assert isinstance(checks, list)
    assert [(c["name"], c["ok"]) for c in checks] == [("parse", True), ("names", False)]
    names = checks[1]
    assert names["symbol"] == "load_config"
    assert names["at"] == {"line": 0, "character": 7, "end": 18}
    assert all(isinstance(c["ms"], float) for c in checks)


def test_cpython_rejects_what_tree_sitter_recovers_from() -> None:
    text = "x = 1\n"
    draft = "def add(a, b):\n    def add(a, b):\n    return a + b\n"
    result = _verify(text, Point(1, 0), Point(1, 0), draft)
    assert result["ok"] is False
    assert "CPython" in str(result["details"]) and "indented block" in str(result["details"])


def test_cpython_judges_the_statements_around_the_draft_when_the_file_does_not_compile() -> None:
    text = "def broken(:\n    pass\n\n\ndef f():\n    pass\n"
    bad = _verify(text, Point(5, 4), Point(5, 8), "if x:\n    return 1\n     return 2")
    assert bad["ok"] is False and "CPython" in str(bad["details"])
    good = _verify(text, Point(5, 4), Point(5, 8), "return 1")
    assert good["ok"] is not False


def test_a_follow_up_for_a_names_failure_asks_about_the_name() -> None:
    from fastedit_lsp.backends.base import ChatMessage, ChatRequest

    request = ChatRequest(messages=(ChatMessage("user", "complete"),), max_tokens=100)
    result = {
        "ok": False,
        "details": "names check: line 3: 'bufer' is not defined",
        "checks": [
            {"name": "parse", "ok": True, "details": "", "ms": 0.1},
            {"name": "names", "ok": False, "details": "line 3: 'bufer' is not defined", "ms": 0.1},
        ],
    }
    follow = parse_check.correction(request)("return bufer", result)
    assert follow is not None
    assert "'bufer' is not defined" in follow.messages[-1].content
    assert "parse" not in follow.messages[-1].content


JS = """\
import { readConfig as rc } from './config';
const fs = require('fs');

function readConfig(path, { strict = false, ...rest }, [first]) {
  try {
    return JSON.parse(fs.readFileSync(path, 'utf8')) || rc(first, strict, rest);
  } catch (error) {
    console.error(error, document.title, HTMLCanvasElement, process.env);
  }
  BODY
}

function later() { var hoisted = 1; return hoisted; }
"""


@pytest.mark.parametrize("language", ["javascript", "typescript", "tsx"])
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("return loadConfig(path);", ["line 10: 'loadConfig' is not defined"]),
        ("return pth;", ["line 10: 'pth' is not defined"]),
        ("return Math.clamp(1, 0, 2);", ["line 10: 'Math' has no member 'clamp'"]),
        ("return path.join(dir, 'a');", ["line 10: 'dir' is not defined"]),
    ],
    ids=["a synonym", "a misspelled local", "a member", "a missing import"],
)
def test_javascript_names_that_resolve_nowhere_are_found(
    language: str, body: str, expected: list[str]
) -> None:
    assert _names(JS.replace("BODY", body), body, language) == expected


@pytest.mark.parametrize(
    "body",
    [
        "return later() + rc(first) + Math.max(1, 2) + Object.keys(rest).length;",
        "if (Math.clamp) { return Math.clamp(1, 0, 2); }",
        "describe('x', () => it('y', () => expect(window.x).toBe(undefined)));",
    ],
    ids=["declared and hoisted names", "a feature-tested member", "globals of other environments"],
)
def test_correct_javascript_has_no_finding(body: str) -> None:
    assert _names(JS.replace("BODY", body), body, "javascript") == []


def test_a_completion_reading_an_undeclared_name_does_not_resolve() -> None:
    """The offline completion (completion/source.py) offers nothing that fails this: a line
    from another document using a variable this one does not declare."""
    from fastedit_lsp.engines.names import draft_resolves

    prefix = "def area(width, height):\n    return "
    suffix = "\n"
    assert not draft_resolves("python", prefix, "width * height * scale", suffix)
    assert draft_resolves("python", prefix, "width * height", suffix)
    assert draft_resolves("go", "package a\n", "var x = y\n", "")  # no names check: offered


def test_the_bench_section_measures_the_names_check_and_gets_the_verdicts_right() -> None:
    from fastedit_lsp.tools import bench_names

    result = bench_names.measure(5, lines=300)
    assert result["verdictsRight"] is True  # the draft passes, its misspelled copy fails
    assert result["firstUseMs"] > 0 and result["warmMs"]["p50"] > 0
    assert result["lines"] >= 250
    table = bench_names.report(result)
    assert "names check" in table and "| python |" in table


def test_the_names_benchs_warm_figures_leave_out_the_processes_first_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process's first Python check reads the stubs of the document's imports (~70 ms; the
    section measures that as the first use, in a new process): the warm p50 and p99 come after
    it. Measured with it, the warm p99 of 80 runs had been that first check (72 of 81 ms)."""
    from fastedit_lsp.engines import names
    from fastedit_lsp.tools import bench_names

    real, clock, checks = names.check_names, [0.0], [0]

    def check(language: str, *args: Any) -> Any:
        checks[0] += 1
        if checks[0] == 1:
            clock[0] += 1.0  # the first check in this process: a second of loading
        return real(language, *args)

    monkeypatch.setattr(names, "check_names", check)
    monkeypatch.setattr(bench_names.time, "perf_counter", lambda: clock[0])
    result = bench_names.measure(5, lines=300)
    assert result["verdictsRight"] is True
    assert result["warmMs"]["p99"] == 0, result["warmMs"]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("javascript", "const ua = typeof __BUILD_FLAG__ !== 'undefined' ? 1 : 2;\n"),
        ("typescript", "type Row = [red: number, green?: number];\nlet m: { [key: string]: 1 };\n"),
        ("typescript", "const enum Size { CELL = 3, BYTES = CELL * 4 }\n"),
    ],
    ids=["typeof guard", "tuple members and index signatures", "enum members"],
)
def test_typescript_and_javascript_constructs_that_read_no_name(language: str, text: str) -> None:
    assert _names(text, text, language) == []


def test_a_region_over_several_functions_sees_each_ones_parameters() -> None:
    text = "def a(x):\n    return x\n\n\ndef b(y):\n    return y + z\n"
    assert _names(text, text) == ["line 6: 'z' is not defined"]


@pytest.mark.parametrize(
    "text",
    [
        "try:\n    number = (int, long)\nexcept NameError:\n    number = int\n",
        "def f(self):\n    self.rows: Dict[str, int] = {}\n",
        "from __future__ import annotations\n\ndef f(x: Missing) -> None:\n    pass\n",
        "import base64\nif hasattr(base64, 'decodebytes'):\n    d = base64.decodebytes\n"
        "else:\n    d = base64.decodestring\n",
    ],
    ids=["try except NameError", "a local's annotation", "lazy annotations", "hasattr"],
)
def test_names_python_never_evaluates_or_guards_are_not_flagged(text: str) -> None:
    assert _names(text, text) == []


def test_each_read_of_a_name_looks_at_its_other_occurrences_at_most_once_overall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A rewrite of a long function whose every line reads a helper bound far above and a
    # builtin bound nowhere: each read once scanned all occurrences of its name (a 2,000-line
    # function took 0.9 s). Counted in lookups, not time: linear in the occurrences.
    from fastedit_lsp.engines.names import python as names_python

    lines = 300
    head = "def compute(n):\n    return n\n\n\ndef table():\n"
    body = "".join(f"    value_{i} = compute(len(str({i})))\n" for i in range(lines))
    text = head + body + "    return locals()\n"
    looked: list[int] = []
    at = names_python._Bindings._at

    def counted(self: object, offset: int, size: int) -> object:
        looked.append(offset)
        return at(self, offset, size)  # type: ignore[arg-type]

    monkeypatch.setattr(names_python._Bindings, "_at", counted)
    data = text.encode()
    found = names_python.findings(parse("python", text).tree, data, len(head), len(head + body))
    assert found == []
    occurrences = 3 * lines + 1  # compute, len and str on every line, and ``def compute``
    assert len(looked) <= 2 * occurrences, len(looked)
