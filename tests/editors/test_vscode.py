"""The VS Code extension (editors/vscode) in the real VS Code, against the real server.

code-server 4.139.1 (VS Code 1.139) runs in headless Chromium with the packaged ``.vsix``
installed; the user's settings.json points the fast and standard profiles at the loopback stub
model (machine-scoped settings, which reach the server through ``initializationOptions``) and
starts the server with this venv's Python. Keys are pressed as a user would; outcomes are read from
the editor and status bar as shown, and from what the extension received from the server (its
``FASTEDIT_VSCODE_LOG`` trace of ``fastedit/status`` notifications and command replies).
Tools: editors/vscode/scripts/e2e-setup.sh.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer, split_tokens
from tests.support.editors import vscode_session
from tests.support.editors.availability import require_editor
from tests.support.editors.vscode_session import CodeServer, DriverError, Workbench, wait

SOURCE = "def add(a: int, b: int) -> int:\n    return \n\n\nprint(add(1, 2))\n"
ANSWER = "a + b  # the sum of both numbers, computed exactly once"
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "vscode-status.png"


@pytest.fixture(scope="session")  # before the session-scoped build: skip without building
def chromium() -> str:
    """Chromium's path once the whole toolchain of e2e-setup.sh is there."""
    missing = vscode_session.tools_missing()
    found = None if missing else shutil.which("chromium")
    hint = f"missing {missing}: {vscode_session.SETUP_HINT}"
    return require_editor("VS Code (code-server + chromium)", found, hint)


@pytest.fixture(scope="module")
def code_server(
    chromium: str, vsix: Path, stub_model: StubModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CodeServer]:
    machine = {
        "fastedit.server.command": [sys.executable, "-m", "fastedit_lsp"],
        "fastedit.profiles.fast.baseUrl": stub_model.base_url,
        "fastedit.profiles.standard.baseUrl": stub_model.base_url,
    }
    user = {
        "fastedit.profiles.fast.model": "stub-fast",
        "fastedit.profiles.standard.model": "stub-strong",
        # A loaded 2-core machine may take a while to answer a completion.
        "fastedit.completionDeadlineMs": 20000,
    }
    # A repository's settings: the key-routing ones must not reach the server, the rest may.
    workspace = {
        "fastedit.profiles.fast.baseUrl": "http://127.0.0.1:9/v1",
        "fastedit.server.command": ["false"],
        "fastedit.profiles.standard.model": "stub-workspace",
    }
    root = tmp_path_factory.mktemp("code-server")
    server = CodeServer(root, vsix, user=user, machine=machine, workspace=workspace)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def workbench(code_server: CodeServer, chromium: str) -> Iterator[Workbench]:
    bench = Workbench(code_server, chromium)
    try:
        # The extension started the server, which announced its mode.
        bench.wait_status(r"Auto")
        yield bench
    finally:
        bench.close()


def _open(workbench: Workbench, name: str, text: str) -> None:
    (workbench.server.workspace / name).write_text(text)
    workbench.open_file(name)


def _stream(text: str, tps: float) -> Answer:
    """An answer of ``text`` in 3-character tokens at ``tps`` tokens per second."""
    return Answer(tokens=split_tokens(text, 3), tps=tps)


def _server_status(workbench: Workbench) -> dict[str, Any]:
    """``fastedit.status`` as the server answers it, through the palette's Show Status."""
    before = len(workbench.server.replies("fastedit.status"))
    workbench.run_command("Fast Edit: Show Status")
    replies = wait(
        lambda: workbench.server.replies("fastedit.status")[before:], "the fastedit.status reply"
    )
    status: dict[str, Any] = replies[-1]
    return status


def _new_job(workbench: Workbench, uri_end: str, seen: set[str]) -> str:
    """The id of a job on the document ending in ``uri_end`` not in ``seen``."""

    def find() -> str | None:
        for status in workbench.server.statuses():
            job = status.get("job")
            if job and job["uri"].endswith(uri_end) and job["jobId"] not in seen:
                return str(job["jobId"])
        return None

    return wait(find, "a job to start")


def _finished(workbench: Workbench, job_id: str) -> dict[str, Any]:
    def record() -> dict[str, Any] | None:
        job = workbench.server.job(job_id)
        return job if job and job["state"] != "running" else None

    return wait(record, f"{job_id} to finish")


