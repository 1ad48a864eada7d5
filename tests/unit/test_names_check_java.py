"""Java's names check: names declared nowhere in the file, its package or what it inherits;
members a known type lacks; what is left alone when something cannot be known."""

from __future__ import annotations

from pathlib import Path

from fastedit_lsp.engines.names import JavaPackage, check_names
from fastedit_lsp.engines.parse import parse
from fastedit_lsp.project.java_package import JavaPackages

FILE = """package demo;

import java.util.List;
import java.util.ArrayList;

class Render extends Base {
    private final String sep = ", ";

    String render(List<String> items, int limit) {
        List<String> parts = new ArrayList<>();
        for (String item : items) {
            parts.add(item.trim());
        }
        return BODY;
    }
}
"""

BASE = "package demo;\n\npublic class Base {\n    protected int count;\n    void helper() {}\n}\n"


def _package(tmp_path: Path) -> JavaPackage | None:
    (tmp_path / "demo").mkdir(exist_ok=True)
    (tmp_path / "demo" / "Base.java").write_text(BASE)
    return JavaPackages().package(str(tmp_path / "demo" / "Render.java"))


def _check(body: str, package: JavaPackage | None, text: str = FILE) -> tuple[bool | None, str]:
    text = text.replace("BODY", body)
    parsed = parse("java", text)
    start = text.index("        List<String> parts")
    end = len(text.encode())
    verdict = check_names("java", parsed.tree, parsed.data, start, end, package)
    return verdict.ok, verdict.message


def test_correct_java_resolves_with_inherited_members(tmp_path: Path) -> None:
    body = 'String.join(sep, parts) + count + Math.max(limit, 1) + "" + hashCode()'
    assert _check(body, _package(tmp_path)) == (True, "every name read resolves")


def test_a_misspelled_local_is_flagged_with_its_line(tmp_path: Path) -> None:
    assert _check("String.join(sep, prts)", _package(tmp_path)) == (
        False,
        "line 14: 'prts' is not defined",
    )


def test_a_method_defined_nowhere_is_flagged(tmp_path: Path) -> None:
    ok, message = _check("loadParts(parts)", _package(tmp_path))
    assert ok is False and message == "line 14: 'loadParts' is not defined"


def test_a_jdk_member_that_does_not_exist_is_flagged_even_without_the_package() -> None:
    ok, message = _check("String.valueOf(Math.clamp(limit, 0, 1))", None)
    assert ok is False and message == "line 14: 'Math' has no member 'clamp'"


def test_a_missing_import_is_flagged(tmp_path: Path) -> None:
    text = FILE.replace("import java.util.ArrayList;\n", "")
    ok, message = _check("parts.toString()", _package(tmp_path), text)
    assert ok is False and message == "line 9: 'ArrayList' is not defined"


def test_a_type_of_the_package_on_disk_resolves(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "Helper.java").write_text("package demo;\nclass Helper {}\n")
    assert _check("new Helper().toString()", _package(tmp_path))[0] is True


def test_unknown_names_are_not_flagged_when_the_package_cannot_be_read() -> None:
    assert _check("loadParts(parts)", None)[0] is True


def test_a_superclass_whose_source_is_missing_leaves_unqualified_names_alone(
    tmp_path: Path,
) -> None:
    text = FILE.replace("extends Base", "extends com.example.Unknown")
    assert _check("inheritedHelper(parts)", _package(tmp_path), text)[0] is True


def test_a_package_prefix_is_not_a_name_and_a_star_import_of_the_jdk_is_known(
    tmp_path: Path,
) -> None:
    text = FILE.replace("import java.util.List;\n", "import java.util.*;\n")
    body = "java.util.Objects.toString(new LinkedList<String>(parts))"
    assert _check(body, _package(tmp_path), text)[0] is True
    assert _check("new LinkdList<String>().toString()", _package(tmp_path), text)[0] is False


def test_lambda_pattern_and_label_names_resolve(tmp_path: Path) -> None:
    body = (
        "parts.stream().map(p -> p + sep).filter(o -> o instanceof String s && !s.isEmpty())"
        '.findFirst().orElse("")'
    )
    assert _check(body, _package(tmp_path)) == (True, "every name read resolves")
