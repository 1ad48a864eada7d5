"""The offline engine through the real server: no key, no network, all but editSelection."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.uris import from_fs_path

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support import shared_server
from tests.support.harness import Editor, hermetic_env
from tests.support.shared_server import MakeEditor

# One offline server for the module's tests that need no settings of their own (``offline``),
# settled between tests (tests/support/shared_server.py); the tests that set the mode or give
# settings at initialize get a fresh server from ``make_editor`` (``editor`` is one).
pytestmark = pytest.mark.asyncio(loop_scope="module")
module_stub, module_offline_editor = shared_server.module_stub, shared_server.module_offline_editor
stub, make_editor = shared_server.stub, shared_server.make_editor
offline = shared_server.offline_editor


@pytest_asyncio.fixture(loop_scope="module")
async def editor(make_editor: MakeEditor) -> Editor:
    """A fresh server pointed at the stub (these tests set the mode)."""
    return await make_editor()


def _uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


async def pytest_passes(test_file: Path, written: str, root: Path) -> str:
    """Write ``written`` to ``test_file`` and run pytest on it from ``root``, the project the
    tested module is in: every test passes (pytest exits 0, at least one passed); its output."""
    await asyncio.to_thread(test_file.write_text, written)
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=root,
        env=hermetic_env(PYTHONPATH=str(root)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output = (await asyncio.wait_for(proc.communicate(), 120))[0].decode()
    assert proc.returncode == 0 and " passed" in output, output
    return output


async def _tests_job(editor: Editor, module: Path, source: str, line: int) -> dict[str, Any]:
    """``fastedit.generateTests`` at ``line`` of ``source``, written to ``module`` and opened:
    the job's record."""
    await asyncio.to_thread(module.write_text, source)
    editor.open(_uri(module), source)
    return await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": line, "character": 0}}
    )


REGEX_DOC = """import os

# regex: ISO date
#   match: 2024-01-31
#   match: 1999-12-01
#   reject: 2024-1-31
#   reject: 24-01-31

print(os.sep)
"""


