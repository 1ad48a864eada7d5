"""The project's own checkers (ruff, mypy, pyright, go vet, tsc) through the real server, on a
workspace on disk: an error the draft introduced flags it and the file's old errors do not; a
checker inside the workspace (or the interpreter pyright starts) runs only when the user allows
it (never from workspace/configuration); with no checker found the built-in checks alone, said
in the record; a checker slower than ``verify.timeoutMs`` is recorded as timed out and its late
new error flags the region without escalating."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import HANG_GUARD, Editor

from .conftest import MakeEditor

TEXT = "import os\n\n\ndef total(rows):\n    @\n    return missing_before\n"
#: Two lines where one was (the old F821 below moves a line down); ``unused``: ruff's F841.
BAD = "count = len(rows)\n    unused = count * 2"
GOOD = "count = len(rows)\n    print(count)"


def _workspace(tmp_path: Path) -> tuple[Path, str, str]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    path = root / "demo.py"
    text = TEXT.replace("@", "", 1)
    path.write_text(text)
    uri = from_fs_path(str(path))
    assert uri is not None
    return root, uri, text


def _tool(folder: Path, name: str, body: str) -> Path:
    """An executable Python script ``folder/name``."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!{sys.executable}\n{body}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


async def _start(make_editor: MakeEditor, root: Path, options: dict[str, Any], **kw: Any) -> Editor:
    """A server in ``root`` whose checkers are the server's own choice (every one found on PATH
    outside the workspace, unless ``options`` name some): the harness's default is none."""
    return await make_editor(
        init_options={"mode": "fast", **options},
        root_uri=from_fs_path(str(root)),
        checkers=None,
        **kw,
    )


async def _complete(editor: Editor, uri: str, text: str) -> dict[str, Any]:
    cursor = TEXT.index("@")
    editor.open(uri, text, language_id="python")
    return await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, cursor)}
    )


def _checks(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in record["verification"]["checks"]}


def _flags(editor: Editor, uri: str) -> list[types.Diagnostic]:
    return [d for d in editor.client.diagnostics.get(uri, []) if d.source == "fastedit"]


