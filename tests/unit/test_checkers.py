"""The project's checkers as a draft's check, the pure part: their output read, only the errors
the draft introduced kept (matched by code and message, lines mapped through the edit), each
verdict as ``verification.checks`` records it; which program may run (invariant 7)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.engines.checkers import (
    CheckerRun,
    Finding,
    introduced,
    parse_mypy,
    parse_pyright,
    parse_ruff,
    parse_tsc,
    parse_vet,
    shadow,
    verdict,
)
from fastedit_lsp.project.checkers import checker_env, find, mirror, run_checkers, wanted
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


def test_pyrights_errors_of_the_file_are_read_by_their_first_line_and_warnings_left_out() -> None:
    def item(file: str, severity: str, line: int, rule: str | None = None) -> dict[str, object]:
        found: dict[str, object] = {
            "file": file,
            "severity": severity,
            "message": 'Type "int" is not assignable to declared type "str"\n\u00a0\u00a0more',
            "range": {"start": {"line": line, "character": 4}, "end": {"line": line}},
        }
        return {**found, "rule": rule} if rule else found

    out = json.dumps(
        {
            "generalDiagnostics": [
                item("/tmp/m/app.py", "error", 4, "reportAssignmentType"),
                item("/tmp/m/app.py", "warning", 5, "reportUnusedExpression"),
                item("/tmp/m/other.py", "error", 1, "reportAssignmentType"),
                item("/tmp/m/app.py", "error", 7),
            ]
        }
    )
    message = 'Type "int" is not assignable to declared type "str"'
    assert parse_pyright(out, "/tmp/m/app.py") == [
        Finding("reportAssignmentType", message, 4),
        Finding("error", message, 7),
    ]


def test_tscs_errors_of_the_file_are_read_and_listed_files_and_continuations_left_out() -> None:
    out = (
        "/usr/lib/node_modules/typescript/lib/lib.es5.d.ts\n"
        "/tmp/m/src/main.ts\n"
        "src/main.ts(4,9): error TS2322: Type 'number' is not assignable to type 'string'.\n"
        "src/main.ts(7,1): error TS2345: Argument of type 'x' is not assignable.\n"
        "  Type 'x' is not assignable to type 'y'.\n"
        "src/util.ts(1,1): error TS2307: Cannot find module 'z'.\n"
        "../src/main.ts(2,1): error TS1005: ';' expected.\n"
    )
    assert parse_tsc(out, "src/main.ts") == [
        Finding("TS2322", "Type 'number' is not assignable to type 'string'.", 3),
        Finding("TS2345", "Argument of type 'x' is not assignable.", 6),
    ]


def test_an_untrusted_checker_runs_without_the_workspaces_path_entries(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    inside = root / ".venv" / "bin"
    inside.mkdir(parents=True)
    outside = tmp_path / "bin"
    path = os.pathsep.join([str(inside), "relative/bin", str(outside), ""])
    env = {"PATH": path, "OPENAI_API_KEY": "k"}
    assert checker_env(str(root), trusted=False, environ=env)["PATH"] == str(outside)
    assert checker_env(str(root), trusted=True, environ=env)["PATH"] == path
    assert "OPENAI_API_KEY" not in checker_env(str(root), trusted=True, environ=env)


def _fake_tsc(folder: Path, marker: Path, says: str = "") -> None:
    """A ``tsc`` that notes it ran and says ``says`` (by default lists no file, as if the file
    were not in the program)."""
    folder.mkdir(parents=True)
    tsc = folder / "tsc"
    tsc.write_text(
        f"#!{sys.executable}\nopen({str(marker)!r}, 'a').write('ran\\n')\nprint({says!r})\n"
    )
    tsc.chmod(tsc.stat().st_mode | stat.S_IXUSR)


def _run_tsc(path: Path, root: Path) -> dict[str, object]:
    before = "const a = 1;\n"
    draft = shadow(str(path), "typescript", before, 0, 0, "const b = 2;\n")
    runs = run_checkers(draft, str(root), ["tsc"], trust_workspace=False, listed=None)
    (run,) = asyncio.run(runs)
    return verdict(draft, run)


def test_tsc_without_a_tsconfig_above_the_file_is_not_run_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    _fake_tsc(tmp_path / "bin", marker)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    (tmp_path / "ws").mkdir()
    said = _run_tsc(tmp_path / "ws" / "a.ts", tmp_path / "ws")
    assert said["ok"] is None
    assert said["details"] == (
        "not run: no tsconfig.json above the file (tsc resolves the project from it)"
    )
    assert not marker.exists()


def test_tsc_is_not_run_on_a_file_outside_its_projects_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    _fake_tsc(tmp_path / "bin", marker)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    root = tmp_path / "ws"
    (root / "scripts").mkdir(parents=True)
    (root / "tsconfig.json").write_text('{"include": ["src"]}')
    said = _run_tsc(root / "scripts" / "a.ts", root)
    assert said["ok"] is None
    assert said["details"] == (
        "not run: the file is not in its tsconfig.json's program (include, files, references)"
    )
    # The text before and after, each in a mirror; then --showConfig for its references.
    assert marker.read_text() == "ran\nran\nran\n"
    assert sorted(os.listdir(root)) == ["scripts", "tsconfig.json"]


def test_tsc_whose_project_does_not_load_is_not_run_rather_than_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An error of no file (or of tsconfig.json): tsc then checks no file's types at all.
    says = "error TS2688: Cannot find type definition file for 'node'."
    _fake_tsc(tmp_path / "bin", tmp_path / "ran", says)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "tsconfig.json").write_text('{"include": ["src"]}')
    said = _run_tsc(root / "src" / "a.ts", root)
    assert said["ok"] is None
    assert said["details"] == f"not run: tsc failed: the project does not load: {says}"


def test_a_mirror_of_a_relative_folder_links_to_absolute_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "tsconfig.json").write_text("{}")
    into = tmp_path / "mirror"
    into.mkdir()
    monkeypatch.chdir(tmp_path)
    mirror("proj", "proj/src/a.ts", "const a = 1;\n", str(into))
    assert (into / "tsconfig.json").read_text() == "{}"
    assert (into / "src" / "a.ts").read_text() == "const a = 1;\n"


def test_pyright_on_a_file_whose_folder_is_not_on_disk_is_not_run_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pyright = bin_dir / "pyright"
    marker = tmp_path / "ran"
    pyright.write_text(f"#!{sys.executable}\nopen({str(marker)!r}, 'w').close()\n")
    pyright.chmod(pyright.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))
    path = tmp_path / "ws" / "gone" / "m.py"
    draft = shadow(str(path), "python", "x = 1\n", 0, 0, "y = 2\n")
    root = str(tmp_path / "ws")
    runs = run_checkers(draft, root, ["pyright"], trust_workspace=False, listed=None)
    (run,) = asyncio.run(runs)
    assert verdict(draft, run)["details"] == (
        "not run: the file's folder is not on disk (pyright resolves the project from it)"
    )
    assert not marker.exists()


def test_a_drafts_checkers_share_one_environment_and_skipped_ones_build_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The environment (a copy of the server's, PATH filtered) was built once per checker named,
    # those that do not run too: three copies per Python draft's check.
    from fastedit_lsp.project import checkers

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, says in (("ruff", "[]"), ("pyright", '{"generalDiagnostics": []}')):
        program = bin_dir / name
        program.write_text(f"#!{sys.executable}\nprint({says!r})\n")
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))
    built: list[bool] = []

    def counted(root: str | None, *, trusted: bool) -> dict[str, str]:
        built.append(trusted)
        return checker_env(root, trusted=trusted)

    monkeypatch.setattr(checkers, "checker_env", counted)
    (tmp_path / "ws").mkdir()
    path = tmp_path / "ws" / "m.py"
    path.write_text("x = 1\n")
    draft = shadow(str(path), "python", "x = 1\n", 0, 0, "y = 2\n")
    names = ["ruff", "pyright", "mypy"]  # mypy is not on PATH: skipped
    runs = asyncio.run(
        run_checkers(draft, str(tmp_path / "ws"), names, trust_workspace=False, listed=None)
    )
    assert [run.name for run in runs] == names
    assert runs[2].skipped is not None
    assert built == [False]