async def test_regex_from_comment_examples_lands_below_the_block_and_is_verified(
    offline: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "dates.py")
    offline.open(uri, REGEX_DOC)
    line = REGEX_DOC.splitlines().index("# regex: ISO date")
    here = {"line": line, "character": 0}
    record = await offline.run(
        "fastedit.generateRegex", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    assert record["route"] == "local" and record["model"] == "offline"
    assert record["verification"]["ok"] is True
    assert "2/2" in record["verification"]["details"]
    text = offline.text(uri)
    assignment = re.search(r'^ISO_DATE = re\.compile\(r"(.+)"\)$', text, re.M)
    assert assignment is not None, text
    pattern = re.compile(assignment.group(1))
    assert pattern.fullmatch("2031-07-15") and not pattern.fullmatch("2024-1-31")
    # The assignment sits right below the block; `import re` was added with the imports.
    lines = text.splitlines()
    assert lines[lines.index("#   reject: 24-01-31") + 1].startswith("ISO_DATE = ")
    assert lines[:2] == ["import os", "import re"]
    # Outside the region and the import line, nothing changed.
    assert (
        text.replace("import re\n", "", 1).replace(
            lines[lines.index("#   reject: 24-01-31") + 1] + "\n", ""
        )
        == REGEX_DOC
    )
    assert record["metrics"]["edits"] >= 2
    assert stub.requests == []
    # A rerun replaces the assignment it made.
    here = {"line": offline.text(uri).splitlines().index("# regex: ISO date"), "character": 0}
    record = await offline.run(
        "fastedit.generateRegex", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    assert offline.text(uri).count("ISO_DATE = re.compile(") == 1
    assert offline.text(uri).count("import re") == 1


async def test_regex_without_examples_is_refused_with_how_to_write_them(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "empty.py")
    offline.open(uri, "x = 1\n")
    here = {"line": 0, "character": 0}
    with pytest.raises(Exception) as caught:
        await offline.command(
            "fastedit.generateRegex", {"uri": uri, "range": {"start": here, "end": here}}
        )
    assert "match:" in str(caught.value)
    assert offline.text(uri) == "x = 1\n"


BROKEN = """def total(items):
    result = 0
    for item in items
        result += item
    return result


def other():
    return 1
"""


async def test_syntax_fix_repairs_only_the_error_region_and_the_file_parses(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "broken.py")
    offline.open(uri, BROKEN)
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}
    record = await offline.run("fastedit.fixSyntax", {"uri": uri, "range": everything})
    assert record["state"] == "done", record
    assert record["verification"]["ok"] is True
    fixed = offline.text(uri)
    assert fixed == BROKEN.replace("for item in items\n", "for item in items:\n")
    compile(fixed, "broken.py", "exec")
    # Revert restores the original in one edit.
    assert await offline.command("fastedit.revert", {"jobId": record["jobId"]}) == {
        "reverted": True
    }
    assert offline.text(uri) == BROKEN


async def test_syntax_fix_on_a_file_that_parses_is_no_suggestion(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "fine.py")
    offline.open(uri, "x = 1\n")
    here = {"line": 0, "character": 0}
    record = await offline.run(
        "fastedit.fixSyntax", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done" and record["metrics"]["edits"] == 0
    assert "the file parses" in record["reason"]
    assert offline.text(uri) == "x = 1\n"


GEOMETRY = '''"""Shapes."""


def clamp(value: int, low: int, high: int) -> int:
    """Clamp value into [low, high].

    >>> clamp(5, 0, 3)
    3
    >>> clamp(-1, 0, 3)
    0
    """
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(value, high))
'''


@pytest.mark.parametrize("opened", [True, False], ids=["test-module-open", "test-module-created"])
async def test_tests_are_written_beside_the_module_and_pass(
    make_editor: MakeEditor, tmp_path: Path, opened: bool
) -> None:
    editor = await make_editor(model=False)
    (tmp_path / "tests").mkdir()
    module = tmp_path / "geometry.py"
    module.write_text(GEOMETRY)
    test_file = tmp_path / "tests" / "test_geometry.py"
    if opened:
        test_file.write_text("import pytest\n")
        editor.open(_uri(test_file), "import pytest\n")
    editor.open(_uri(module), GEOMETRY)
    line = GEOMETRY.splitlines().index("def clamp(value: int, low: int, high: int) -> int:")
    record = await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": line, "character": 4}}
    )
    assert record["state"] == "done", record
    assert record["verification"]["ok"] is True
    assert record["uri"] == _uri(test_file)
    written = editor.text(_uri(test_file))
    assert written.startswith("import pytest\n") if opened else written
    # The docstring's examples became assertions.
    assert "clamp(5, 0, 3) == 3" in written and "clamp(-1, 0, 3) == 0" in written
    # The module itself is untouched, and the tests pass when run.
    assert editor.text(_uri(module)) == GEOMETRY
    await pytest_passes(test_file, written, tmp_path)


@pytest.mark.parametrize("existing", ["", "import pytest\n"], ids=["new-module", "existing"])
async def test_an_editor_that_cannot_open_the_test_module_gets_it_written_on_disk(
    make_editor: MakeEditor, tmp_path: Path, existing: str
) -> None:
    editor = await make_editor(model=False, opens_documents=False)
    module = tmp_path / "geometry.py"
    module.write_text(GEOMETRY)
    test_file = tmp_path / "test_geometry.py"
    if existing:
        test_file.write_text(existing)
    editor.open(_uri(module), GEOMETRY)
    line = GEOMETRY.splitlines().index("def clamp(value: int, low: int, high: int) -> int:")
    record = await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": line, "character": 4}}
    )
    assert record["state"] == "done", record
    assert record["verification"]["ok"] is True, record
    assert f"written to {test_file}" in record["reason"], record
    written = test_file.read_text()
    assert written.startswith(existing) and "clamp(5, 0, 3) == 3" in written
    assert editor.text(_uri(module)) == GEOMETRY


