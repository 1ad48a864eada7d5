"""The offline syntax repair beyond Python (engines/syntax_repair.py) on small broken files."""

from __future__ import annotations

import pytest

from fastedit_lsp.engines import parse as ts_parse
from fastedit_lsp.engines.syntax_fix.treesitter import error_region, repair


def _fix(language: str, text: str) -> str | None:
    """The text repaired within the region the action gives (None: no repair)."""
    found = error_region(ts_parse.parse(language, text))
    assert found is not None
    _problem, first, last = found
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[:first])
    end = start + len("".join(lines[first : last + 1]).rstrip("\n"))
    fixed = repair(language, text, start, end)
    return None if fixed is None else text[:start] + fixed.text + text[end:]


CASES = [
    # (language, correct text, the piece deleted from it)
    ("javascript", "function f(a, b) {\n  return g(a, b);\n}\n", "g(a, b)"),
    ("javascript", "const s = 'it';\nconsole.log(s);\n", "'it'"),
    (
        "typescript",
        "function f(n: number): void {\n  for (let i = 0; i < n; i++) {\n    g(i);\n  }\n}\n",
        "(let i = 0; i < n; i++)",
    ),
    ("go", "package p\n\nfunc f(a, b int) int {\n\treturn g(a, b)\n}\n", "a, b)"),
    ("rust", "fn f(a: u8) -> u8 {\n    let b = [a, 1];\n    b[0]\n}\n", "[a, 1]"),
    ("java", "class A {\n  int f(int a) {\n    return a + 1;\n  }\n}\n", "1;"),
    ("c", 'int f(void) {\n  puts("hi");\n  return 0;\n}\n', '"hi"'),
    ("cpp", "int f(int a) {\n  int b[] = {a, 2};\n  return b[0];\n}\n", "{a, 2}"),
    ("c_sharp", "class A {\n  int F(int a) {\n    return G(a, 1);\n  }\n}\n", "G(a, 1)"),
]


def _mutants(text: str, piece: str) -> list[str]:
    """The text with each closer, semicolon, closing quote and comma of ``piece`` deleted."""
    at = text.index(piece)
    out = []
    for i, char in enumerate(piece):
        closing_quote = char in "'\"" and i > 0
        if char in ")]};," or closing_quote:
            out.append(text[: at + i] + text[at + i + 1 :])
    return out


@pytest.mark.parametrize(("language", "text", "piece"), CASES)
def test_a_deleted_token_is_inserted_back(language: str, text: str, piece: str) -> None:
    assert ts_parse.parse_errors(language, text) == []
    mutants = _mutants(text, piece)
    assert mutants
    for mutant in mutants:
        assert ts_parse.parse_errors(language, mutant), mutant
        fixed = _fix(language, mutant)
        assert fixed is not None, mutant
        assert ts_parse.parse_errors(language, fixed) == [], fixed


def test_a_block_left_open_is_closed_where_the_indentation_says() -> None:
    text = (
        "function total(items) {\n  let sum = 0;\n  for (const item of items) {\n"
        "    if (item > 0) {\n      sum += item;\n  }\n  return sum;\n}\n\n"
        "const x = total([1, 2]);\nconsole.log(x);\n"
    )
    # tree-sitter reports the brace missing at the end of the file.
    assert ts_parse.parse_errors("javascript", text)[0].line == 10
    assert _fix("javascript", text) == text.replace("sum += item;\n", "sum += item;\n    }\n")


def test_a_file_broken_by_an_unterminated_string_is_repaired_at_the_string() -> None:
    body = "".join(f"  int f{i}() {{\n    return {i};\n  }}\n" for i in range(12))
    text = f'class A {{\n{body}  String s() {{\n    return "x);\n  }}\n}}\n'
    found = error_region(ts_parse.parse("java", text))
    assert found is not None
    problem, first, last = found
    string_line = text.splitlines().index('    return "x);')
    assert problem.line < string_line - 12  # tree-sitter's ERROR starts at the class
    assert first <= string_line <= last
    fixed = _fix("java", text)
    assert fixed is not None
    assert ts_parse.parse_errors("java", fixed) == []


def test_no_repair_outside_the_region_nor_for_a_file_that_parses() -> None:
    text = "package p\n\nfunc f() {\n\tg(1\n}\n\nfunc h() {}\n"
    assert ts_parse.parse_errors("go", text)
    # The region is the last function only: the missing ")" is not in it.
    start = text.index("func h")
    assert repair("go", text, start, len(text) - 1) is None
    assert repair("go", "package p\n", 0, 9) is None
    assert error_region(ts_parse.parse("go", "package p\n")) is None


def test_a_doubled_operator_has_no_offline_repair() -> None:
    assert _fix("go", "package p\n\nfunc f() {\n\tx := := 1\n\tprintln(x)\n}\n") is None


def test_errors_are_found_when_the_window_starts_between_two_declarations() -> None:
    """py-tree-sitter's goto_first_child_for_byte answers None for a byte between two children:
    the missing ")" was not seen from a window starting on the blank line (failed before)."""
    text = "package p\n\nvar a = 1\n\nfunc f(x int {\n\treturn\n}\n"
    parsed = ts_parse.parse("go", text)
    blank = text.index("\n\nfunc") + 1
    assert parsed.problems(blank, len(parsed.data))
    assert [p.token for p in parsed.problems(blank, len(parsed.data))] == [
        p.token for p in parsed.problems()
    ]