def test_settings_reach_the_server_and_the_toggle_key_flips_its_mode(
    workbench: Workbench,
) -> None:
    _open(workbench, "toggle.py", SOURCE)
    status = _server_status(workbench)
    assert status["mode"] == "auto"
    # Machine-scoped user settings arrive through initializationOptions.
    fast = status["profiles"]["fast"]
    assert (fast["provider"], fast["model"]) == ("openai-compatible", "stub-fast")
    assert (
        fast["baseUrl"]
        == workbench.server.replies("fastedit.status")[0]["profiles"]["fast"]["baseUrl"]
    )
    workbench.call("focusEditor")
    workbench.press("Control+Alt+f")
    shown = workbench.wait_status(r"^Fast\b")
    assert "stub-fast" in shown
    assert _server_status(workbench)["mode"] == "fast"
    assert workbench.server.statuses()[-1]["mode"] == "fast"
    # Toggling again returns to the mode before fast; a click on the item toggles too.
    workbench.call("focusEditor")
    workbench.press("Control+Alt+f")
    workbench.wait_status(r"^Auto\b")
    workbench.call("clickStatus", pattern=r"^Auto\b")
    workbench.wait_status(r"^Fast\b")
    workbench.call("clickStatus", pattern=r"^Fast\b")
    workbench.wait_status(r"^Auto\b")
    assert _server_status(workbench)["mode"] == "auto"


def test_complete_rest_streams_into_the_editor_and_one_undo_restores(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "calc.py", SOURCE)
    stub_model.script(_stream(ANSWER, tps=20))
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    workbench.go_to(2, 12)  # after "return "
    workbench.run_command("Fast Edit: Complete the Rest")
    job_id = _new_job(workbench, "/calc.py", seen)
    # While it streams, the status bar shows the model and its speed.
    shown = workbench.wait_status(r"stub-fast · \d+ tok/s")
    if not SCREENSHOT.exists():
        SCREENSHOT.parent.mkdir(exist_ok=True)
        workbench.call("screenshot", path=str(SCREENSHOT), selector=".part.statusbar")
    record = _finished(workbench, job_id)
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    assert record["metrics"]["edits"] >= 2, record
    expected = SOURCE.replace("    return \n", f"    return {ANSWER}\n")
    workbench.wait_text(equals=expected)
    assert "tok/s" in shown
    # Once done: the model's decode speed, and the wait for its first token apart.
    workbench.wait_status(r"stub-fast · [\d,]+ tok/s · first token [\d,]+ ms$")
    # The whole job is one undo step.
    workbench.call("focusEditor")
    workbench.go_to(5, 1)
    workbench.press("Control+z")
    workbench.wait_text(equals=SOURCE)


def test_complete_rest_leaves_the_cursor_after_the_completed_text(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "sum.py", SOURCE)
    stub_model.script(_stream("a + b", tps=60))
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    workbench.go_to(2, 12)  # after "return "
    workbench.run_command("Fast Edit: Complete the Rest")
    assert _finished(workbench, _new_job(workbench, "/sum.py", seen))["state"] == "done"
    workbench.wait_text(equals=SOURCE.replace("    return \n", "    return a + b\n"))
    # The status bar's cursor position: after the completion's last character.
    workbench.wait_status(rf"Ln 2, Col {len('    return a + b') + 1}\b")