async def test_a_test_module_the_editor_cannot_open_is_not_left_empty_when_the_job_fails(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    # No offline engine in the failover chain: a model's tests cannot stream into a module the
    # editor does not show, so the job fails, and leaves nothing behind.
    editor = await make_editor(
        opens_documents=False, init_options={"fastedit": {"failover": ["fast", "standard"]}}
    )
    module = tmp_path / "geometry.py"
    module.write_text(GEOMETRY)
    editor.open(_uri(module), GEOMETRY)
    line = GEOMETRY.splitlines().index("def clamp(value: int, low: int, high: int) -> int:")
    record = await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": line, "character": 4}}
    )
    assert record["state"] == "failed", record
    assert "cannot open" in record["error"] and "test_geometry.py" in record["error"]
    assert not (tmp_path / "test_geometry.py").exists()


async def test_an_existing_test_file_is_never_overwritten(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False)
    module = tmp_path / "geometry.py"
    module.write_text(GEOMETRY)
    existing = "def test_mine():\n    assert 1 + 1 == 2\n"
    test_file = tmp_path / "test_geometry.py"
    test_file.write_text(existing)
    editor.open(_uri(module), GEOMETRY)
    record = await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": 4, "character": 0}}
    )
    assert record["state"] == "done", record
    assert editor.text(_uri(test_file)).startswith(existing)
    assert "def test_mine():" in editor.text(_uri(test_file))


async def test_complete_the_rest_offline_proposes_what_followed_earlier(
    offline: Editor, tmp_path: Path
) -> None:
    text = (
        "def is_date(text):\n    return DATE_PATTERN.fullmatch(text) is not None\n\n\n"
        "def is_mail(text):\n    return MAIL_PATTERN.fullmatch(text) is not None\n\n\n"
        "def is_semver(text):\n    return SEMVER_PATTERN.fullmatch(\n"
    )
    uri = _uri(tmp_path / "checks.py")
    offline.open(uri, text)
    cursor = len(text) - 1
    record = await offline.run(
        "fastedit.completeRest", {"uri": uri, "position": offline.pos(uri, cursor)}
    )
    assert record["state"] == "done", record
    assert offline.text(uri) == text[:cursor] + "text) is not None" + text[cursor:]
    assert record["metrics"]["edits"] >= 2


async def test_edit_selection_offline_says_it_needs_a_model(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "x.py")
    offline.open(uri, "x = 1\n")
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}
    record = await offline.run(
        "fastedit.editSelection", {"uri": uri, "range": rng, "instruction": "rename x"}
    )
    assert record["state"] == "failed"
    assert "needs a model" in record["error"] and "FASTEDIT_FAST_BASE_URL" in record["error"]
    assert offline.text(uri) == "x = 1\n"


async def test_demo_runs_every_action_offline_with_no_key() -> None:
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "fastedit_lsp", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env=hermetic_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for title in ("Generate regex", "Complete the rest", "Write tests", "Fix syntax"):
        assert f"▶ {title}" in out
    assert "4 of 4 actions succeeded" in out
    assert "+ISO_DATE_PATTERN = re.compile(" in out
    assert "verified: True" in out


@pytest.mark.parametrize(
    ("doc", "selected", "expect"),
    [
        pytest.param(
            'import re\n\nVERSIONS = ["1.2.3", "10.0.1", "0.9.12"]\n\nprint(VERSIONS)\n',
            '"1.2.3", "10.0.1", "0.9.12"',
            "PATTERN = re.compile(",
            id="selected-string-literals",
        ),
        pytest.param(
            "import re\n\n# match: ab-12\n# match: cd-345\n# reject: ab12\nCODE = re.compile()\n",
            "",
            "CODE = re.compile(r",
            id="fills-an-empty-re-compile",
        ),
    ],
)
async def test_regex_from_selected_literals_or_into_an_empty_compile(
    offline: Editor, tmp_path: Path, doc: str, selected: str, expect: str
) -> None:
    uri = _uri(tmp_path / "lits.py")
    offline.open(uri, doc)
    if selected:
        start = doc.index(selected)
        end = start + len(selected)
    else:
        start = end = doc.index("re.compile()") + len("re.compile(")
    rng = {"start": offline.pos(uri, start), "end": offline.pos(uri, end)}
    record = await offline.run("fastedit.generateRegex", {"uri": uri, "range": rng})
    assert record["state"] == "done", record
    assert record["verification"]["ok"] is True
    text = offline.text(uri)
    assert expect in text
    line = next(x for x in text.splitlines() if expect in x)
    pattern = re.compile(line.split("re.compile(r", 1)[1][1:-2])
    if selected:
        assert all(pattern.fullmatch(v) for v in ("1.2.3", "10.0.1", "0.9.12"))
        assert text.startswith(doc[: doc.index("\n\nprint")])  # the selection is untouched
    else:
        assert pattern.fullmatch("ef-9999") and not pattern.fullmatch("ab12")
        assert text.count("re.compile(") == 1