async def test_a_ruff_error_the_draft_introduced_flags_it_and_the_old_errors_do_not(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    root, uri, text = _workspace(tmp_path)
    editor = await _start(make_editor, root, {"verify": {"timeoutMs": 60000}})
    stub.script(Answer(text=BAD), Answer(text=BAD))
    record = await _complete(editor, uri, text)
    assert record["state"] == "done", record
    ruff = _checks(record)["ruff"]
    # F401 (`os`) and F821 (`missing_before`, a line lower now) were there before the draft.
    assert ruff["ok"] is False and ruff["findings"] == [
        "line 6: F841 Local variable `unused` is assigned to but never used"
    ]
    assert record["verification"]["details"].startswith("ruff check: line 6: F841")
    assert ruff["ms"] > 0
    second = stub.requests[1].body["messages"][-1]["content"]
    assert "ruff" in second and "F841" in second and "does not parse" not in second
    (flag,) = _flags(editor, uri)
    assert "F841" in flag.message
    # The user's file on disk was never touched.
    assert (root / "demo.py").read_text() == text


async def test_a_draft_that_keeps_the_old_ruff_errors_passes(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    root, uri, text = _workspace(tmp_path)
    editor = await _start(make_editor, root, {"verify": {"timeoutMs": 60000}})
    stub.script(Answer(text=GOOD))
    record = await _complete(editor, uri, text)
    ruff = _checks(record)["ruff"]
    assert ruff["ok"] is True and ruff["details"] == "no new errors (2 before the edit)"
    assert record["verification"]["ok"] is True
    assert _flags(editor, uri) == []


async def test_a_checker_inside_the_workspace_runs_only_when_the_user_allows_it(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    root, uri, text = _workspace(tmp_path)
    marker = tmp_path / "workspace-ruff-ran"
    bin_dir = root / ".venv" / "bin"
    _tool(bin_dir, "ruff", f"open({str(marker)!r}, 'w').close()\nprint('[]')\n")
    # An activated virtual environment: the workspace's ruff is first on PATH.
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    options = {"verify": {"timeoutMs": 60000}}
    # From workspace/configuration (a repository's settings) trust is not taken.
    editor = await _start(
        make_editor,
        root,
        options,
        env={"PATH": path},
        configuration={"verify": {"trustWorkspaceTools": True, "checkers": ["ruff"]}},
    )
    stub.script(Answer(text=GOOD))
    record = await _complete(editor, uri, text)
    assert not marker.exists()
    ruff = _checks(record)["ruff"]
    assert ruff["ok"] is True, ruff  # the ruff outside the workspace ran
    # Allowed by the user (initializationOptions): the workspace's own ruff runs.
    trusting = await _start(
        make_editor,
        root,
        {"verify": {"timeoutMs": 60000, "trustWorkspaceTools": True}},
        env={"PATH": path},
    )
    stub.script(Answer(text=GOOD))
    await _complete(trusting, uri, text)
    assert marker.exists()


async def test_with_no_checker_found_the_built_in_checks_alone_are_said_in_the_record(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    root, uri, text = _workspace(tmp_path)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    editor = await _start(make_editor, root, {}, env={"PATH": str(empty)})
    stub.script(Answer(text=GOOD))
    record = await _complete(editor, uri, text)
    checks = _checks(record)
    assert checks["parse"]["ok"] is True and checks["names"]["ok"] is True
    assert checks["ruff"]["ok"] is None
    assert checks["ruff"]["details"] == "not run: ruff not found on PATH outside the workspace"
    assert checks["mypy"]["ok"] is None and checks["mypy"]["details"].startswith("not run:")
    assert checks["pyright"] == {
        "name": "pyright",
        "ok": None,
        "details": "not run: pyright not found on PATH outside the workspace",
        "ms": checks["pyright"]["ms"],
    }
    assert record["verification"]["ok"] is True


async def test_a_checker_past_the_budget_is_recorded_timed_out_and_its_late_error_flags_only(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    root, uri, text = _workspace(tmp_path)
    release = tmp_path / "release"
    finding = {
        "code": "F841",
        "message": "Local variable `unused` is assigned to but never used",
        "location": {"row": 6, "column": 5},
    }
    slow = _tool(
        tmp_path / "slow-bin",
        "ruff",
        "import json, os, sys, time\n"
        "text = sys.stdin.read()\n"
        f"while not os.path.exists({str(release)!r}):\n    time.sleep(0.02)\n"
        f"print(json.dumps([{finding!r}] if 'unused' in text else []))\n",
    )
    editor = await _start(
        make_editor,
        root,
        {"mode": "auto", "verify": {"timeoutMs": 100, "checkers": ["ruff"]}},
        env={"PATH": str(slow.parent)},
    )
    stub.script(Answer(text=BAD), Answer(text=GOOD), Answer(text=GOOD))
    record = await _complete(editor, uri, text)
    # The job ended while the checker ran: no escalation, one model request.
    assert record["state"] == "done" and record["escalated"] is False, record
    assert len(stub.requests) == 1
    ruff = _checks(record)["ruff"]
    assert ruff == {"name": "ruff", "ok": None, "details": "timed out", "ms": None}
    assert _flags(editor, uri) == []
    release.touch()
    # The late result: the new error flags the region.
    async with asyncio.timeout(HANG_GUARD):
        while not _flags(editor, uri):
            await editor.next_event()
    (flag,) = _flags(editor, uri)
    assert "F841" in flag.message
    assert len(stub.requests) == 1


MYPY_TEXT = "def total(rows: list[int]) -> int:\n    @\n    return 0\n\n\nwrong: int = 'text'\n"
#: mypy's [assignment] in the region; the old one (``wrong``) moves a line down.
MYPY_BAD = "count: str = len(rows)\n    print(count)"
PLUGIN = "open({marker!r}, 'w').close()\n\ndef plugin(version):\n    raise SystemExit(1)\n"


async def test_mypy_flags_a_new_type_error_ignores_the_old_and_never_loads_the_projects_plugin(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    root = tmp_path / "typed"
    root.mkdir()
    marker = tmp_path / "plugin-loaded"
    (root / "evil_plugin.py").write_text(PLUGIN.format(marker=str(marker)))
    (root / "pyproject.toml").write_text(
        '[tool.mypy]\nplugins = ["evil_plugin.py"]\npython_executable = "/bin/false"\n'
    )
    path = root / "typed.py"
    text = MYPY_TEXT.replace("@", "", 1)
    path.write_text(text)
    uri = from_fs_path(str(path))
    assert uri is not None
    editor = await _start(make_editor, root, {"verify": {"timeoutMs": 60000, "checkers": ["mypy"]}})
    stub.script(Answer(text=MYPY_BAD), Answer(text=MYPY_BAD))
    editor.open(uri, text, language_id="python")
    cursor = MYPY_TEXT.index("@")
    record = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, cursor)}
    )
    mypy = _checks(record)["mypy"]
    assert mypy["ok"] is False, mypy
    assert mypy["findings"] == [
        'line 2: assignment Incompatible types in assignment (expression has type "int", '
        'variable has type "str")'
    ]
    assert "ruff" not in _checks(record)
    assert not marker.exists()
    assert path.read_text() == text


GO_TEXT = (
    'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/gomod/util"\n)\n\n'
    'func main() {\n\t@\n\tfmt.Printf("%d\\n", "old", util.Two())\n}\n'
)
GO_BAD = 'name := "x"\n\tfmt.Printf("%s\\n", len(name))'


async def test_go_vet_flags_a_new_finding_on_a_mirror_of_the_module_and_ignores_the_old(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    # CI installs golang-go (.ci/run); the go command found on PATH outside the workspace runs.
    root = tmp_path / "gomod"
    (root / "util").mkdir(parents=True)
    (root / "go.mod").write_text("module example.com/gomod\n\ngo 1.19\n")
    (root / "util" / "util.go").write_text("package util\n\nfunc Two() int { return 2 }\n")
    path = root / "main.go"
    text = GO_TEXT.replace("@", "", 1)
    path.write_text(text)
    uri = from_fs_path(str(path))
    assert uri is not None
    editor = await _start(make_editor, root, {"verify": {"timeoutMs": 60000}})
    stub.script(Answer(text=GO_BAD), Answer(text=GO_BAD))
    editor.open(uri, text, language_id="go")
    cursor = GO_TEXT.index("@")
    record = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, cursor)}
    )
    vet = _checks(record)["go vet"]
    assert vet["ok"] is False, vet
    # The old finding (line 12 now) is ignored; the package resolves its module's import.
    new = "line 11: vet fmt.Printf format %s has arg len(name) of wrong type int"
    assert vet["findings"] == [new]
    assert path.read_text() == text
    assert sorted(os.listdir(root)) == ["go.mod", "main.go", "util"]


async def test_a_ruff_error_in_time_escalates_in_auto_mode(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    root, uri, text = _workspace(tmp_path)
    editor = await _start(
        make_editor, root, {"mode": "auto", "verify": {"timeoutMs": 60000, "checkers": ["ruff"]}}
    )
    stub.script(Answer(text=BAD), Answer(text=BAD), Answer(text=GOOD))
    record = await _complete(editor, uri, text)
    assert record["escalated"] is True, record
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
        ("standard", True),
    ]
    assert _checks(record)["ruff"]["ok"] is True
    assert editor.text(uri) == text[: TEXT.index("@")] + GOOD + text[TEXT.index("@") :]
    assert _flags(editor, uri) == []


#: Where .ci/run installs pyright and TypeScript from npm (``npm install --prefix``).
NPM_CHECKERS = Path.home() / ".cache" / "fastedit" / "checkers" / "node_modules" / ".bin"


def _npm_checker(name: str) -> Path:
    """The folder holding the npm checker ``name`` (.ci/run's prefix, else ``PATH``); skipped
    when it is not installed, failed when CI=true (CI must run these tests)."""
    if (NPM_CHECKERS / name).is_file():
        return NPM_CHECKERS
    found = shutil.which(name)
    if found:
        return Path(found).parent
    reason = (
        f"{name} is not installed: .ci/run installs it with npm into {NPM_CHECKERS.parent.parent}"
    )
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"{reason} (CI=true: the checker tests must run, not skip)", pytrace=False)
    pytest.skip(reason)


