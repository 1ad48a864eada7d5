"""syntax_fix.py: find the first syntax error, repair it inside its region, verified by compile().

Each case is a broken file, the file after the repair, and what the repair says it did.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.engines.syntax_fix.python import Repair, error_region, find_error, repair


def applied(source: str, fix: Repair) -> str:
    lines = source.splitlines(keepends=True)
    return "".join(lines[: fix.start_line]) + fix.new_text + "".join(lines[fix.end_line + 1 :])


def compiles(source: str) -> bool:
    try:
        compile(source, "<test>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


CASES = [
    # A missing ':'
    pytest.param(
        "def f(x)\n    return x\n",
        "def f(x):\n    return x\n",
        "added a missing ':'",
        id="colon-def",
    ),
    pytest.param(
        "if x:\n    a()\nelse\n    b()\n",
        "if x:\n    a()\nelse:\n    b()\n",
        "added a missing ':'",
        id="colon-else",
    ),
    pytest.param(
        "if (first and\n        second)\n    go()\n",
        "if (first and\n        second):\n    go()\n",
        "added a missing ':'",
        id="colon-multi-line-header",
    ),
    pytest.param(
        "try:\n    a()\nexcept KeyError  # missing\n    b()\n",
        "try:\n    a()\nexcept KeyError:  # missing\n    b()\n",
        "added a missing ':'",
        id="colon-before-comment-after-try-body",
    ),
    pytest.param("d = {'a' 1}\n", "d = {'a': 1}\n", "added a missing ':'", id="colon-in-dict"),
    # Brackets
    pytest.param(
        "x = foo(a,\n    b\nbar()\n",
        "x = foo(a,\n    b)\nbar()\n",
        "closed '('",
        id="close-multi-line",
    ),
    pytest.param(
        "if foo(a:\n    pass\n", "if foo(a):\n    pass\n", "closed '('", id="close-before-colon"
    ),
    pytest.param(
        "x = foo([a, b)\n", "x = foo([a, b])\n", "closed '['", id="mismatched-bracket-closed"
    ),
    pytest.param(
        "print(compute x, y))\n",
        "print(compute(x, y))\n",
        "added a missing '('",
        id="missing-opener",
    ),
    pytest.param(
        "def run(self):\n    return helperself, x)\n\n\ndef helper(a, b):\n    pass\n",
        "def run(self):\n    return helper(self, x)\n\n\ndef helper(a, b):\n    pass\n",
        "added a missing '('",
        id="opener-lost-between-two-names",
    ),
    pytest.param(
        "x = [1, 2]]\n", "x = [1, 2]\n", "removed a duplicated ']'", id="doubled-closer-removed"
    ),
    # Strings
    pytest.param(
        'x = foo("abc, y)\n', 'x = foo("abc", y)\n', "closed a string", id="string-closed"
    ),
    pytest.param(
        'x = foo(abc", y)\n', 'x = foo("abc", y)\n', "added a missing quote", id="string-opened"
    ),
    pytest.param(
        "m = {'a: 'b'}\n",
        "m = {'a': 'b'}\n",
        "added a missing quote",
        id="quote-lost-in-the-string-before",
    ),
    pytest.param(
        "p = re.compile(r[a-z]+\\d')\n",
        "p = re.compile(r'[a-z]+\\d')\n",
        "added a missing quote",
        id="raw-string-lost-its-opening-quote",
    ),
    # Triple quotes (errors in docstrings)
    pytest.param(
        'def f():\n    ""Doc.\n\n    More.\n    """\n    return 1\n',
        'def f():\n    """Doc.\n\n    More.\n    """\n    return 1\n',
        "completed a triple quote",
        id="docstring-opener-lost-a-quote",
    ),
    pytest.param(
        'def f():\n    """Doc.\n\n    More.\n    ""\n    return 1\n\n\n'
        'def g():\n    """Other."""\n',
        'def f():\n    """Doc.\n\n    More.\n    """\n    return 1\n\n\n'
        'def g():\n    """Other."""\n',
        "completed a triple quote",
        id="docstring-closer-lost-a-quote",
    ),
    # Indentation
    pytest.param(
        "def f():\nreturn 1\n", "def f():\n    return 1\n", "re-indented line 2", id="indent-block"
    ),
    pytest.param(
        "def f():\n    a = 1\nb = 2\n    return a\n",
        "def f():\n    a = 1\n    b = 2\n    return a\n",
        "re-indented line 3",
        id="dedented-line-inside-a-block",
    ),
    pytest.param(
        "def f():\n    a = 1\nreturn a\n",
        "def f():\n    a = 1\n    return a\n",
        "re-indented line 3",
        id="return-outside-function",
    ),
    pytest.param(
        "def f():\n    if x:\n        a()\n      b()\n",
        "def f():\n    if x:\n        a()\n        b()\n",
        "re-indented line 4",
        id="unindent-does-not-match",
    ),
    pytest.param(
        "class A:\n    def f(self):\n        pass\n\n      def g(self):\n        pass\n",
        "class A:\n    def f(self):\n        pass\n\n    def g(self):\n        pass\n",
        "re-indented line 5",
        id="method-header-misindented",
    ),
    # Stray and duplicated tokens
    pytest.param(
        "def f():\n    return return 1\n",
        "def f():\n    return 1\n",
        "removed a duplicated 'return'",
        id="duplicated-keyword",
    ),
    pytest.param("x = = 1\n", "x = 1\n", "removed a duplicated '='", id="duplicated-operator"),
    pytest.param(
        "def f(a, b==1):\n    pass\n",
        "def f(a, b=1):\n    pass\n",
        "removed a stray '='",
        id="half-of-a-double-operator",
    ),
    pytest.param(
        "total = price * $ count\n", "total = price * count\n", "removed a stray '$'", id="stray"
    ),
]