async def test_a_model_test_module_that_does_not_parse_never_lands(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    module = tmp_path / "geometry.py"
    module.write_text(GEOMETRY)
    editor.open(_uri(module), GEOMETRY)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    broken = "def test_clamp(:\n    assert clamp(5, 0, 3) == 3\n"
    good = "from geometry import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n"
    stub.script(Answer(text=broken), Answer(text=good))
    record = await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": 4, "character": 0}}
    )
    assert record["state"] == "done", record
    assert [a["verification"]["ok"] for a in record["attempts"]] == [False, True]
    test_file = tmp_path / "test_geometry.py"
    assert record["uri"] == _uri(test_file)
    assert editor.text(_uri(test_file)) == good
    assert all("def test_clamp(:" not in text for _, _, _, text in editor.applied)


@pytest.mark.parametrize("second_ok", [True, False], ids=["refined", "offline-fallback"])
async def test_a_model_answer_with_no_test_functions_never_lands(
    editor: Editor, stub: StubModelServer, tmp_path: Path, second_ok: bool
) -> None:
    module = tmp_path / "geometry.py"
    module.write_text(GEOMETRY)
    editor.open(_uri(module), GEOMETRY)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    # Parses, imports what exists, defines a helper and a class: but no test pytest collects.
    hollow = (
        "from geometry import clamp\n\n\ndef check_clamp():\n    assert clamp(5, 0, 3) == 3\n"
        "\n\nclass Checks:\n    def test_low(self):\n        assert clamp(-1, 0, 3) == 0\n"
    )
    good = "from geometry import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n"
    stub.script(Answer(text=hollow), Answer(text=good if second_ok else hollow))
    record = await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": 4, "character": 0}}
    )
    assert record["state"] == "done", record
    attempts = [(a["route"], a["verification"]) for a in record["attempts"]]
    assert attempts[0][1] == {"ok": False, "details": "defines no test functions (def test_...)"}
    # The model was told why, as for any other failed check.
    assert "defines no test functions" in stub.requests[1].body["messages"][-1]["content"]
    written = editor.text(_uri(tmp_path / "test_geometry.py"))
    assert "check_clamp" not in written and "class Checks" not in written
    if second_ok:
        assert [a[1]["ok"] for a in attempts] == [False, True]
        assert written == good
        assert record["verification"]["details"].endswith("1 test functions")
    else:
        # Both rejected: the offline generator's tests landed instead, and they are tests.
        assert [a[1]["ok"] for a in attempts] == [False, False, True]
        assert record["route"] == "local" and record["verification"]["ok"] is True
        assert "def test_clamp_example_1()" in written


SIDE_EFFECT = '''import pathlib

pathlib.Path(__file__).with_name("imported.marker").write_text("imported")


def double(x: int) -> int:
    """Twice x.

    >>> double(2)
    4
    """
    return 2 * x
'''


@pytest.mark.parametrize(
    ("tests_settings", "imported", "ok"),
    [
        pytest.param({}, False, True, id="default-never-imports-user-code"),
        pytest.param({"verifyCollect": True}, True, True, id="verify-collect-opt-in"),
        pytest.param({"run": True}, True, True, id="run-opt-in"),
    ],
)
async def test_generated_tests_import_user_code_only_when_opted_in(
    make_editor: MakeEditor,
    tmp_path: Path,
    tests_settings: dict[str, bool],
    imported: bool,
    ok: bool,
) -> None:
    editor = await make_editor(model=False, init_options={"tests": tests_settings})
    record = await _tests_job(
        editor,
        tmp_path / "sideeffect.py",
        SIDE_EFFECT,
        SIDE_EFFECT.splitlines().index("def double(x: int) -> int:"),
    )
    assert record["state"] == "done", record
    assert record["verification"]["ok"] is ok, record["verification"]
    assert (tmp_path / "imported.marker").exists() is imported
    if tests_settings.get("verifyCollect"):
        assert "collected" in record["verification"]["details"]
    if tests_settings.get("run"):
        assert "passed" in record["verification"]["details"]