def _tools(folder: Path, **programs: str | None) -> Path:
    """A folder outside the workspace with links to ``programs`` (the interpreter, node)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in programs.items():
        assert target, name
        (folder / name).symlink_to(target)
    return folder


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


PYRIGHT_TEXT = (
    "from pkg.util import two\n\n\ndef total(rows: list[int]) -> int:\n    @\n    return 0\n"
    "\n\nold: str = two()\n"
)
#: pyright's reportAssignmentType in the region; the old one (``old``, the same message) moves a
#: line down; it is found only because pkg.util resolves in the mirror.
PYRIGHT_BAD = "count: str = len(rows)\n    print(count)"
PYRIGHT_NEW = 'line 5: reportAssignmentType Type "int" is not assignable to declared type "str"'


async def test_pyright_flags_a_new_error_ignores_the_old_and_never_starts_the_workspaces_python(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    npm = _npm_checker("pyright")
    root = tmp_path / "pyproj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("def two() -> int:\n    return 2\n")
    path = root / "app.py"
    text = PYRIGHT_TEXT.replace("@", "", 1)
    path.write_text(text)
    uri = from_fs_path(str(path))
    assert uri is not None
    # An activated virtual environment whose python3 is the repository's code.
    marker = tmp_path / "workspace-python-ran"
    venv = root / ".venv" / "bin"
    venv.mkdir(parents=True)
    for name in ("python3", "python"):
        fake = venv / name
        fake.write_text(f'#!/bin/sh\n: > {marker}\nexec {sys.executable} "$@"\n')
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    tools = _tools(tmp_path / "tools", python3=sys.executable, node=shutil.which("node"))
    path_env = os.pathsep.join([str(venv), str(tools), str(npm)])
    before = _files(root)
    cursor = PYRIGHT_TEXT.index("@")

    async def complete(options: dict[str, Any]) -> dict[str, Any]:
        editor = await _start(make_editor, root, options, env={"PATH": path_env})
        stub.script(Answer(text=PYRIGHT_BAD), Answer(text=PYRIGHT_BAD))
        editor.open(uri, text, language_id="python")
        return await editor.run(
            "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, cursor)}
        )

    record = await complete({"verify": {"timeoutMs": 60000}})
    pyright = _checks(record)["pyright"]
    assert pyright["ok"] is False, pyright
    assert pyright["findings"] == [PYRIGHT_NEW]
    # ruff and mypy are not on this PATH: said, not run.
    assert _checks(record)["ruff"]["ok"] is None
    assert not marker.exists()  # pyright was given the interpreter outside the workspace
    assert _files(root) == before
    # Allowed by the user: pyright may start the python3 it finds first (the workspace's).
    trusting = await complete({"verify": {"timeoutMs": 60000, "trustWorkspaceTools": True}})
    assert _checks(trusting)["pyright"]["findings"] == [PYRIGHT_NEW]
    assert marker.exists()


TS_TEXT = (
    'import { two } from "dep";\n\nexport function total(rows: number[]): number {\n  @\n'
    "  return 0;\n}\n\nexport const old: string = two();\n"
)
#: tsc's TS2322 in the region; the old one (``old``, the same message) moves a line down; found
#: only because ``dep`` resolves from the project's node_modules.
TS_BAD = "const count: string = rows.length;\n  console.log(count);"
TS_NEW = "line 4: TS2322 Type 'number' is not assignable to type 'string'."
TSCONFIG = (
    '{"compilerOptions": {"strict": true, "target": "es2020", "module": "esnext",'
    ' "moduleResolution": "bundler", "incremental": true, "composite": true, "outDir": "dist"},'
    ' "include": ["src"]}\n'
)


async def test_tsc_flags_a_new_error_in_an_overlay_of_the_project_and_runs_no_workspace_tsc(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    npm = _npm_checker("tsc")
    root = tmp_path / "tsproj"
    dep = root / "node_modules" / "dep"
    dep.mkdir(parents=True)
    (dep / "package.json").write_text('{"name": "dep", "version": "1.0.0", "types": "index.d.ts"}')
    (dep / "index.d.ts").write_text("export declare function two(): number;\n")
    (root / "tsconfig.json").write_text(TSCONFIG)
    (root / "src").mkdir()
    (root / "src" / "util.ts").write_text(
        'import { old } from "./main";\nexport const size: number = old.length;\n'
    )
    path = root / "src" / "main.ts"
    text = TS_TEXT.replace("@", "", 1)
    path.write_text(text)
    uri = from_fs_path(str(path))
    assert uri is not None
    # The project's own tsc (node_modules/.bin), first on PATH: the repository's code.
    marker = tmp_path / "workspace-tsc-ran"
    _tool(root / "node_modules" / ".bin", "tsc", f"open({str(marker)!r}, 'w').close()\n")
    tools = _tools(tmp_path / "tools", node=shutil.which("node"))
    path_env = os.pathsep.join([str(root / "node_modules" / ".bin"), str(tools), str(npm)])
    before = _files(root)
    cursor = TS_TEXT.index("@")

    async def complete(options: dict[str, Any]) -> dict[str, Any]:
        editor = await _start(make_editor, root, options, env={"PATH": path_env})
        stub.script(Answer(text=TS_BAD), Answer(text=TS_BAD))
        editor.open(uri, text, language_id="typescript")
        return await editor.run(
            "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, cursor)}
        )

    record = await complete({"verify": {"timeoutMs": 60000}})
    tsc = _checks(record)["tsc"]
    assert tsc["ok"] is False, tsc
    assert tsc["findings"] == [TS_NEW]
    assert record["verification"]["details"] == f"tsc check: {TS_NEW}"
    assert not marker.exists()
    # Nothing written into the project (incremental/composite: no .tsbuildinfo in dist/).
    assert _files(root) == before
    # Named in verify.checkers by the user: the workspace's tsc runs.
    await complete({"verify": {"timeoutMs": 60000, "checkers": ["tsc"]}})
    assert marker.exists()


async def test_tsc_checks_a_file_of_a_project_its_solution_tsconfig_references(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    # Vite's layout: tsconfig.json lists no file and references tsconfig.app.json (src/).
    npm = _npm_checker("tsc")
    root = tmp_path / "vite"
    (root / "src").mkdir(parents=True)
    (root / "tsconfig.json").write_text(
        '{\n  // the solution\n  "files": [],\n  "references": [{"path": "./tsconfig.node.json"},'
        ' {"path": "./tsconfig.app.json"},],\n}\n'
    )
    options = '"strict": true, "module": "esnext", "moduleResolution": "bundler"'
    (root / "tsconfig.app.json").write_text(
        f'{{"compilerOptions": {{{options}}}, "include": ["src"]}}\n'
    )
    (root / "tsconfig.node.json").write_text(
        f'{{"compilerOptions": {{{options}}}, "include": ["vite.config.ts"]}}\n'
    )
    text = "export function total(rows: number[]): number {\n  @\n  return 0;\n}\n"
    path = root / "src" / "main.ts"
    path.write_text(text.replace("@", "", 1))
    uri = from_fs_path(str(path))
    assert uri is not None
    tools = _tools(tmp_path / "tools", node=shutil.which("node"))
    editor = await _start(
        make_editor,
        root,
        {"verify": {"timeoutMs": 60000}},
        env={"PATH": os.pathsep.join([str(tools), str(npm)])},
    )
    stub.script(Answer(text=TS_BAD), Answer(text=TS_BAD))
    editor.open(uri, text.replace("@", "", 1), language_id="typescript")
    record = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, text.index("@"))}
    )
    tsc = _checks(record)["tsc"]
    assert tsc["ok"] is False and tsc["findings"] == [
        "line 2: TS2322 Type 'number' is not assignable to type 'string'."
    ], tsc
