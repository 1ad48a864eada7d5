"""Go's names check: unknown standard library members, names declared nowhere in the file or
its package, and what is left alone when the package cannot be read."""

from __future__ import annotations

from pathlib import Path

from fastedit_lsp.engines.names import check_names
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.project.go_package import GoPackages

FILE = """package text

import (
\t"strings"
\tf "fmt"
)

type Item struct{ Name string }

func Render(items []Item, sep string) string {
\tparts := make([]string, 0, len(items))
\tfor _, item := range items {
\t\tparts = append(parts, Item{Name: item.Name}.Name)
\t}
\tvar b strings.Builder
\tf.Fprint(&b, strings.Join(parts, sep))
\treturn BODY
}
"""


def _check(body: str, package: frozenset[str] | None) -> tuple[bool | None, str]:
    text = FILE.replace("BODY", body)
    parsed = parse("go", text)
    start = text.index("func Render")
    end = len(text.encode())
    verdict = check_names("go", parsed.tree, parsed.data, start, end, package)
    return verdict.ok, verdict.message


def test_correct_go_resolves() -> None:
    assert _check("b.String()", frozenset()) == (True, "every name read resolves")


def test_a_standard_library_member_that_does_not_exist_is_flagged_with_its_line() -> None:
    ok, message = _check("strings.Reverse(b.String())", None)
    assert ok is False and message == "line 17: 'strings' has no member 'Reverse'"


def test_a_misspelled_local_is_flagged_when_the_package_is_known() -> None:
    ok, message = _check("sepp", frozenset({"Other"}))
    assert ok is False and message == "line 17: 'sepp' is not defined"


def test_a_name_another_file_of_the_package_declares_resolves() -> None:
    assert _check("helper(sep)", frozenset({"helper"}))[0] is True


def test_unknown_names_are_not_flagged_when_the_package_cannot_be_read() -> None:
    assert _check("helper(sep)", None)[0] is True


def test_a_dot_import_leaves_unknown_names_alone() -> None:
    text = FILE.replace('"strings"', '"strings"\n\t. "math"').replace("BODY", "Sqrt2")
    parsed = parse("go", text)
    verdict = check_names("go", parsed.tree, parsed.data, 0, len(parsed.data), frozenset())
    assert verdict.ok is True


def test_a_missing_import_is_flagged() -> None:
    ok, message = _check("sort.Strings(parts)", frozenset())
    assert ok is False and "'sort' is not defined" in message


def test_the_package_is_read_from_the_files_next_to_the_document(tmp_path: Path) -> None:
    (tmp_path / "a.go").write_text("package text\n\nfunc helper() int { return 1 }\n")
    (tmp_path / "b_test.go").write_text("package text_test\n\nvar fixture = 2\n")
    (tmp_path / "c.go").write_text("package other\n\nconst Elsewhere = 3\n")
    (tmp_path / "d.go").write_text(FILE)
    names = GoPackages().names(str(tmp_path / "d.go"))
    assert names == frozenset({"helper", "fixture"})


def test_a_package_with_a_file_that_does_not_parse_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "a.go").write_text("package text\n\nfunc helper( {\n")
    assert GoPackages().names(str(tmp_path / "d.go")) is None


def test_every_name_of_a_multi_name_const_or_var_resolves(tmp_path: Path) -> None:
    (tmp_path / "a.go").write_text("package p\n\nconst (\n\tlo, hi = 1, 2\n)\n\nvar x, y int\n")
    assert GoPackages().names(str(tmp_path / "b.go")) == frozenset({"lo", "hi", "x", "y"})
    text = "package p\n\nfunc f() int {\n\tvar a, b = 1, 2\n\treturn a + b\n}\n"
    parsed = parse("go", text)
    verdict = check_names("go", parsed.tree, parsed.data, 0, len(parsed.data), frozenset())
    assert verdict.ok is True