async def test_a_generated_test_module_that_fails_collection_is_reported(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False, init_options={"tests": {"verifyCollect": True}})
    broken_import = SIDE_EFFECT.replace(
        "import pathlib\n", "import pathlib\nraise RuntimeError('no')\n"
    )
    record = await _tests_job(
        editor,
        tmp_path / "explodes.py",
        broken_import,
        broken_import.splitlines().index("def double(x: int) -> int:"),
    )
    assert record["state"] == "done"
    assert record["verification"]["ok"] is False
    assert "collection failed" in record["verification"]["details"]


async def test_a_model_test_module_importing_missing_workspace_names_never_lands(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    module = tmp_path / "geometry.py"
    module.write_text(GEOMETRY)
    (tmp_path / "helpers.py").write_text("def make_shape():\n    return 1\n")
    editor.open(_uri(module), GEOMETRY)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    wrong = (
        "from geometry import clamp, nothing_here\n\n\n"
        "def test_clamp():\n    assert clamp(5, 0, 3) == 3\n"
    )
    wrong_helper = "from helpers import make_circle\n\n\ndef test_x():\n    assert make_circle()\n"
    stub.script(Answer(text=wrong), Answer(text=wrong_helper))
    record = await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": 4, "character": 0}}
    )
    assert record["state"] == "done", record
    details = [a["verification"]["details"] for a in record["attempts"]]
    assert "geometry does not define: nothing_here" in details[0]
    assert "helpers does not define: make_circle" in details[1]
    # Both rejected: the offline generator's module landed instead.
    assert record["route"] == "local" and record["verification"]["ok"] is True
    written = editor.text(_uri(tmp_path / "test_geometry.py"))
    assert "nothing_here" not in written and "make_circle" not in written


