"""Code actions, what the model is sent (and never sent), model discovery and status."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support import shared_server
from tests.support.harness import Editor
from tests.support.shared_server import MakeEditor

# One server and stub for the module, reset between tests (tests/support/shared_server.py);
# tests about start-up or settings at initialize still get their own from make_editor.
pytestmark = pytest.mark.asyncio(loop_scope="module")
module_stub, module_editor = shared_server.module_stub, shared_server.module_editor
stub, editor, make_editor = shared_server.stub, shared_server.editor, shared_server.make_editor

URI = "file:///tmp/fastedit-e2e/actions.py"


async def test_code_action_offers_complete_the_rest_without_calling_the_model(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "def f():\n    return \n")
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(
                start=types.Position(line=1, character=11),
                end=types.Position(line=1, character=11),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions is not None
    commands = [a.command if isinstance(a, types.CodeAction) else a for a in actions]
    complete = [c for c in commands if c is not None and c.command == "fastedit.completeRest"]
    assert len(complete) == 1
    assert list(complete[0].arguments or []) == [
        {"uri": URI, "position": {"line": 1, "character": 11}}
    ]
    assert stub.requests == []
    # The command the action carries runs as is.
    stub.script(Answer(text="42"))
    started = await editor.command(complete[0].command, *complete[0].arguments)
    record = await editor.wait_job(started["jobId"])
    assert record["state"] == "done"
    assert editor.text(URI) == "def f():\n    return 42\n"


async def test_the_model_gets_prefix_and_suffix_around_the_cursor(
    editor: Editor, stub: StubModelServer
) -> None:
    text = "import math\n\ndef area(r):\n    return \n\nprint(area(2))\n"
    editor.open(URI, text)
    cursor = text.index("return ") + len("return ")
    stub.script(Answer(text="math.pi * r ** 2"))
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, cursor)}
    )
    assert record["state"] == "done"
    body = stub.requests[-1].body
    prompt = body["messages"][-1]["content"]
    assert "import math\n\ndef area(r):\n    return <|CURSOR|>\n\nprint(area(2))" in prompt
    assert body["stream"] is True
    assert body["model"] == "stub-fast"
    # A tight output cap goes with every request.
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 512


@pytest.mark.parametrize("name", [".env", "server.pem", "id_rsa"])
async def test_files_matching_context_exclude_are_never_sent_to_a_model(
    editor: Editor, stub: StubModelServer, name: str
) -> None:
    uri = f"file:///tmp/fastedit-e2e/{name}"
    editor.open(uri, "SECRET_TOKEN=abc\n", language_id="plaintext")
    record = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": {"line": 1, "character": 0}}
    )
    assert record["state"] == "failed"
    assert "context.exclude" in record["error"]
    assert stub.requests == []
    assert editor.text(uri) == "SECRET_TOKEN=abc\n"


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "config.py").write_text("TOKEN = 'x'\n")
    (tmp_path / "main.py").write_text("x = \n")
    return tmp_path


async def test_git_ignored_files_are_never_sent_to_a_model(
    editor: Editor, stub: StubModelServer, git_repo: Path
) -> None:
    ignored = git_repo / "generated" / "config.py"
    uri = from_fs_path(str(ignored))
    assert uri is not None
    editor.open(uri, "TOKEN = 'x'\n")
    record = await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": {"line": 1, "character": 0}}
    )
    assert record["state"] == "failed" and "<git-ignored>" in record["error"]
    assert stub.requests == []
    tracked = git_repo / "main.py"
    tracked_uri = from_fs_path(str(tracked))
    assert tracked_uri is not None
    editor.open(tracked_uri, "x = \n")
    stub.script(Answer(text="1"))
    record = await editor.run(
        "fastedit.completeRest", {"uri": tracked_uri, "position": {"line": 0, "character": 4}}
    )
    assert record["state"] == "done"


async def test_a_profile_without_a_model_uses_the_first_model_the_server_lists(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(model=False, env={"FASTEDIT_FAST_BASE_URL": stub.base_url})
    editor.open(URI, "x = \n")
    stub.script(Answer(text="1"))
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 0, "character": 4}}
    )
    assert record["state"] == "done"
    assert record["model"] == stub.models[0]
    assert [r.path for r in stub.requests] == ["/v1/models", "/v1/chat/completions"]


async def test_without_a_model_the_offline_engine_answers_and_says_why(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(model=False)
    editor.open(URI, "x = \n")
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 0, "character": 4}}
    )
    assert record["state"] == "done" and record["route"] == "local"
    assert "no provider configured" in record["reason"]
    assert any("offline engine" in m.message for m in editor.client.messages)
    record = await editor.run(
        "fastedit.editSelection",
        {
            "uri": URI,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}},
            "instruction": "rename",
        },
    )
    assert record["state"] == "failed" and "needs a model" in record["error"]
    assert editor.text(URI) == "x = \n"
    assert stub.requests == []


async def test_status_shows_route_model_and_speed_while_streaming_and_at_the_end(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor()  # its own server: the first status is the one after initialize
    editor.open(URI, "x = \n")
    stub.script(Answer(text="1 + 2 + 3 + 4 + 5 + 6 + 7 + 8", tps=60))
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 0, "character": 4}}
    )
    assert record["state"] == "done"
    assert record["metrics"]["tokens"] > 0 and record["metrics"]["tokensPerSecond"] > 0
    assert record["metrics"]["ttftMs"] is not None
    job_statuses = [
        s["job"] for s in editor.statuses if s.get("job", {}).get("jobId") == record["jobId"]
    ]
    assert [s["state"] for s in job_statuses][-1] == "done"
    assert "running" in [s["state"] for s in job_statuses]
    assert all(s["model"] in ("", "stub-fast") for s in job_statuses)
    assert editor.statuses[0] == {"mode": "auto"}


async def test_no_progress_is_sent_to_a_client_that_does_not_show_it(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(progress=False)
    editor.open(URI, "x = \n")
    stub.script(Answer(text="1 + 1", tps=500))
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 0, "character": 4}}
    )
    assert record["state"] == "done"
    assert editor.client.progress_reports == {}


async def test_text_that_only_repeats_what_follows_the_cursor_is_dropped(
    editor: Editor, stub: StubModelServer
) -> None:
    text = "total = add(\n"
    # The star import: add, a and b may come from it (the names check does not flag them).
    editor.open(URI, "from fixtures import *\ntotal = add()\nprint(total)\n")
    stub.script(Answer(text="```python\na, b)\nprint(total)\n```", tps=500))
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 1, "character": len(text) - 1}}
    )
    assert record["state"] == "done"
    assert editor.text(URI) == "from fixtures import *\ntotal = add(a, b)\nprint(total)\n"


async def _titles(editor: Editor, uri: str, line: int, only: list[str] | None = None) -> list[str]:
    at = types.Position(line=line, character=0)
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=at, end=at),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    return [a.title for a in actions or []]


async def test_code_actions_are_offered_where_they_apply_without_calling_a_model(
    editor: Editor, stub: StubModelServer
) -> None:
    doc = (
        "import re\n\n# regex: hex colour\n# match: #a1b2c3\n# reject: a1b2c3\n\n\n"
        "class Shape:\n    def area(self) -> float:\n        return 0.0\n\n\n"
        "def clamp(x: int) -> int:\n    return max(0, x)\n"
    )
    editor.open(URI, doc)
    lines = doc.splitlines()
    assert "Generate regex: hex colour (fastedit)" in await _titles(editor, URI, 3)
    assert "Write tests for Shape.area (fastedit)" in await _titles(
        editor, URI, lines.index("        return 0.0")
    )
    assert "Write tests for clamp (fastedit)" in await _titles(
        editor, URI, lines.index("def clamp(x: int) -> int:")
    )
    blank = await _titles(editor, URI, 1)
    assert blank == ["Complete the rest (fastedit)"]
    broken = "file:///tmp/fastedit-e2e/broken-actions.py"
    editor.open(broken, "x = 1\n\n\n\n\nif x\n    pass\n")
    assert "Fix syntax error: expected ':' (fastedit)" in await _titles(
        editor, broken, 6, ["quickfix"]
    )
    assert await _titles(editor, broken, 0, ["quickfix"]) == []
    assert stub.requests == []
