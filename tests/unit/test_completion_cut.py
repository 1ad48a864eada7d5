"""completion/cut.py: what of a model's inline completion is shown at the cursor.

Each case is a document with the cursor marked ``‸``, the model's text, and what each step makes
of it. The properties at the end pin what the caller relies on: an early stop (``has_enough``,
the stop sequences) never changes the result, and no step ever adds text.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fastedit_lsp.completion.cut import (
    Scope,
    balance_brackets,
    completion_scope,
    cut_at_block_boundary,
    finish,
    has_enough,
    stop_sequences,
)
from fastedit_lsp.completion.lexer import PREFIX_WINDOW
from fastedit_lsp.prompting.reconcile import Target, reconcile_text

CURSOR = "‸"


def at_cursor(document: str) -> tuple[str, str]:
    prefix, suffix = document.split(CURSOR)
    return prefix, suffix


# -- scope ------------------------------------------------------------------------------------

SCOPE_CASES = [
    pytest.param("x = foo(‸a)\n", "python", "line", id="mid-line-is-a-line"),
    pytest.param("x = ‸ + 1\n", "python", "line", id="text-after-cursor-is-a-line"),
    pytest.param("print(‸)\n", "python", "line", id="before-auto-paired-paren-is-a-line"),
    pytest.param('x = "‸"\n', "python", "line", id="inside-auto-paired-quotes-is-a-line"),
    pytest.param("x = compute(1)‸\n", "python", "line", id="end-of-plain-statement-is-a-line"),
    pytest.param("def f(x):\n    ‸\n", "python", "block", id="blank-indented-line-is-a-block"),
    pytest.param("def f(x):\n\t‸\n", "python", "block", id="blank-tab-indented-line-is-a-block"),
    pytest.param("‸", "python", "block", id="empty-document-is-a-block"),
    pytest.param("def f(x):‸\n", "python", "block", id="after-def-colon-is-a-block"),
    pytest.param(
        "def f(x):  ‸\n", "python", "block", id="trailing-spaces-after-colon-still-a-block"
    ),
    pytest.param("items = [‸\n", "python", "block", id="after-open-bracket-is-a-block"),
    pytest.param("d = {'a':‸\n", "python", "line", id="colon-inside-dict-is-a-line"),
    pytest.param("x = y[1:‸\n", "python", "line", id="colon-inside-slice-is-a-line"),
    pytest.param("x = 1  # todo:‸\n", "python", "line", id="colon-in-comment-is-a-line"),
    pytest.param('s = "see (‸\n', "python", "line", id="paren-in-string-is-a-line"),
    pytest.param("def f() ->‸\n", "python", "line", id="python-arrow-is-a-line"),
    pytest.param("    ‸}\n", "javascript", "line", id="blank-line-before-closer-is-a-line"),
    pytest.param("function f() {‸\n", "javascript", "block", id="js-after-brace-is-a-block"),
    pytest.param("function f() {‸}\n", "javascript", "block", id="js-inside-auto-paired-braces"),
    pytest.param("foo(function() {‸});\n", "javascript", "block", id="js-callback-braces"),
    pytest.param("const f = (x) =>‸\n", "typescript", "block", id="ts-arrow-is-a-block"),
    pytest.param("foo(() =>‸)\n", "typescript", "line", id="ts-arrow-before-paren-is-a-line"),
    pytest.param("const x = f(1);‸\n", "typescript", "line", id="ts-statement-end-is-a-line"),
    pytest.param("func main() {‸\n}\n", "go", "block", id="go-after-brace-is-a-block"),
    pytest.param("match x {\n    Some(v) =>‸\n", "rust", "block", id="rust-match-arm-is-a-block"),
    pytest.param("x -> ‸\n", "java", "block", id="java-lambda-arrow-is-a-block"),
    pytest.param("x -> ‸\n", "javascript", "line", id="arrow-only-where-it-opens-a-block"),
    pytest.param('{"a": [‸\n', "json", "block", id="json-after-bracket-is-a-block"),
    pytest.param("def f(x):‸\r\n    pass\r\n", "python", "block", id="crlf-after-colon"),
    pytest.param("x = foo(‸a)\r\n", "python", "line", id="crlf-mid-line"),
    pytest.param("int f() { // see {‸\n", "c", "line", id="brace-in-c-comment-is-a-line"),
]


@pytest.mark.parametrize(("document", "language", "expected"), SCOPE_CASES)
def test_scope_follows_the_syntax_at_the_cursor(
    document: str, language: str, expected: Scope
) -> None:
    prefix, suffix = at_cursor(document)
    assert completion_scope(prefix, suffix, language) == expected


def test_stop_sequences_end_a_line_at_its_break_and_a_block_at_two_blank_lines() -> None:
    assert stop_sequences("line") == ("\n",)
    assert stop_sequences("block") == ("\n\n\n",)


# -- block boundary ---------------------------------------------------------------------------

CUT_CASES = [
    pytest.param("x = ‸", "python", "line", "foo(1)\nbar(2)", "foo(1)", id="line-ends-at-break"),
    pytest.param("x = ‸", "python", "line", "foo(1)\r\nbar()", "foo(1)", id="line-ends-at-crlf"),
    pytest.param("x = ‸", "python", "line", "foo(1)", "foo(1)", id="line-without-break-is-whole"),
    pytest.param("x = ‸", "python", "line", "\nfoo(1)", "", id="line-starting-with-break-is-empty"),
    pytest.param(
        "def f(x):‸",
        "python",
        "block",
        "\n    y = x + 1\n    return y\n\ndef g():\n    pass\n",
        "\n    y = x + 1\n    return y",
        id="test_block_after_def_stops_at_dedent",
    ),
    pytest.param(
        "def f(x):\n    ‸",
        "python",
        "block",
        "y = x + 1\n    return y\nprint(f(1))\n",
        "y = x + 1\n    return y",
        id="blank-line-in-body-stops-at-dedent",
    ),
    pytest.param(
        "def f(x):\n    ‸",
        "python",
        "block",
        "y = 1\n\n    z = 2\n\n\n    w = 3\n",
        "y = 1\n\n    z = 2",
        id="two-blank-lines-end-a-block-one-does-not",
    ),
    pytest.param(
        "def f(x):‸",
        "python",
        "block",
        '\n    """Doc.\n\n    More.\n\n\n    Far below.\n    """\n',
        '\n    """Doc.\n\n    More.',
        id="two-blank-lines-end-a-block-inside-a-docstring-too",
    ),
    pytest.param(
        "function f() {‸",
        "javascript",
        "block",
        "\n  /* a\n\n\n  b */\n}\n",
        "\n  /* a",
        id="two-blank-lines-end-a-block-inside-a-block-comment-too",
    ),
    pytest.param(
        "if ready:‸",
        "python",
        "block",
        "\n    start()\nelif late:\n    hurry()\nelse:\n    wait()\nafter()\n",
        "\n    start()\nelif late:\n    hurry()\nelse:\n    wait()",
        id="python-else-at-the-opener-depth-continues-the-block",
    ),
    pytest.param(
        "try:‸",
        "python",
        "block",
        "\n    run()\nexcept OSError:\n    pass\nfinally:\n    close()\nelsewhere = 1\n",
        "\n    run()\nexcept OSError:\n    pass\nfinally:\n    close()",
        id="python-except-finally-continue-but-not-a-name-starting-with-else",
    ),
    pytest.param(
        "class A:\n    ‸",
        "python",
        "block",
        "def f(self):\n        return 1\n    def g(self):\n        return 2\n",
        "def f(self):\n        return 1",
        id="blank-line-whose-first-line-opens-a-block-gets-that-block",
    ),
    pytest.param(
        "‸",
        "python",
        "block",
        "import os\nimport sys\n\n\ndef main():\n    pass\n",
        "import os\nimport sys",
        id="top-level-statements-stop-at-two-blank-lines",
    ),
    pytest.param(
        "def f(x):‸",
        "python",
        "block",
        '\n    """Doc.\n\nDedented text inside the docstring.\n    """\n    return x\nz = 1',
        '\n    """Doc.\n\nDedented text inside the docstring.\n    """\n    return x',
        id="dedent-inside-a-docstring-does-not-end-the-block",
    ),
    pytest.param(
        "def f(x):‸",
        "python",
        "block",
        "\n    return x\n\n   \n\t\n",
        "\n    return x",
        id="trailing-whitespace-only-lines-are-removed",
    ),
    pytest.param(
        "value = compute(‸",
        "python",
        "block",
        "\n    first,\n    second,\n)\nother = 1\n",
        "\n    first,\n    second,\n)",
        id="python-bracket-block-ends-with-its-closer",
    ),
    pytest.param(
        "function f() {‸",
        "javascript",
        "block",
        "\n  return 1;\n}\n\nfunction g() {}\n",
        "\n  return 1;\n}",
        id="js-block-ends-right-after-its-closing-brace",
    ),
    pytest.param(
        "if (a) {‸",
        "javascript",
        "block",
        "\n  x();\n} else {\n  y();\n}\nz();\n",
        "\n  x();\n} else {\n  y();\n}",
        id="js-else-reopens-the-block",
    ),
    pytest.param(
        "foo(function () {‸",
        "javascript",
        "block",
        "\n  x();\n});\nbar();\n",
        "\n  x();\n});",
        id="js-callback-keeps-the-rest-of-its-closing-line",
    ),
    pytest.param(
        "function f() {‸",
        "javascript",
        "block",
        '\n  log("} not a closer");\n  return 1;\n}\nmore();\n',
        '\n  log("} not a closer");\n  return 1;\n}',
        id="brace-in-a-string-does-not-close",
    ),
    pytest.param(
        "function f() {‸",
        "typescript",
        "block",
        "\n  // closes } here? no\n  return `a\n}`;\n}\nmore();\n",
        "\n  // closes } here? no\n  return `a\n}`;\n}",
        id="brace-in-comment-or-template-does-not-close",
    ),
    pytest.param(
        "function f() {‸",
        "javascript",
        "block",
        " return 1; }\nmore();\n",
        " return 1; }",
        id="first-line-closing-the-opener-is-the-whole-block",
    ),
    pytest.param(
        "const f = (x) =>‸",
        "typescript",
        "block",
        " {\n  return x;\n};\nconst g = 1;\n",
        " {\n  return x;\n};",
        id="ts-arrow-body-opened-on-the-first-line",
    ),
    pytest.param(
        "function f() {\n  ‸",
        "javascript",
        "block",
        "const x = 1;\n  return x;\n}\n",
        "const x = 1;\n  return x;",
        id="statements-stop-before-the-enclosing-closer",
    ),
    pytest.param(
        "function f() {\n  ‸",
        "javascript",
        "block",
        "const x = 1;\n  return x; }\nmore();\n",
        "const x = 1;\n  return x; }",
        id="statements-keep-a-line-that-ends-with-the-enclosing-closer",
    ),
    pytest.param(
        "func main() {‸",
        "go",
        "block",
        "\n\tfmt.Println(`}`)\n}\n\nfunc other() {}\n",
        "\n\tfmt.Println(`}`)\n}",
        id="go-tabs-and-raw-string",
    ),
    pytest.param(
        "\tif ok {‸",
        "go",
        "block",
        "\n        run()\n    }\n\tnext()\n",
        "\n        run()\n    }",
        id="tabbed-file-answered-in-spaces",
    ),
    pytest.param(
        "\tdef f(self):‸",
        "python",
        "block",
        "\n\t\treturn 1\n    def g(self):\n",
        "\n\t\treturn 1",
        id="tab-counts-as-four-columns-against-spaces",
    ),
    pytest.param(
        "fn f<'a>(x: &'a str) -> &'a str {‸",
        "rust",
        "block",
        "\n    match x {\n        \"(\" => x,\n        _ => '}'.to_string(),\n    }\n}"
        "\nfn g() {}\n",
        "\n    match x {\n        \"(\" => x,\n        _ => '}'.to_string(),\n    }\n}",
        id="rust-lifetimes-and-char-literals",
    ),
    pytest.param(
        "int main(void) {‸",
        "c",
        "block",
        "\r\n  return 0;\r\n}\r\nint other;\r\n",
        "\r\n  return 0;\r\n}",
        id="crlf-block-never-ends-inside-a-line-break",
    ),
    pytest.param(
        "public class A {‸",
        "java",
        "block",
        "\n  int x = 1;\n  /* } */\n  char c = '}';\n}\nclass B {}\n",
        "\n  int x = 1;\n  /* } */\n  char c = '}';\n}",
        id="java-block-comment-and-char-literal",
    ),
    pytest.param(
        '{"a": [‸',
        "json",
        "block",
        '\n  1,\n  2\n]}\n{"b": 2}\n',
        "\n  1,\n  2\n]}",
        id="json-array-block",
    ),
    pytest.param("def f(x):‸", "python", "block", "", "", id="empty-text"),
]