@pytest.mark.parametrize(("broken", "fixed", "description"), CASES)
def test_repairs(broken: str, fixed: str, description: str) -> None:
    fix = repair(broken)
    assert fix is not None
    assert applied(broken, fix) == fixed
    assert fix.description == description
    region = error_region(broken)
    assert region is not None
    assert region[0] <= fix.start_line <= fix.end_line <= region[1]


def test_a_file_that_compiles_needs_no_repair() -> None:
    source = 'def f(x):\n    """Example: def g(:\n    """\n    return "if x"\n'
    assert find_error(source) is None
    assert error_region(source) is None
    assert repair(source) is None


def test_broken_looking_code_inside_strings_is_left_alone() -> None:
    source = 'EXAMPLE = """\ndef broken(:\n    return (\n"""\n\ndef f(x)\n    return x\n'
    fix = repair(source)
    assert fix is not None
    assert applied(source, fix) == source.replace("def f(x)", "def f(x):")
    assert fix.start_line == fix.end_line == 5


def test_find_error_reports_the_line_and_message() -> None:
    assert find_error("a = 1\nb = (2\n") == (1, "'(' was never closed")
    assert find_error("x = 1\nif x\n    pass\n") == (1, "expected ':'")


def test_an_earlier_parser_error_beats_a_later_tokenizer_error() -> None:
    # compile() reports the unterminated string on line 5 first; the mistake is on line 2.
    source = 'def f():\n    ""Doc.\n\n    More.\n    """\n    return 1\n'
    try:
        compile(source, "<test>", "exec")
    except SyntaxError as exc:
        assert exc.lineno == 5
    assert find_error(source) == (1, "invalid syntax")


def test_the_repair_names_the_original_error() -> None:
    fix = repair("x = 1\ndef f(x)\n    return x\n")
    assert fix is not None
    assert fix.error == "line 2: expected ':'"


def test_crlf_files_keep_crlf() -> None:
    broken = "def f(x):\r\n    if x\r\n        return 1\r\n"
    fix = repair(broken)
    assert fix is not None
    assert fix.new_text == "    if x:\r\n"
    fixed = applied(broken, fix)
    assert fixed == "def f(x):\r\n    if x:\r\n        return 1\r\n"
    assert "\n" not in fixed.replace("\r\n", "")


def test_tab_indented_files_are_reindented_with_tabs() -> None:
    broken = "def f(x):\n\tif x:\n\treturn 1\n\treturn 2\n"
    fix = repair(broken)
    assert fix is not None
    assert applied(broken, fix) == "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 2\n"


def test_a_file_without_a_final_newline() -> None:
    fix = repair("x = [1, 2")
    assert fix is not None
    assert fix.new_text == "x = [1, 2]"


def test_no_repair_when_nothing_small_works() -> None:
    assert repair("x = $ $ $ $\n") is None


def test_lines_outside_the_region_are_never_changed() -> None:
    # The stray quote's fix would be far away; only the region around line 12 may change.
    body = "".join(f"v{i} = {i}\n" for i in range(10))
    broken = body + "\n" + "x = (1 +\n" + body
    region = error_region(broken)
    assert region is not None
    fix = repair(broken)
    if fix is not None:
        assert region[0] <= fix.start_line <= fix.end_line <= region[1]
        assert compiles(applied(broken, fix))


LINES = ["x = 1", "def f(a):", "    return a", "if a:", "    pass", "y = [1,", "2]", "'s'"]


@given(
    st.lists(st.sampled_from(LINES), min_size=1, max_size=8),
    st.sampled_from(["", "(", ")", ":", '"', "'", "    ", "[", "return "]),
    st.integers(0, 7),
)
def test_a_repair_compiles_and_stays_in_its_region(lines: list[str], noise: str, at: int) -> None:
    at = min(at, len(lines) - 1)
    lines[at] = noise + lines[at]
    source = "\n".join(lines) + "\n"
    fix = repair(source)
    if fix is None:
        return
    region = error_region(source)
    assert region is not None
    assert region[0] <= fix.start_line <= fix.end_line <= region[1]
    assert compiles(applied(source, fix))
