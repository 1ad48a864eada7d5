"""Revert after the user undid and redid a job's text: decided by the region's text, through the
real server (issue 30, part 5). Neovim's one-step undo of a job re-makes the job's text as the
last undo step (a delete, then the text again); undo and redo then report the region replaced
by the original and back. None of that may block revert; text in the region that is not the
job's must, naming the line, and nothing of the user's is ever deleted."""

from __future__ import annotations

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support import shared_server
from tests.support.harness import Editor

# One server and stub for the module, reset between tests (tests/support/shared_server.py).
pytestmark = pytest.mark.asyncio(loop_scope="module")
module_stub, module_editor = shared_server.module_stub, shared_server.module_editor
stub, editor = shared_server.stub, shared_server.editor

URI = "file:///tmp/fastedit-e2e/undo.py"
HEAD, SELECTION, TAIL = "import os\n\n", "def f(x):\n    return x\n", "\n\nprint(f(2))\n"
REWRITE = "def f(x: int) -> int:\n    return x * 2\n"


async def _rewritten(editor: Editor, stub: StubModelServer) -> str:
    editor.open(URI, HEAD + SELECTION + TAIL)
    stub.script(Answer(text=f"```python\n{REWRITE}```\n", tps=300))
    start, end = len(HEAD), len(HEAD) + len(SELECTION)
    record = await editor.run(
        "fastedit.editSelection",
        {
            "uri": URI,
            "range": {"start": editor.pos(URI, start), "end": editor.pos(URI, end)},
            "instruction": "add types and double it",
        },
    )
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + REWRITE + TAIL
    job_id: str = record["jobId"]
    return job_id


def _replace(editor: Editor, start: int, end: int, text: str) -> None:
    """What an editor's undo or redo reports: the range replaced (a delete, then the text)."""
    editor.delete(URI, start, end)
    if text:
        editor.type(URI, start, text)


async def test_undo_and_redo_of_a_jobs_text_leave_revert_possible_and_exact(
    editor: Editor, stub: StubModelServer
) -> None:
    job_id = await _rewritten(editor, stub)
    at = len(HEAD)
    # Neovim's regions.lua: the job's text re-made as one undo step (delete, insert again).
    _replace(editor, at, at + len(REWRITE), REWRITE)
    # u: the original back (the editor trims the common prefix and suffix); <C-r>: the job's.
    prefix = len("def f(x")
    _replace(editor, at + prefix, at + len(REWRITE) - 1, SELECTION[prefix:-1])
    assert editor.text(URI) == HEAD + SELECTION + TAIL
    _replace(editor, at + prefix, at + len(SELECTION) - 1, REWRITE[prefix:-1])
    assert editor.text(URI) == HEAD + REWRITE + TAIL
    # Typing elsewhere, before and after, is kept.
    editor.type(URI, 0, "# mine\n")
    editor.type(URI, len(editor.text(URI)), "# end\n")
    result = await editor.command("fastedit.revert", {"jobId": job_id})
    assert result == {"reverted": True}, result
    assert editor.text(URI) == "# mine\n" + HEAD + SELECTION + TAIL + "# end\n"


async def test_revert_refuses_when_the_regions_text_differs_naming_the_line(
    editor: Editor, stub: StubModelServer
) -> None:
    job_id = await _rewritten(editor, stub)
    at = len(HEAD) + len("def f(x: int) -> int:\n    return ")
    # u then a different change: the region holds text the job did not write.
    _replace(editor, len(HEAD), len(HEAD) + len(REWRITE), REWRITE)
    editor.type(URI, at, "mine + ")
    typed = editor.text(URI)
    result = await editor.command("fastedit.revert", {"jobId": job_id})
    assert result["reverted"] is False
    assert "line 3" in result["reason"], result
    assert editor.text(URI) == typed
    # Undo of the typing makes it the job's text again: revert goes ahead.
    editor.delete(URI, at, at + len("mine + "))
    assert await editor.command("fastedit.revert", {"jobId": job_id}) == {"reverted": True}
    assert editor.text(URI) == HEAD + SELECTION + TAIL


async def test_a_stream_undone_and_redone_as_whole_steps_still_reverts(
    editor: Editor, stub: StubModelServer
) -> None:
    text = "value = \nnext_line = 2\n"
    editor.open(URI, text)
    stub.script(Answer(text="1 + 2", tps=300))
    cursor = len("value = ")
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, cursor)}
    )
    assert record["state"] == "done", record
    done = editor.text(URI)
    inserted = done[cursor : len(done) - len(text) + cursor]
    assert inserted
    editor.delete(URI, cursor, cursor + len(inserted))
    editor.type(URI, cursor, inserted)
    assert await editor.command("fastedit.revert", {"jobId": record["jobId"]}) == {"reverted": True}
    assert editor.text(URI) == text