async def test_with_tests_run_a_models_tests_get_the_recorders_beside_them(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    """A model wrote the tests (one of them wrong): with ``tests.run`` the recorder's tests
    of what the function really does are added to the model's, the job says how many, and
    the one that fails on the code is dropped, the rest pass."""
    editor = await make_editor(init_options={"tests": {"run": True}})
    await editor.command("fastedit.setMode", {"mode": "fast"})
    answer = (
        "from geometry import clamp\n\n\n"
        "def test_clamp_inside():\n    assert clamp(2, 0, 3) == 2\n\n\n"
        "def test_clamp_wrong():\n    assert clamp(9, 0, 3) == 9\n"
    )
    stub.script(Answer(text=answer))
    record = await _tests_job(editor, tmp_path / "geometry.py", GEOMETRY, 4)
    assert record["state"] == "done", record
    assert record["route"] == "fast", record
    added = re.search(r"(\d+) recorded tests? added", record["reason"])
    assert added is not None and int(added.group(1)) >= 1, record["reason"]
    details = record["verification"]["details"]
    assert "dropped 1 generated test that failed on the current code: test_clamp_wrong" in details
    written = editor.text(_uri(tmp_path / "test_geometry.py"))
    assert "def test_clamp_inside" in written and "test_clamp_wrong" not in written
    recorded = re.findall(r"^def (test_clamp_recorded_\d+)\(", written, re.M)
    assert len(recorded) == int(added.group(1))
    output = await pytest_passes(tmp_path / "test_geometry.py", written, tmp_path)
    assert f"{1 + len(recorded)} passed" in output


async def _regex_job(offline: Editor, uri: str) -> dict[str, Any]:
    """A finished regex job on REGEX_DOC (which lacks ``import re``, so the job adds it)."""
    offline.open(uri, REGEX_DOC)
    here = {"line": REGEX_DOC.splitlines().index("# regex: ISO date"), "character": 0}
    record = await offline.run(
        "fastedit.generateRegex", {"uri": uri, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    return record


async def test_revert_also_removes_the_import_line_the_job_added(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "dates.py")
    record = await _regex_job(offline, uri)
    assert "import re\n" in offline.text(uri) and "import re\n" not in REGEX_DOC
    applied, requests = len(offline.applied), offline.apply_requests
    reply = await offline.command("fastedit.revert", {"jobId": record["jobId"]})
    assert reply == {"reverted": True}
    assert offline.text(uri) == REGEX_DOC
    # One edit for the editor (one undo step) holding both: the region and the import line.
    assert offline.apply_requests - requests == 1
    assert len(offline.applied) - applied == 2


async def test_revert_keeps_an_import_line_the_user_may_have_made_their_own(
    offline: Editor, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "dates.py")
    record = await _regex_job(offline, uri)
    # The user copies the import line: which one is the job's is no longer known.
    offline.type(uri, 0, "import re\n")
    offline.flush()
    await offline.command("fastedit.status")  # the change is in before the revert
    reply = await offline.command("fastedit.revert", {"jobId": record["jobId"]})
    assert reply["reverted"] is True and "import re" in reply["kept"]
    # The region is restored; both import lines stay.
    assert offline.text(uri) == "import re\n" + REGEX_DOC.replace(
        "import os\n", "import os\nimport re\n", 1
    )


PRICES = '''SALE = "$2"


def parse_price(text: str) -> float:
    """The price in a label.

    >>> parse_price("$3.50")
    3.5
    >>> parse_price(SALE)
    2.5
    """
    return float(text.strip().lstrip("$"))
'''


async def test_with_tests_run_a_generated_test_that_fails_on_the_code_is_dropped(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    """Invariant 9 with ``tests.run``: the docstring's second example is wrong (the code says
    2.0), so its test fails on the current code; it never lands, and the job says so. (Its
    argument is a name, so the recorder did not make that call: an example it made is
    repaired instead, ``test_with_tests_run_a_stale_docstring_example_is_written_...``.)"""
    editor = await make_editor(model=False, init_options={"tests": {"run": True}})
    record = await _tests_job(editor, tmp_path / "prices.py", PRICES, 3)
    assert record["state"] == "done", record
    details = record["verification"]["details"]
    assert record["verification"]["ok"] is True, details
    assert "dropped 1 generated test that failed on the current code: " in details
    assert "test_parse_price_example_2" in details
    written = editor.text(_uri(tmp_path / "test_prices.py"))
    assert "def test_parse_price_example_1()" in written
    assert "def test_parse_price_example_2()" not in written
    assert "2.5" not in written  # the docstring's wrong answer; the code's 2.0 may be asserted
    # What landed passes on the code it characterises.
    await pytest_passes(tmp_path / "test_prices.py", written, tmp_path)


async def test_with_tests_run_nothing_lands_when_no_generated_test_passes(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False, init_options={"tests": {"run": True}})
    broken = SIDE_EFFECT.replace("import pathlib\n", "import pathlib\nraise RuntimeError('no')\n")
    record = await _tests_job(
        editor,
        tmp_path / "explodes.py",
        broken,
        broken.splitlines().index("def double(x: int) -> int:"),
    )
    assert record["state"] == "done", record
    assert record["metrics"]["edits"] == 0
    assert "that failed on the current code: test_double_example_1" in record["reason"]
    assert "def test_double" not in editor.text(_uri(tmp_path / "test_explodes.py"))


FOLD = '''import unicodedata


def fold(text: str) -> str:
    """The text in lower case, without its accents."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    if not kept.strip():
        raise ValueError("nothing to fold")
    return kept.lower()
'''


async def test_with_tests_run_recorded_tests_pin_what_the_function_really_does(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    """``tests.run`` on: the function is run (the recorder) and a few of its real outcomes
    become tests: values the static evaluator cannot compute (Unicode tables), chosen to catch
    one-change slips; they pass on the code, and the job says how many were added."""
    editor = await make_editor(model=False, init_options={"tests": {"run": True}})
    record = await _tests_job(
        editor,
        tmp_path / "folding.py",
        FOLD,
        FOLD.splitlines().index("def fold(text: str) -> str:"),
    )
    assert record["state"] == "done", record
    assert record["verification"]["ok"] is True, record["verification"]
    assert "passed" in record["verification"]["details"]
    assert "dropped" not in record["verification"]["details"]
    added = re.search(r"(\d+) recorded tests? added", record["reason"])
    assert added is not None, record["reason"]
    written = editor.text(_uri(tmp_path / "test_folding.py"))
    recorded = re.findall(r"^def (test_fold_recorded_\d+)\(", written, re.M)
    assert len(recorded) == int(added.group(1)) >= 1
    # One of them pins a raise the function's own guard makes, its whole message too; the
    # others what it returned.
    assert 'with pytest.raises(ValueError, match="^nothing to fold$"):' in written
    assert re.search(r"assert fold\(.+\) == ", written)
    output = await pytest_passes(tmp_path / "test_folding.py", written, tmp_path)
    todos = written.count('pytest.skip("TODO')
    tests = len(re.findall(r"^def test_", written, re.M))
    # A test over plain values (no hypothesis in this project) passes once per value.
    passed = re.search(r"(\d+) passed", output)
    assert passed is not None and int(passed.group(1)) >= tests - todos, output
    assert "failed" not in output and "error" not in output, output


STALE = '''def shout(text: str) -> str:
    """The text, loud.

    >>> shout("hi")
    'HI'
    """
    return text.upper() + "!"
'''


async def test_with_tests_run_a_stale_docstring_example_is_written_as_the_function_ran(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    """The docstring shows what the function no longer does: with ``tests.run`` its example
    is written as the function ran (a comment says what the docstring shows) instead of
    landing as a test that fails, and the job names it."""
    editor = await make_editor(model=False, init_options={"tests": {"run": True}})
    record = await _tests_job(editor, tmp_path / "loud.py", STALE, 0)
    assert record["state"] == "done", record
    assert "written as it ran: test_shout_example_1" in record["reason"], record["reason"]
    assert "dropped" not in record["verification"]["details"], record["verification"]
    written = editor.text(_uri(tmp_path / "test_loud.py"))
    assert "# The docstring shows that it returns 'HI'; run, it does this" in written
    assert 'assert shout("hi") == "HI!"' in written
    output = await pytest_passes(tmp_path / "test_loud.py", written, tmp_path)
    todos = written.count('pytest.skip("TODO')
    tests = len(re.findall(r"^def test_", written, re.M))
    # A test over plain values (no hypothesis in this project) passes once per value.
    passed = re.search(r"(\d+) passed", output)
    assert passed is not None and int(passed.group(1)) >= tests - todos, output
    assert "failed" not in output and "error" not in output, output


SLOW = '''import time


def slow_double(n: int) -> int:
    """Twice n, after a pause (what a function that takes its time does)."""
    time.sleep(0.01)
    if n < 0:
        raise ValueError("negative")
    return n * 2
'''


async def test_with_tests_run_the_progress_says_which_function_is_being_recorded(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    """Recording takes up to the recorder's limit per function (its calls, then its variants):
    the job's progress says so meanwhile ("recording slow_double (k/n)", n the variants), and
    no longer once the tests are written. The function pauses 10 ms per call, so that the
    recording lasts a few polls of the worker's progress."""
    editor = await make_editor(model=False, init_options={"tests": {"run": True}})
    record = await _tests_job(
        editor,
        tmp_path / "slow.py",
        SLOW,
        SLOW.splitlines().index("def slow_double(n: int) -> int:"),
    )
    assert record["state"] == "done", record
    assert re.search(r"\d+ recorded tests? added", record["reason"]), record["reason"]
    token = f"fastedit-{record['jobId']}"
    messages = [
        getattr(report, "message", None) or ""
        for report in editor.client.progress_reports.get(token, [])
    ]
    counted = [m for m in messages if re.search(r"recording slow_double \(\d+/\d+\)", m)]
    assert counted, messages
    # The variants it went through grow as it goes, up to the plan's.
    done = [tuple(map(int, re.findall(r"\((\d+)/(\d+)\)", m)[-1])) for m in counted]
    assert all(k <= n for k, n in done) and done == sorted(done), done
    # The end says what the job did, not what it was busy with.
    assert "recording" not in messages[-1], messages
