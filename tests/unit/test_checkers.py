"""The project's checkers as a draft's check, the pure part: their output read, only the errors
the draft introduced kept (matched by code and message, lines mapped through the edit), each
verdict as ``verification.checks`` records it; which program may run (invariant 7)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.engines.checkers import (
    CheckerRun,
    Finding,
    introduced,
    parse_mypy,
    parse_ruff,
    parse_vet,
    shadow,
    verdict,
)
from fastedit_lsp.project.checkers import find, mirror, wanted
from fastedit_lsp.settings import Layer, resolve

BEFORE = "import os\n\n\ndef f(x):\n    return x\n\n\nprint(missing)\n"


def _draft(text: str) -> tuple[str, int, int]:
    start = BEFORE.index("    return x")
    return text, start, start + len("    return x")


def test_a_shadow_holds_the_texts_and_the_region_lines_before_and_after() -> None:
    text, start, end = _draft("    y = x\n    z = y\n    return z")
    s = shadow("/p/m.py", "python", BEFORE, start, end, text)
    assert s.after == BEFORE[:start] + text + BEFORE[end:]
    assert (s.first_line, s.old_last, s.new_last) == (4, 4, 6)


def test_an_old_error_below_the_region_matches_on_its_line_moved_by_the_delta() -> None:
    s = shadow("/p/m.py", "python", BEFORE, *_draft_args("    y = x\n    return y"))
    old = [Finding("F821", "Undefined name `missing`", 7), Finding("F401", "`os` unused", 0)]
    new = [Finding("F401", "`os` unused", 0), Finding("F821", "Undefined name `missing`", 8)]
    assert introduced(s, old, new) == []


def test_the_same_error_on_another_line_outside_the_region_is_new() -> None:
    s = shadow("/p/m.py", "python", BEFORE, *_draft_args("    return x"))
    old = [Finding("F821", "Undefined name `missing`", 7)]
    moved = Finding("F821", "Undefined name `missing`", 1)
    assert introduced(s, old, [moved]) == [moved]


def test_an_error_inside_the_region_matches_anywhere_inside_it() -> None:
    s = shadow("/p/m.py", "python", BEFORE, *_draft_args("    a = 1\n    return q"))
    old = [Finding("F821", "Undefined name `q`", 4)]
    assert introduced(s, old, [Finding("F821", "Undefined name `q`", 5)]) == []


def test_errors_are_counted_a_second_identical_error_is_new() -> None:
    s = shadow("/p/m.py", "python", BEFORE, *_draft_args("    return q + q"))
    old = [Finding("F821", "Undefined name `q`", 4)]
    twice = [Finding("F821", "Undefined name `q`", 4)] * 2
    assert introduced(s, old, twice) == [twice[1]]


def test_a_different_message_with_the_same_code_is_new() -> None:
    s = shadow("/p/m.py", "python", BEFORE, *_draft_args("    return q"))
    new = Finding("F821", "Undefined name `r`", 4)
    assert introduced(s, [Finding("F821", "Undefined name `q`", 4)], [new]) == [new]


@given(
    st.lists(st.tuples(st.sampled_from(["E1", "F2"]), st.integers(0, 12)), max_size=8),
    st.integers(0, 3),
)
def test_the_text_before_compared_with_itself_introduces_nothing(
    errors: list[tuple[str, int]], extra: int
) -> None:
    # The draft adds ``extra`` lines to the region and every error keeps its place in the text.
    lines = "".join(f"line{i}\n" for i in range(13))
    start = lines.index("line4")
    end = start + len("line4")
    draft = "line4" + "\nnew" * extra
    s = shadow("/p/m.py", "python", lines, start, end, draft)
    before = [Finding(code, "m", line) for code, line in errors]
    moved = [Finding(f.code, f.message, f.line + extra if f.line > 4 else f.line) for f in before]
    assert introduced(s, before, moved) == []


def _draft_args(text: str) -> tuple[int, int, str]:
    draft, start, end = _draft(text)
    return start, end, draft


def test_ruffs_json_is_read_with_zero_based_lines_and_syntax_errors_without_a_code() -> None:
    out = json.dumps(
        [
            {"code": "F841", "message": "unused `x`", "location": {"row": 3, "column": 5}},
            {"code": None, "message": "Expected an expression", "location": {"row": 1}},
        ]
    )
    assert parse_ruff(out) == [
        Finding("F841", "unused `x`", 2),
        Finding("invalid-syntax", "Expected an expression", 0),
    ]


def test_mypys_errors_of_the_file_are_read_and_notes_and_other_files_left_out() -> None:
    out = (
        "pkg/m.py:4: error: Incompatible return value type  [return-value]\n"
        "pkg/m.py:4: note: See https://...\n"
        "pkg/other.py:1: error: Name 'y' is not defined  [name-defined]\n"
        "pkg/m.py:9:3: error: Bad thing\n"
    )
    assert parse_mypy(out, "/home/u/proj/pkg/m.py") == [
        Finding("return-value", "Incompatible return value type", 3),
        Finding("error", "Bad thing", 8),
    ]


def test_a_verdict_names_the_first_new_error_or_why_the_checker_did_not_run() -> None:
    s = shadow("/p/m.py", "python", BEFORE, *_draft_args("    return q"))
    run = CheckerRun("ruff", [], [Finding("F821", "Undefined name `q`", 4)], ms=12.34)
    assert verdict(s, run) == {
        "name": "ruff",
        "ms": 12.3,
        "ok": False,
        "details": "line 5: F821 Undefined name `q`",
        "findings": ["line 5: F821 Undefined name `q`"],
    }
    broken = CheckerRun("ruff", [Finding("invalid-syntax", "Expected", 4)], run.after)
    assert verdict(s, broken)["ok"] is None
    skipped = verdict(s, CheckerRun("mypy", skipped="mypy not found"))
    assert skipped["ok"] is None and skipped["details"] == "not run: mypy not found"


def _exe(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_tool_inside_the_workspace_is_found_only_when_trusted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    inside = _exe(root / ".venv" / "bin", "ruff")
    outside = _exe(tmp_path / "usr" / "bin", "ruff")
    path = os.pathsep.join([str(inside.parent), ".", str(outside.parent)])
    assert find("ruff", str(root), trusted=False, path=path) == str(outside)
    assert find("ruff", str(root), trusted=True, path=path) == str(inside)
    assert find("ruff", str(root), trusted=False, path=str(inside.parent)) is None


def test_only_the_listed_checkers_run_and_every_one_by_default() -> None:
    assert wanted("python", ("ruff", "mypy"), None) == ["ruff", "mypy"]
    assert wanted("python", ("ruff", "mypy"), ("mypy",)) == ["mypy"]
    assert wanted("python", ("ruff", "mypy"), ()) == []


def test_trusting_workspace_tools_is_not_taken_from_workspace_configuration() -> None:
    layers: list[tuple[Layer, object]] = [
        ("client", {"verify": {"trustWorkspaceTools": True, "checkers": ["ruff"], "timeoutMs": 5}})
    ]
    resolved = resolve(layers)
    verify = resolved.settings.verify
    assert verify.trust_workspace_tools is False and verify.checkers is None
    assert verify.timeout_ms == 5
    assert any("verify.trustWorkspaceTools" in w for w in resolved.warnings)
    trusted = resolve([("init", {"verify": {"trustWorkspaceTools": True}})])
    assert trusted.settings.verify.trust_workspace_tools is True


def test_go_vets_findings_and_type_errors_of_the_file_are_read() -> None:
    out = (
        "# example.com/m\n"
        "./main.go:6:2: fmt.Printf format %d has arg x of wrong type string\n"
        "vet: ./main.go:8:2: undefined: thing\n"
        "./other.go:1:1: elsewhere\n"
    )
    assert parse_vet(out, "/src/m/main.go") == [
        Finding("vet", "fmt.Printf format %d has arg x of wrong type string", 5),
        Finding("vet", "undefined: thing", 7),
    ]


def test_a_mirror_links_everything_but_the_edited_file_and_its_folders(tmp_path: Path) -> None:
    module = tmp_path / "mod"
    (module / "pkg" / "sub").mkdir(parents=True)
    (module / "go.mod").write_text("module m\n")
    (module / "pkg" / "a.go").write_text("package pkg // a\n")
    (module / "pkg" / "b.go").write_text("package pkg // b\n")
    (module / "pkg" / "sub" / "c.go").write_text("package sub\n")
    into = tmp_path / "mirror"
    into.mkdir()
    package = mirror(str(module), str(module / "pkg" / "a.go"), "package pkg // new\n", str(into))
    assert package == str(into / "pkg")
    assert (into / "pkg" / "a.go").read_text() == "package pkg // new\n"
    assert not (into / "pkg" / "a.go").is_symlink() and not (into / "pkg").is_symlink()
    assert (into / "pkg" / "b.go").is_symlink() and (into / "go.mod").is_symlink()
    assert (into / "pkg" / "sub").is_symlink()
    assert (module / "pkg" / "a.go").read_text() == "package pkg // a\n"