@pytest.mark.parametrize(("document", "language", "scope", "text", "expected"), CUT_CASES)
def test_cut_keeps_the_line_or_the_block_being_written(
    document: str, language: str, scope: Scope, text: str, expected: str
) -> None:
    prefix, _ = at_cursor(document)
    assert cut_at_block_boundary(text, prefix, scope, language) == expected


# -- brackets ---------------------------------------------------------------------------------

BALANCE_CASES = [
    pytest.param("x = ‸\n", "python", "a, b) + c", "a, b", id="closer-with-nothing-open-cuts"),
    pytest.param("foo(‸\n", "python", "a, b] + c", "a, b", id="closer-of-the-wrong-type-cuts"),
    pytest.param("foo(‸\n", "python", "a, [b)]", "a, [b", id="closer-not-matching-top-cuts"),
    pytest.param("x = ‸\n", "python", ")", "", id="only-a-stray-closer-is-empty"),
    pytest.param(
        "print(‸)\n", "python", "foo(a, b))", "foo(a, b)", id="closer-supplied-by-suffix-dropped"
    ),
    pytest.param("print(f(‸)\n", "python", "x)", "x)", id="closer-the-suffix-needs-stays"),
    pytest.param(
        "x = [1, 2‸\n]\n", "python", ", 3]", ", 3", id="suffix-closer-on-next-line-supplies-it"
    ),
    pytest.param(
        "foo(function () {‸});\n",
        "javascript",
        "\n  x();\n});",
        "\n  x();\n",
        id="supplied-closers-go-with-the-semicolon-after-them",
    ),
    pytest.param(
        "function f() {\n  ‸\n}\n",
        "javascript",
        "if (x) {\n    a();\n  }",
        "if (x) {\n    a();\n  }",
        id="completion-own-pair-is-never-split",
    ),
    pytest.param(
        "x = ‸\n", "python", "\"(\" + y + ')'", "\"(\" + y + ')'", id="brackets-in-strings-ignored"
    ),
    pytest.param(
        "x = ‸\n", "python", "1  # see f(x))", "1  # see f(x))", id="brackets-in-comment-ignored"
    ),
    pytest.param(
        'print("a(‸\n', "python", 'b")', 'b")', id="cursor-inside-string-paren-not-counted"
    ),
    pytest.param(
        "fn f<'a>(x: &'a str‸\n",
        "rust",
        ") -> &'a str {",
        ") -> &'a str {",
        id="rust-lifetime-is-not-a-string",
    ),
    pytest.param("c = f(‸\n", "c", "')')", "')')", id="c-char-literal-paren-ignored"),
    pytest.param("/* (\n */ x = ‸\n", "c", "a)", "a", id="bracket-in-prefix-comment-opens-nothing"),
    pytest.param("x = ‸\n", "python", "", "", id="empty-text"),
]


