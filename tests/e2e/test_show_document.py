"""Writing tests when the editor will not show the new test module (``window/showDocument``).

An editor may refuse to open it: Neovim answers an error when it finds a swap file for it
("…/lsp/util.lua:940: Vim:E325: ATTENTION"), a client may answer ``success: false``. The job
then fails naming the file and the refusal in plain words, writes nothing, and leaves nothing
behind (no empty module is made for it; an existing one is untouched).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pygls.uris import from_fs_path

from tests.support.harness import Editor

from .conftest import MakeEditor

SOURCE = '''def clamp(value: int, low: int, high: int) -> int:
    """Clamp value into [low, high].

    >>> clamp(5, 0, 3)
    3
    """
    return max(low, min(high, value))
'''

#: What Neovim 0.11.4 answered (its handler's error, with the Lua file and line).
NEOVIM_E325 = "/usr/share/nvim/runtime/lua/vim/lsp/util.lua:940: Vim:E325: ATTENTION"


def _uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


def _refuse(editor: Editor, *, error: str | None) -> list[types.ShowDocumentParams]:
    """Make the editor refuse window/showDocument: an error reply, or ``success: false``."""
    asked: list[types.ShowDocumentParams] = []

    def show_document(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
        asked.append(params)
        if error is not None:
            raise JsonRpcInternalError(message=error)
        return types.ShowDocumentResult(success=False)

    editor.client.protocol.fm.features[types.WINDOW_SHOW_DOCUMENT] = show_document
    return asked


async def _write_tests(editor: Editor, module: Path) -> dict[str, object]:
    editor.open(_uri(module), SOURCE)
    return await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": 0, "character": 4}}
    )


@pytest.mark.parametrize("model", [False, True], ids=["offline", "model"])
async def test_a_refused_new_test_module_names_the_file_and_leaves_nothing_behind(
    make_editor: MakeEditor, tmp_path: Path, model: bool
) -> None:
    editor = await make_editor(model=model)
    asked = _refuse(editor, error=NEOVIM_E325)
    module = tmp_path / "geometry.py"
    module.write_text(SOURCE)
    record = await _write_tests(editor, module)
    assert asked, "the server did not ask the editor to show the module"
    assert record["state"] == "failed", record
    error = str(record["error"])
    assert "internal error" not in error, error
    assert "the editor did not open test_geometry.py" in error, error
    assert "swap file" in error and "E325: ATTENTION" in error, error
    assert "util.lua" not in error, error
    assert error.startswith("no tests written") and "removed" not in error, error
    # Nothing left behind (no empty module was made for the job), nothing else touched.
    assert not (tmp_path / "test_geometry.py").exists()
    assert module.read_text() == SOURCE
    assert editor.text(_uri(module)) == SOURCE
    assert editor.applied == []
    # The server goes on: the next job on the source runs.
    status = await editor.command("fastedit.status")
    assert status["jobs"][-1]["state"] == "failed"


async def test_an_existing_test_module_the_editor_declines_to_show_is_left_as_it_was(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False)
    _refuse(editor, error=None)  # success: false
    module = tmp_path / "geometry.py"
    module.write_text(SOURCE)
    test_file = tmp_path / "test_geometry.py"
    test_file.write_text("import pytest\n")
    record = await _write_tests(editor, module)
    assert record["state"] == "failed", record
    error = str(record["error"])
    assert "the editor did not open test_geometry.py" in error, error
    assert "it answered that it did not show it" in error, error
    assert error.startswith("no tests written") and "removed" not in error, error
    assert test_file.read_text() == "import pytest\n"
    assert editor.applied == []


async def test_tests_written_into_a_module_already_open_are_shown_where_they_land(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    # The module's buffer may be open in no window (Emacs after C-x o / switching buffers): the
    # tests landed there unseen while the editor said "Write tests done".
    editor = await make_editor(model=False)
    module = tmp_path / "geometry.py"
    module.write_text(SOURCE)
    test_file = tmp_path / "test_geometry.py"
    test_file.write_text("import pytest\n")
    editor.open(_uri(test_file), "import pytest\n")
    record = await _write_tests(editor, module)
    assert record["state"] == "done", record
    assert "def test_clamp" in editor.text(_uri(test_file))
    shown = [p.uri for p in editor.client.shown_documents]
    assert _uri(test_file) in shown, shown
