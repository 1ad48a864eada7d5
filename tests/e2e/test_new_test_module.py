"""Write tests into a test module that does not exist yet: it exists on disk only once it has
content.

An editor that opens a missing path as a new buffer (Neovim, Emacs) gets the path and no file;
one that does not (VS Code declines ``window/showDocument`` for a missing file) but advertises
``workspace.workspaceEdit.resourceOperations: create`` gets a ``CreateFile`` in a workspace
edit; one that can do neither gets the module written whole at the end, never while its buffer
is open. No job leaves a zero-byte file behind.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from tests.support.harness import Editor, EditorDocument

from .conftest import MakeEditor

SOURCE = '''def clamp(value: int, low: int, high: int) -> int:
    """Clamp value into [low, high].

    >>> clamp(5, 0, 3)
    3
    """
    return max(low, min(value, high))
'''


def _uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


async def _write_tests(editor: Editor, module: Path) -> dict[str, Any]:
    await asyncio.to_thread(module.write_text, SOURCE)
    editor.open(_uri(module), SOURCE)
    return await editor.run(
        "fastedit.generateTests", {"uri": _uri(module), "position": {"line": 0, "character": 4}}
    )


def _watch_resource_operations(editor: Editor) -> list[list[object]]:
    """The ``documentChanges`` of every workspace edit that carries a resource operation."""
    seen: list[list[object]] = []
    handler = editor.on_apply_edit

    def watching(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        changes = list(params.edit.document_changes or [])
        if any(not isinstance(c, types.TextDocumentEdit) for c in changes):
            seen.append(changes)
        return handler(params)

    editor.client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = watching
    return seen


async def test_an_editor_that_opens_a_missing_path_gets_the_path_and_no_file(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False)
    record = await _write_tests(editor, tmp_path / "clamp.py")
    assert record["state"] == "done" and record["metrics"]["edits"] >= 1, record
    test_uri = _uri(tmp_path / "test_clamp.py")
    assert record["uri"] == test_uri
    # The tests are in the editor's new buffer; the server made no file (the user saves it).
    assert "assert clamp(5, 0, 3) == 3" in editor.text(test_uri)
    assert not (tmp_path / "test_clamp.py").exists()
    assert editor.violations == []


async def test_an_editor_that_creates_files_gets_a_create_file_and_the_tests(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False, opens_missing=False, creates_files=True)
    operations = _watch_resource_operations(editor)
    record = await _write_tests(editor, tmp_path / "clamp.py")
    assert record["state"] == "done" and record["metrics"]["edits"] >= 1, record
    test_uri = _uri(tmp_path / "test_clamp.py")
    assert editor.created == [test_uri], record
    [create, *_] = operations[0]
    assert isinstance(create, types.CreateFile) and create.uri == test_uri
    assert create.options is not None and create.options.ignore_if_exists
    assert not create.options.overwrite
    assert "assert clamp(5, 0, 3) == 3" in editor.text(test_uri)
    # The harness, like an editor's unsaved buffer, keeps the text off the disk: the server
    # wrote no file of its own.
    assert not (tmp_path / "test_clamp.py").exists()
    assert editor.violations == []


async def test_an_editor_that_can_neither_gets_the_module_written_whole_at_the_end(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    editor = await make_editor(model=False, opens_missing=False)
    record = await _write_tests(editor, tmp_path / "clamp.py")
    assert record["state"] == "done", record
    written = (tmp_path / "test_clamp.py").read_text()
    assert written.startswith('"""Tests for clamp') and "assert clamp(5, 0, 3) == 3" in written
    assert f"written to {tmp_path / 'test_clamp.py'}" in record["reason"], record
    assert _uri(tmp_path / "test_clamp.py") not in editor.docs
    assert editor.applied == []


async def test_a_failed_job_leaves_no_empty_module_behind(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    # The editor creates the module (CreateFile), then refuses every edit: the job fails, and
    # the empty file made for it is gone.
    editor = await make_editor(model=False, opens_missing=False, creates_files=True)
    real = editor.on_apply_edit

    def refuse_text(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        changes = params.edit.document_changes or []
        if changes and all(isinstance(c, types.CreateFile) for c in changes):
            for change in changes:
                assert isinstance(change, types.CreateFile)
                path = Path(str(tmp_path / "test_clamp.py"))
                path.write_text("")  # an editor that creates the file on disk, empty
            return real(params)
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="refused")

    editor.client.protocol.fm.features[types.WORKSPACE_APPLY_EDIT] = refuse_text
    record = await _write_tests(editor, tmp_path / "clamp.py")
    assert record["state"] == "failed", record
    assert not (tmp_path / "test_clamp.py").exists()


async def test_a_module_shown_but_never_reported_gets_its_tests_in_its_buffer_not_on_disk(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    # An editor that shows the new module but never reports it open to fastedit (its buffer
    # is attached to another server): the file behind that buffer is never written.
    editor = await make_editor(model=False)
    test_uri = _uri(tmp_path / "test_clamp.py")

    def show_silently(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
        editor.docs[params.uri] = EditorDocument(params.uri, "")  # no didOpen
        return types.ShowDocumentResult(success=True)

    editor.client.protocol.fm.features[types.WINDOW_SHOW_DOCUMENT] = show_silently
    record = await _write_tests(editor, tmp_path / "clamp.py")
    assert record["state"] == "done", record
    assert "sent to the editor's buffer of test_clamp.py" in record["reason"], record
    assert "assert clamp(5, 0, 3) == 3" in editor.text(test_uri)
    assert not (tmp_path / "test_clamp.py").exists()