@pytest.mark.parametrize(("document", "language", "text", "expected"), BALANCE_CASES)
def test_balance_cuts_stray_closers_and_drops_supplied_ones(
    document: str, language: str, text: str, expected: str
) -> None:
    prefix, suffix = at_cursor(document)
    assert balance_brackets(text, prefix, suffix, language_id=language) == expected


def test_balance_reads_only_a_bounded_tail_of_the_prefix() -> None:
    # An opener further back than the window is not seen: its closer counts as stray.
    far = "f(\n" + "x = 1\n" * (PREFIX_WINDOW // 6 + 10)
    assert balance_brackets("a)", far, "") == "a"
    assert balance_brackets("a)", "f(\nx = 1\n", "") == "a)"


# -- overlap with the suffix: the reconciler's, then the cut ------------------------------------

TRIM_CASES = [
    pytest.param("‸)\n", "python", "line", "foo(a, b))", "foo(a, b)", id="repeated-closer-dropped"),
    pytest.param("y = ‸x + 1\n", "python", "line", "2 * x", "2 * ", id="repeated-word-dropped"),
    pytest.param("y = ‸foo(x)\n", "python", "line", "foo(x)", "", id="whole-repeat-is-empty"),
    pytest.param("y = ‸bar(x)\n", "python", "line", "foo(x)", "foo(x)", id="no-overlap-unchanged"),
    pytest.param(
        "print(f(‸)\n", "python", "line", "x)", "x)", id="closer-needed-by-the-prefix-stays"
    ),
    pytest.param(
        'f("abc‸")\n', "python", "line", 'def")', "def", id="repeated-quote-and-closer-dropped"
    ),
    pytest.param(
        "def f(x):\n    ‸\n    return y\n",
        "python",
        "block",
        "y = x + 1\n    return y",
        "y = x + 1",
        id="block-last-line-repeating-the-suffix-dropped",
    ),
    pytest.param(
        "def f(x):‸\n\n    y = 2\n    return y   \nprint(f(1))\n",
        "python",
        "block",
        "\n    x += 1\n    y = 2\n    return y\n",
        "\n    x += 1",
        id="block-repeated-lines-ignore-trailing-whitespace",
    ),
    pytest.param(
        "def f(x):\n    ‸\n    return y\n",
        "python",
        "block",
        "return y",
        "",
        id="block-whole-repeat-is-empty",
    ),
    pytest.param(
        "def f(x):‸\n    return y\n",
        "python",
        "block",
        "\n        return y",
        "\n        return y",
        id="block-line-at-another-depth-is-not-a-repeat",
    ),
    pytest.param(
        "function f() {‸}\n",
        "javascript",
        "block",
        "\n  return 1;\n}",
        "\n  return 1;\n",
        id="block-keeps-the-break-before-the-rest-of-the-cursor-line",
    ),
    pytest.param(
        "function f() {‸\n}\n",
        "javascript",
        "block",
        "\n  return 1;\n}",
        "\n  return 1;",
        id="block-repeated-closing-line-dropped",
    ),
    pytest.param("x = ‸\n", "python", "line", "", "", id="empty-text"),
    pytest.param("x = ‸", "python", "line", "foo()", "foo()", id="empty-suffix"),
]


@pytest.mark.parametrize(("document", "language", "scope", "text", "expected"), TRIM_CASES)
def test_what_repeats_the_suffix_is_not_shown(
    document: str, language: str, scope: Scope, text: str, expected: str
) -> None:
    prefix, suffix = at_cursor(document)
    assert completion_scope(prefix, suffix, language) == scope
    reconciled = reconcile_text(Target(prefix, suffix, language_id=language), text)
    # The same, once the cut has normalised trailing whitespace and line breaks.
    assert finish(reconciled, prefix, suffix, language) == finish(
        expected, prefix, suffix, language
    )


# -- all together -----------------------------------------------------------------------------

FINISH_CASES = [
    pytest.param("def f(x):‸\n", "python", "   \n\t \n", "", id="whitespace-only-is-empty"),
    pytest.param("x = ‸\n", "python", "", "", id="empty-is-empty"),
    pytest.param("x = ‸\n", "python", "compute(1)  \nmore", "compute(1)", id="line-trailing-ws"),
    pytest.param(
        "def f(x):‸\n",
        "python",
        "\n    y = x + 1\n    return y\n\ndef g():\n    pass\n",
        "\n    y = x + 1\n    return y",
        id="python-body",
    ),
    pytest.param("print(‸)\n", "python", "foo(a, b))\n", "foo(a, b)", id="python-call-argument"),
    pytest.param(
        "function f() {‸}\n",
        "javascript",
        "\n  return 1;\n}\n\nfunction g() {}",
        "\n  return 1;\n",
        id="js-auto-paired-braces-get-a-body-on-its-own-lines",
    ),
    pytest.param(
        "class A {\n  f() {‸\n  }\n  g() {}\n}\n",
        "typescript",
        "\n    return 1;\n  }\n",
        "\n    return 1;",
        id="ts-method-closing-brace-already-there",
    ),
    pytest.param(
        "func main() {‸\n",
        "go",
        '\n\tfmt.Println("}")\n}\n\nfunc other() {}\n',
        '\n\tfmt.Println("}")\n}',
        id="go-function",
    ),
    pytest.param(
        "fn f<'a>(x: &'a str) -> usize {‸\n}\n",
        "rust",
        "\n    x.len()\n}\n",
        "\n    x.len()",
        id="rust-body-with-lifetimes",
    ),
    pytest.param(
        "def f(x):‸\r\n",
        "python",
        "\n    y = x + 1\n    return y\n",
        "\r\n    y = x + 1\r\n    return y",
        id="crlf-document-gets-crlf",
    ),
    pytest.param(
        "def f(x):‸\r\n",
        "python",
        "\r\n    return x\r\n\r\nz = 1",
        "\r\n    return x",
        id="crlf-answer-in-crlf-document-is-not-split",
    ),
    pytest.param(
        "def f(x):‸\n",
        "python",
        "\r\n    return x\r\n",
        "\n    return x",
        id="crlf-answer-in-lf-document-gets-lf",
    ),
    pytest.param(
        "def f(x):\n\t‸\n",
        "python",
        "y = x\n\treturn y\nz = 1\n",
        "y = x\n\treturn y",
        id="tab-indented-body",
    ),
    pytest.param(
        "def f(x):\n    ‸\n    return y\n",
        "python",
        "return y\n",
        "",
        id="completion-only-repeating-the-suffix-is-empty",
    ),
]


@pytest.mark.parametrize(("document", "language", "text", "expected"), FINISH_CASES)
def test_the_reconciled_text_then_finish_give_the_text_to_show(
    document: str, language: str, text: str, expected: str
) -> None:
    prefix, suffix = at_cursor(document)
    reconciled = reconcile_text(Target(prefix, suffix, language_id=language), text)
    assert finish(reconciled, prefix, suffix, language) == expected


def test_finish_reads_only_a_bounded_tail_of_the_prefix() -> None:
    prefix, suffix = at_cursor("def f(x):‸\n")
    text = "\n    return x\nz = 1\n"
    huge = "# filler line\n" * (PREFIX_WINDOW // 7) + prefix
    assert finish(text, huge, suffix, "python") == finish(text, prefix, suffix, "python")


# -- early stop -------------------------------------------------------------------------------

ENOUGH_CASES = [
    pytest.param("x = ‸\n", "python", "compute(1)", False, id="line-without-break-needs-more"),
    pytest.param("x = ‸\n", "python", "compute(1)\n", True, id="line-break-is-enough"),
    pytest.param("x = ‸\n", "python", "", False, id="nothing-yet"),
    pytest.param("def f():‸\n", "python", "\n    a()\n", False, id="block-still-open"),
    pytest.param("def f():‸\n", "python", "\n    a()\nb()\n", True, id="dedent-line-seen-whole"),
    pytest.param(
        "if x:‸\n", "python", "\n    a()\nel", False, id="partial-dedent-line-could-be-else"
    ),
    pytest.param("if x:‸\n", "python", "\n    a()\nelse:\n", False, id="else-continues"),
    pytest.param("if (x) {‸\n", "javascript", "\n  a();\n}", False, id="closer-could-become-else"),
    pytest.param("if (x) {‸\n", "javascript", "\n  a();\n}\n", True, id="closing-line-seen-whole"),
    pytest.param("def f():\n    ‸\n", "python", "a = 1\n\n", False, id="one-blank-line-needs-more"),
    pytest.param(
        "def f():\n    ‸\n", "python", "a = 1\n\n\n", True, id="two-blank-lines-are-enough"
    ),
    pytest.param(
        "def f():\n    ‸\n", "python", "a = 1)\n    b = 2", True, id="stray-closer-on-a-whole-line"
    ),
    pytest.param(
        "def f():\n    ‸\n", "python", "a = 1)", False, id="stray-closer-on-a-partial-line"
    ),
]


@pytest.mark.parametrize(("document", "language", "text", "expected"), ENOUGH_CASES)
def test_has_enough_once_the_cut_point_is_seen(
    document: str, language: str, text: str, expected: bool
) -> None:
    prefix, suffix = at_cursor(document)
    assert has_enough(text, prefix, suffix, language) is expected
    if expected:
        assert finish(text + "\n    more = 1\n}", prefix, suffix, language) == finish(
            text, prefix, suffix, language
        )


# -- properties -------------------------------------------------------------------------------

# Pieces models write, chosen to cross every rule: line breaks of each kind, indentation,
# openers and closers, quotes, comments, Python keywords that continue a block.
PIECES = [
    "\n", "\n", "\n", "\r\n", "    ", "  ", "\t", " ", "a", "x = 1", "return x", ";", ",", ":",
    "(", ")", "[", "]", "{", "}", "} else {", "else:", "elif y:", "def f():", "if (a) {",
    '"', "'", "'a'", '"""', "`", "#", "//", "/*", "*/", "\\", "=>",
]  # fmt: skip
CONTEXTS = [
    ("def f(x):‸\n", "python"),
    ("def f(x):\n    ‸\n    return 1\n", "python"),
    ("‸", "python"),
    ("print(‸)\n", "python"),
    ('x = "ab‸")\n', "python"),
    ("if x:\r\n    ‸\r\n", "python"),
    ("function f() {‸\n}\n", "javascript"),
    ("function f() {‸}\n", "javascript"),
    ("function f() {\n  ‸\n}", "javascript"),
    ("s = `‸`", "typescript"),
    ("fn f<'a>() {\n    ‸\n}\n", "rust"),
    ("\tif x {‸\n\t}\n", "go"),
    ("int main() {\n  /* ‸", "c"),
    ("x = ‸)", "java"),
    ("{‸}", "json"),
]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
contexts = st.sampled_from(CONTEXTS)


@settings(max_examples=200, deadline=None)
@given(texts, contexts)
def test_stopping_when_has_enough_changes_nothing(text: str, context: tuple[str, str]) -> None:
    document, language = context
    prefix, suffix = at_cursor(document)
    whole = finish(text, prefix, suffix, language)
    for k in range(len(text) + 1):
        if has_enough(text[:k], prefix, suffix, language):
            assert finish(text[:k], prefix, suffix, language) == whole


@settings(max_examples=200, deadline=None)
@given(texts, contexts)
# Two blank lines inside a block comment: the model stops there, so finish() must cut there too.
@example(text="/*\n\n\na", context=("function f() {‸\n}\n", "javascript"))
def test_stopping_at_a_stop_sequence_changes_nothing(text: str, context: tuple[str, str]) -> None:
    document, language = context
    prefix, suffix = at_cursor(document)
    scope = completion_scope(prefix, suffix, language)
    whole = finish(text, prefix, suffix, language)
    for stop in stop_sequences(scope):
        if stop in text:
            stopped = text[: text.index(stop)]
            assert finish(stopped, prefix, suffix, language) == whole


@settings(max_examples=200, deadline=None)
@given(texts, contexts)
def test_no_step_adds_text(text: str, context: tuple[str, str]) -> None:
    document, language = context
    prefix, suffix = at_cursor(document)
    lf_text = text.replace("\r", "")
    assert lf_text.startswith(balance_brackets(lf_text, prefix, suffix, language_id=language))
    if "\r" not in document:
        assert lf_text.startswith(finish(lf_text, prefix, suffix, language))