def test_a_cursor_the_user_moves_while_the_text_streams_stays_where_the_user_put_it(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    name = "moved.py"
    stub_model.reset()
    _open(workbench, name, SOURCE)
    stub_model.script(_stream(ANSWER, tps=20))
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    workbench.go_to(2, 12)  # after "return "
    workbench.run_command("Fast Edit: Complete the Rest")
    job_id = _new_job(workbench, f"/{name}", seen)
    workbench.wait_text(contains="    return a + b")  # streaming: the first tokens are in
    workbench.go_to(5, 3)  # the user moves on while the rest arrives
    record = _finished(workbench, job_id)
    assert record["state"] == "done", record
    workbench.wait_text(equals=SOURCE.replace("    return \n", f"    return {ANSWER}\n"))
    # Line 5 is below the job's text: the user's cursor is where they put it, not after the text.
    try:
        workbench.wait_status(r"Ln 5, Col 3\b")
    except DriverError as exc:
        raise AssertionError(f"{exc}\n{_cursor_trace(workbench, name)}") from None


def _cursor_trace(workbench: Workbench, name: str) -> str:
    """What the extension did with the cursor on ``name``: each edit, and who moved it."""
    lines = []
    for event in workbench.server.trace():
        data = event["data"]
        if event["event"] in ("applyEdit", "selection") and data["uri"].endswith(f"/{name}"):
            lines.append(f"{event['event']}: {json.dumps({**data, 'uri': name})}")
    return "the extension's cursor trace (selection kind 3 = command, none = an edit):\n" + (
        "\n".join(lines)
    )


def test_a_job_with_no_suggestion_says_so_and_why_in_the_status_bar(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "nothing.py", SOURCE)
    stub_model.script(Answer(text=""))  # the model answers nothing
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    workbench.go_to(2, 12)
    workbench.run_command("Fast Edit: Complete the Rest")
    record = _finished(workbench, _new_job(workbench, "/nothing.py", seen))
    assert record["state"] == "done" and record["metrics"]["edits"] == 0, record
    workbench.wait_status(r"Fast Edit: Complete the rest: no suggestion")
    assert workbench.text() == SOURCE


def test_ghost_text_is_shown_and_tab_accepts_it(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    source = "import statistics\n\n\ndef summary(values):\n    spread = \n"
    _open(workbench, "report.py", source)
    # The model answers with what follows the cursor, after the typed "st".
    stub_model.default = Answer(text="atistics.stdev(values)\n")
    try:
        workbench.go_to(5, 14)
        workbench.type("st")
        workbench.call("waitSelector", selector=".part.editor [class*='ghost-text']")
        assert workbench.call("ghostText").strip() == "atistics.stdev(values)"
        workbench.press("Tab")
        workbench.wait_text(equals=source.replace("spread = ", "spread = statistics.stdev(values)"))
        # The status bar's cursor position: right after the accepted text.
        workbench.wait_status(rf"Ln 5, Col {len('    spread = statistics.stdev(values)') + 1}\b")
    finally:
        stub_model.default = Answer()


def test_typing_during_a_stream_is_never_undone_together_with_the_jobs_text(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "typing.py", SOURCE)
    answer = "a + b" + "  # " + "the sum " * 16
    # The stream holds after its 3rd and 8th tokens until the test releases it: the user's typing
    # then comes between the job's edits however slow the machine (at 20 tok/s the answer could
    # end before the typing: a loaded soak run saw no edit after " second").
    stub_model.script(Answer(tokens=split_tokens(answer, 3), tps=20, hold_after=[3, 8]))
    stub_model.default = Answer(text="")  # no ghost text while the user types
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}

    def job_text(text: str) -> str:
        return text.split("\n")[1][len("    return ") :]

    def typed(text: str) -> str:
        return text.split("\n")[5] if text.count("\n") >= 5 else ""

    def next_edit(seen_text: str) -> str:
        return str(workbench.call("waitEditorChange", line=1, before=seen_text))

    try:
        workbench.go_to(2, 12)
        workbench.run_command("Fast Edit: Complete the Rest")
        job_id = _new_job(workbench, "/typing.py", seen)
        # Mid-stream the user types at the end of the file, before and after job edits land.
        text = workbench.wait_text(contains="return a +")
        workbench.call("focusEditor")
        workbench.press("Control+End")
        workbench.type("# first")
        text = workbench.wait_text(contains="# first")
        stub_model.release()
        text = next_edit(text.split("\n")[1])
        workbench.type(" second")
        text = workbench.wait_text(contains="# first second")
        stub_model.release()
        next_edit(text.split("\n")[1])
        record = _finished(workbench, job_id)
        assert record["state"] == "done", (record.get("error"), record["metrics"])
        assert record["metrics"]["edits"] >= 3, record
        text = workbench.wait_text(contains=answer)
        assert typed(text) == "# first second"

        # Walk the undo history back: no step removes typed text together with job text.
        steps = 0
        while text != SOURCE:
            workbench.press("Control+z")
            after = str(workbench.call("waitEditorChange", before=text))
            job_changed = job_text(after) != job_text(text)
            typing_changed = typed(after) != typed(text)
            assert not (job_changed and typing_changed), (text, after)
            text = after
            steps += 1
            assert steps < 30, "the undo history does not lead back to the original"
        # The job went on after the typing: the first undo took job text only, and the
        # typing came back apart from the job's first part.
        assert steps >= 3
    finally:
        stub_model.default = Answer()


def test_edit_selection_asks_for_an_instruction_and_revert_restores(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "edit.py", SOURCE)
    rewrite = "def add(a: int, b: int) -> int:\n    return int(a) + int(b)\n"
    stub_model.script(_stream(f"```python\n{rewrite}```\n", tps=80))
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    # Select the function's two lines, run the command, answer the input box.
    workbench.go_to(1, 1)
    workbench.press("Shift+ArrowDown")
    workbench.press("Shift+ArrowDown")
    workbench.run_command(
        "Fast Edit: Edit Selection", asks="Fast Edit: edit selection", answer="cast both to int"
    )
    job_id = _new_job(workbench, "/edit.py", seen)
    record = _finished(workbench, job_id)
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    assert record["metrics"]["edits"] >= 2, record
    expected = rewrite + SOURCE.split("\n", 2)[2]
    workbench.wait_text(equals=expected)
    prompt = stub_model.requests[-1].body["messages"][-1]["content"]
    assert "cast both to int" in prompt
    workbench.run_command("Fast Edit: Revert Last Edit")
    workbench.wait_text(equals=SOURCE)
    wait(lambda: (workbench.server.job(job_id) or {}).get("state") == "reverted", "the revert")
    # The revert says so (a status-bar message for 5 s: read from the extension's trace of the
    # messages it showed, so the test does not race the message's end).
    wait(lambda: "Fast Edit: reverted" in workbench.server.messages(), "the revert's message")


def test_a_command_right_after_typing_acts_on_the_typed_text(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    # The server must know the typed text before the command, or it would refuse a position past
    # the end of the line it knows ("    ").
    stub_model.reset()
    source = "def add(a: int, b: int) -> int:\n    \n"
    _open(workbench, "typed.py", source)
    # Every request gets the answer: the typing's ghost-text request may reach the stub before
    # the job's (a loaded soak run: the job took an empty answer and ended with nothing written).
    stub_model.default = _stream("a + b", tps=60)
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    try:
        workbench.go_to(2, 5)
        workbench.type("return ")
        workbench.run_command("Fast Edit: Complete the Rest")
        record = _finished(workbench, _new_job(workbench, "/typed.py", seen))
        assert record["state"] == "done", record.get("error")
        workbench.wait_text(equals="def add(a: int, b: int) -> int:\n    return a + b\n")
    finally:
        stub_model.default = Answer()


def test_cancel_command_stops_a_running_stream(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "cancel.py", SOURCE)
    answer = "a + b  # " + "never finished " * 30
    stub_model.script(_stream(answer, tps=15))
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    workbench.go_to(2, 12)
    workbench.run_command("Fast Edit: Complete the Rest")
    job_id = _new_job(workbench, "/cancel.py", seen)
    workbench.wait_text(contains="return a +")
    workbench.run_command("Fast Edit: Cancel Running Edits")
    record = _finished(workbench, job_id)
    assert record["state"] == "cancelled", record
    assert workbench.server.replies("fastedit.cancel")[-1] == {"cancelled": [job_id]}
    # What streamed before the cancel stays, and the model's stream was closed.
    streamed = workbench.text().split("\n")[1][len("    return ") :]
    assert streamed and answer.startswith(streamed) and streamed != answer
    request = stub_model.requests[-1]
    wait(lambda: request.client_closed, "the model stream to be closed")


def test_a_user_action_picked_from_the_quick_pick_rewrites_the_function(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    source = "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n"
    _open(workbench, "action.py", source)
    function = source[: source.index("\n\n") + 1]
    documented = function.replace(":\n", ':\n    """Add two numbers."""\n', 1)
    stub_model.script(_stream(documented, tps=80))
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    workbench.go_to(2, 5)
    workbench.run_command(
        "Fast Edit: Run an Action", asks="Fast Edit: run an action", answer="Add a docstring"
    )
    job_id = _new_job(workbench, "/action.py", seen)
    record = _finished(workbench, job_id)
    assert (record["state"], record["kind"], record["action"]) == ("done", "run", "docstring")
    workbench.wait_text(equals=documented + source[len(function) :])
    # Only the docstring line went in: the function's lines were never deleted and retyped.
    assert [h["original"] for h in record["hunks"]] == [""]


def test_a_rewrite_streams_its_diff_and_revert_this_change_undoes_one_hunk(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    # Names that resolve (a builtin): a call of a function defined nowhere fails the names
    # check, and auto mode would ask the standard model again.
    table = "".join(f"value_{i} = max({i}, 0)\n" for i in range(12)) + "print(value_0)\n"
    _open(workbench, "table.py", table)
    rewrite = table.replace("max(2, 0)", "max(2, 0, 1)").replace("max(9, 0)", "max(9, 0, 1)")
    stub_model.script(_stream(rewrite[: -len("print(value_0)\n")], tps=150))
    seen = {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}
    workbench.go_to(1, 1)
    for _ in range(12):
        workbench.press("Shift+ArrowDown")
    workbench.run_command(
        "Fast Edit: Edit Selection", asks="Fast Edit: edit selection", answer="fast for 2 and 9"
    )
    record = _finished(workbench, _new_job(workbench, "/table.py", seen))
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    assert record["metrics"]["edits"] >= 2, record
    assert len(record["hunks"]) == 2
    workbench.wait_text(equals=rewrite)
    workbench.go_to(10, 3)
    workbench.code_action("Revert this change (fastedit)")
    workbench.wait_text(equals=table.replace("max(2, 0)", "max(2, 0, 1)"))


# -- the palette's other actions: each job ends done and one undo restores ----------------------

REGEX_SOURCE = """import os

# regex: ISO date
#   match: 2024-01-31
#   match: 1999-12-01
#   reject: 2024-1-31

print(os.sep)
"""
DATE = r"\d{4}-\d{2}-\d{2}"


def _seen(workbench: Workbench) -> set[str]:
    return {s["job"]["jobId"] for s in workbench.server.statuses() if s.get("job")}


def _undo_to(workbench: Workbench, text: str) -> None:
    """One ctrl+z in the editor, which must then show ``text``."""
    workbench.call("focusEditor")
    workbench.press("Control+z")
    workbench.wait_text(equals=text)


def test_generate_regex_from_the_palette_lands_below_the_examples_and_one_undo_restores(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "dates.py", REGEX_SOURCE)
    stub_model.script(Answer(text=DATE, token_size=2, tps=20))
    seen = _seen(workbench)
    workbench.go_to(3, 1)  # on "# regex: ISO date"
    workbench.run_command("Fast Edit: Generate Regex")
    record = _finished(workbench, _new_job(workbench, "/dates.py", seen))
    assert record["kind"] == "generateRegex" and record["state"] == "done", record
    expected = REGEX_SOURCE.replace("import os\n", "import os\nimport re\n").replace(
        "#   reject: 2024-1-31\n", f'#   reject: 2024-1-31\nISO_DATE = re.compile(r"{DATE}")\n'
    )
    workbench.wait_text(equals=expected)
    # The cursor after the pattern (though an import landed above it too).
    line = f'ISO_DATE = re.compile(r"{DATE}")'
    row = expected.split("\n").index(line) + 1
    workbench.wait_status(rf"Ln {row}, Col {len(line) + 1}\b")
    _undo_to(workbench, REGEX_SOURCE)


def test_fix_syntax_from_the_palette_repairs_the_selection_and_one_undo_restores(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    broken = "def area(width, height:\n    return width * height\n"
    fixed = "def area(width, height):\n    return width * height\n"
    _open(workbench, "broken.py", broken)
    stub_model.script(Answer(text=fixed, token_size=4, tps=30))
    seen = _seen(workbench)
    workbench.call("focusEditor")
    workbench.press("Control+a")
    workbench.run_command("Fast Edit: Fix Syntax")
    record = _finished(workbench, _new_job(workbench, "/broken.py", seen))
    assert record["kind"] == "fixSyntax" and record["state"] == "done", record
    assert record["verification"]["ok"] is True, record
    workbench.wait_text(equals=fixed)
    _undo_to(workbench, broken)


TESTED = '''def double(x):
    """Twice x.

    >>> double(2)
    4
    """
    return x * 2
'''
TESTS = "from shapes import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def test_generate_tests_from_the_palette_fills_a_new_module_and_one_undo_there_empties_it(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    _open(workbench, "shapes.py", TESTED)
    stub_model.script(Answer(text=TESTS, token_size=3, tps=40))
    seen = _seen(workbench)
    workbench.go_to(7, 5)  # in double's body
    workbench.run_command("Fast Edit: Generate Tests")
    record = _finished(workbench, _new_job(workbench, "shapes.py", seen))
    assert record["kind"] == "generateTests" and record["state"] == "done", record.get("error")
    # The server created the module and showed it; the tests streamed into its editor.
    assert (workbench.server.workspace / "test_shapes.py").exists()
    workbench.wait_text(equals=TESTS)
    # One undo in the new module removes the job's text; the source never changed.
    _undo_to(workbench, "")
    workbench.open_file("shapes.py")
    assert workbench.text() == TESTED
    assert (workbench.server.workspace / "shapes.py").read_text() == TESTED


def test_set_mode_from_the_palette_picks_the_mode(workbench: Workbench) -> None:
    _open(workbench, "modes.py", SOURCE)
    for mode, shown in (("standard", r"^Standard\b"), ("auto", r"^Auto\b")):
        title = "Fast Edit: Set Mode"
        workbench.call("quickInput", key="F1", text=title, row=title, closes=False)
        workbench.call("quickInput", title="Fast Edit: mode", text=mode, row=mode)
        workbench.wait_status(shown)
        assert _server_status(workbench)["mode"] == mode


def test_a_server_command_not_found_says_where_to_set_it_in_a_remote_window(
    chromium: str, vsix: Path, tmp_path: Path
) -> None:
    # code-server's window is remote: its machine settings are the Remote tab's.
    missing = str(tmp_path / "missing" / "fastedit-lsp")
    machine = {"fastedit.server.command": [missing]}
    server = CodeServer(tmp_path / "cs", vsix, user={}, machine=machine, workspace={})
    try:
        bench = Workbench(server, chromium)
        try:
            shown = bench.wait_notification(r"was not found")
            bench.wait_status(r"Fast Edit")
        finally:
            bench.close()
    finally:
        server.stop()
    [failure] = [e["data"] for e in server.trace() if e["event"] == "startFailure"]
    assert failure["notFound"] is True
    assert "ENOENT" in shown and "fastedit.server.command" in shown, shown
    assert "Remote" in shown and "tab" in shown, shown


def test_a_next_edit_suggestion_is_shown_after_a_rename_and_tab_applies_it_in_one_undo_step(
    workbench: Workbench, stub_model: StubModelServer
) -> None:
    stub_model.reset()
    # No ghost text: Tab belongs to an inline suggestion while one shows (inlineSuggestionVisible).
    stub_model.default = Answer(text="")
    source = "def total(items):\n    count = 0\n    for item in items:\n        count += item\n"
    _open(workbench, "rename.py", source)
    workbench.go_to(2, 5)
    for _ in range(5):
        workbench.press("Delete")
    workbench.type("acc")
    renamed = source.replace("count = 0", "acc = 0")
    workbench.wait_text(equals=renamed)

    def suggested() -> Any:
        # The suggestion for the finished rename: on a loaded machine a request may also go out
        # while the name is half typed ("ount" after the first Delete), and its answer comes too.
        for reply in workbench.server.replies("fastedit.nextEdit"):
            if reply and reply.get("edits") and reply["edits"][0]["text"] == "acc":
                return reply["edits"][0]
        return None

    edit = wait(suggested, "the next-edit suggestion for the rename")
    assert edit["range"]["start"] == {"line": 3, "character": 8}
    # The suggestion is shown beside the text it replaces, and applied only by the key.
    workbench.call("waitSelector", selector=".part.editor .view-line [class*='ced-']")
    # The key that accepts it is shown with it, not only in its hover.
    shown = wait(
        lambda: [t for t in workbench.call("decorationTexts") if "[Tab accepts]" in t],
        "the suggestion's key hint",
    )
    assert "acc" in shown[0], shown
    assert workbench.text() == renamed
    workbench.press("Tab")
    accepted = renamed.replace("count += item", "acc += item")
    workbench.wait_text(equals=accepted)
    workbench.press("Control+z")
    workbench.wait_text(equals=renamed)
    stub_model.default = Answer()
    replies = wait(
        lambda: workbench.server.replies("fastedit.acceptNextEdit"), "the accept command's reply"
    )
    assert replies[-1] == {"known": True}
