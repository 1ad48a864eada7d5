"""Next-edit suggestions from the model (``nextEdit.useModel``), with the stub standing in for
it: the prompt carries the user's edit history, the rewrite becomes one minimal edit, a stale
answer is dropped, a superseded request closes its model stream, and no model request goes out
while a job streams into the document or when the provider's rate-limit headroom is low."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.uris import from_fs_path

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

SOURCE = """def total(items, scale):
    count = 0
    for item in items:
        count += item * scale
    log(count, "sum")
    return count
"""
#: What the stub's model answers: the window (here the whole document) with the next edit.
EDITED = SOURCE.replace("count = 0", "count = 1")
REWRITE = "<updated>\n" + EDITED.replace('"sum"', '"total"') + "</updated>"


@pytest.fixture
async def editor(make_editor: MakeEditor) -> Editor:
    return await make_editor(init_options={"nextEdit": {"useModel": True, "debounceMs": 0}})


def _uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


def _edit_a_number(editor: Editor, uri: str) -> None:
    """An edit the offline engine has nothing to carry on from: count = 0 -> count = 1."""
    at = editor.docs[uri].offset(1, 12, editor.encoding)
    editor.delete(uri, at, at + 1)
    editor.type(uri, at, "1")
    editor.flush()


def _ask(editor: Editor, uri: str, line: int = 1, character: int = 13) -> asyncio.Future[Any]:
    here = {"line": line, "character": character}
    return asyncio.ensure_future(
        editor.command("fastedit.nextEdit", {"uri": uri, "position": here})
    )


async def test_the_models_rewrite_becomes_a_minimal_edit_and_the_prompt_carries_the_history(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "model.py")
    editor.open(uri, SOURCE)
    _edit_a_number(editor, uri)
    stub.script(Answer(text=REWRITE))
    answer = await _ask(editor, uri)
    (edit,) = answer["edits"]
    assert edit["text"] == "total"
    assert edit["range"] == {
        "start": {"line": 4, "character": 16},
        "end": {"line": 4, "character": 19},
    }
    (request,) = stub.requests
    prompt = request.body["messages"][-1]["content"]
    assert "<original>\n    count = 0\n</original>\n<updated>\n    count = 1\n</updated>" in prompt
    assert "    count = 1<|cursor|>" in prompt
    assert editor.applied == []  # a suggestion is never applied by the server
    # The same version and line: answered from the cache, no second model request.
    again = await _ask(editor, uri)
    assert again["edits"][0]["text"] == "total" and len(stub.requests) == 1


async def test_a_superseded_request_closes_its_model_stream(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "superseded.py")
    editor.open(uri, SOURCE)
    _edit_a_number(editor, uri)
    stub.script(Answer(text=REWRITE, stall_after=2), Answer(text=REWRITE))
    first = _ask(editor, uri)
    (stalled,) = await stub.wait_for_requests(1)
    second = await _ask(editor, uri, 1, 12)
    assert second["edits"][0]["text"] == "total"
    assert await first == {"edits": []}
    await stub.wait_closed(stalled)
    assert stalled.client_closed


async def test_an_answer_for_a_stale_version_is_dropped(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "stale.py")
    editor.open(uri, SOURCE)
    _edit_a_number(editor, uri)
    stub.script(Answer(text=REWRITE, ttft=0.5))
    pending = _ask(editor, uri)
    await stub.wait_for_requests(1)
    editor.type(uri, editor.docs[uri].offset(5, 0, editor.encoding), "# ")
    editor.flush()
    assert await pending == {"edits": []}


async def test_no_model_request_while_a_job_streams_into_the_document(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "busy.py")
    editor.open(uri, SOURCE)
    _edit_a_number(editor, uri)
    stub.script(Answer(text="\n".join(f"x{i} = {i}" for i in range(400)), tps=20))
    end = editor.docs[uri].offset(6, 0, editor.encoding)
    started = await editor.command(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, end)}
    )
    await stub.wait_for_requests(1)
    assert await _ask(editor, uri) == {"edits": []}
    assert len(stub.requests) == 1  # the job's only
    status = await editor.command("fastedit.status")
    assert "job" in status["nextEdit"]["modelSkipped"]
    await editor.command("fastedit.cancel", {"jobId": started["jobId"]})


async def test_a_provider_low_on_rate_limit_headroom_gets_no_suggestion_requests(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "headroom.py")
    editor.open(uri, SOURCE)
    _edit_a_number(editor, uri)
    low = {"x-ratelimit-remaining-requests": "10", "x-ratelimit-limit-requests": "100"}
    stub.script(Answer(text=REWRITE, headers=low))
    assert (await _ask(editor, uri))["edits"]
    editor.type(uri, editor.docs[uri].offset(5, 0, editor.encoding), "# ")
    editor.flush()
    assert await _ask(editor, uri, 5, 2) == {"edits": []}
    assert len(stub.requests) == 1
    status = await editor.command("fastedit.status")
    assert "headroom is 10%" in status["nextEdit"]["modelSkipped"]
    assert status["breakers"] == [] or all(b["state"] == "closed" for b in status["breakers"])


async def test_after_an_accept_the_next_suggestion_is_prefetched(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "prefetch.py")
    editor.open(uri, SOURCE)
    _edit_a_number(editor, uri)
    accepted = EDITED.replace('"sum"', '"total"')
    following = accepted.replace("    return count", "    return count or 0")
    stub.script(Answer(text=REWRITE), Answer(text=f"<updated>\n{following}</updated>"))
    (edit,) = (await _ask(editor, uri))["edits"]
    start = editor.docs[uri].offset(4, 16, editor.encoding)
    editor._change(uri, start, start + 3, edit["text"])  # the editor applies it on the key
    await editor.command("fastedit.acceptNextEdit", edit["command"]["arguments"][0])
    await stub.wait_for_requests(2)  # asked before the editor asks
    (following_edit,) = (await _ask(editor, uri, 4, 16))["edits"]
    assert following_edit["text"] == " or 0"
    assert len(stub.requests) == 2  # answered from the prefetched answer
    status = await editor.command("fastedit.status")
    assert status["nextEdit"]["accepted"] == 1


async def test_a_dismissed_suggestion_is_counted(
    editor: Editor, stub: StubModelServer, tmp_path: Path
) -> None:
    uri = _uri(tmp_path / "dismiss.py")
    editor.open(uri, SOURCE)
    _edit_a_number(editor, uri)
    stub.script(Answer(text=REWRITE))
    (edit,) = (await _ask(editor, uri))["edits"]
    offer_id = edit["command"]["arguments"][0]
    assert await editor.command("fastedit.dismissNextEdit", {"id": offer_id}) == {"known": True}
    assert await editor.command("fastedit.dismissNextEdit", "ne-unknown") == {"known": False}
    status = (await editor.command("fastedit.status"))["nextEdit"]
    assert (status["dismissed"], status["accepted"], status["last"]["state"]) == (
        1,
        0,
        "dismissed",
    )
    assert editor.text(uri) == EDITED  # nothing applied
