"""The names check through the real server: a Python draft calling a function defined nowhere
lands flagged in fast mode (``verification.checks`` records which check failed; the warning sits
on the name; the status says it) and escalates in auto mode; the follow-up request names it."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

URI = "file:///tmp/fastedit-e2e/names/config.py"
TEXT = (
    "import json\n\n\ndef read_config(path):\n    with open(path) as handle:\n"
    "        return json.load(handle)\n\n\ndef main(path):\n    @\n"
)
BAD = "config = load_config(path)\n    return config"
GOOD = "config = read_config(path)\n    return config"


def _open(editor: Editor) -> tuple[str, int]:
    cursor = TEXT.index("@")
    text = TEXT.replace("@", "", 1)
    editor.open(URI, text, language_id="python")
    return text, cursor


async def _final_status(editor: Editor, job_id: str) -> dict[str, Any]:
    while True:
        for status in reversed(editor.statuses):
            job = status.get("job") or {}
            if job.get("jobId") == job_id and job.get("state") != "running":
                return dict(job)
        await editor.next_event()


async def _complete(editor: Editor, cursor: int) -> dict[str, Any]:
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, cursor)}
    )
    return await _final_status(editor, record["jobId"])


def _fastedit_diagnostics(editor: Editor) -> list[types.Diagnostic]:
    return [d for d in editor.client.diagnostics.get(URI, []) if d.source == "fastedit"]


async def test_a_hallucinated_name_lands_flagged_on_the_name_in_fast_mode(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"mode": "fast"})
    text, cursor = _open(editor)
    stub.script(Answer(text=BAD), Answer(text=BAD))
    record = await _complete(editor, cursor)
    assert record["state"] == "done" and record["escalated"] is False, record
    assert editor.text(URI) == text[:cursor] + BAD + text[cursor:]
    verification = record["verification"]
    assert verification["ok"] is False
    assert verification["details"] == "names check: line 10: 'load_config' is not defined"
    checks = {c["name"]: c for c in verification["checks"]}
    assert checks["parse"]["ok"] is True and checks["names"]["ok"] is False
    assert checks["names"]["symbol"] == "load_config" and checks["names"]["ms"] >= 0
    # The second request named the name, not a syntax error.
    second = stub.requests[1].body["messages"][-1]["content"]
    assert "'load_config' is not defined" in second and "does not parse" not in second
    # The warning sits on the name.
    (diagnostic,) = _fastedit_diagnostics(editor)
    line = text[:cursor].count("\n")
    column = cursor - (text.rfind("\n", 0, cursor) + 1) + BAD.index("load_config")
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (line, column)
    assert diagnostic.range.end == types.Position(line=line, character=column + len("load_config"))
    assert "names check" in diagnostic.message and "load_config" in diagnostic.message


async def test_a_hallucinated_name_escalates_in_auto_mode(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"mode": "auto"})
    text, cursor = _open(editor)
    stub.script(Answer(text=BAD), Answer(text=BAD), Answer(text=GOOD))
    record = await _complete(editor, cursor)
    assert record["state"] == "done" and record["escalated"] is True, record
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
        ("standard", True),
    ]
    assert editor.text(URI) == text[:cursor] + GOOD + text[cursor:]
    names = [c for c in record["verification"]["checks"] if c["name"] == "names"]
    assert names and names[0]["ok"] is True
    assert _fastedit_diagnostics(editor) == []


def _weighted(name: str, value: str = "value") -> str:
    return (
        f"def {name}(rows):\n    total = 0\n    for weight, {value} in rows:\n"
        f"        total += weight * {value}\n    return total\n\n\n"
    )


async def test_an_offline_completion_reading_an_undeclared_name_is_not_offered(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(
        model=False, inline=True, init_options={"completionDeadlineMs": 20000}
    )
    uri = "file:///tmp/fastedit-e2e/names/offline.py"
    head = _weighted("first") + _weighted("second")
    # Here the loop names its item ``amount``: the other functions' "ght * value" would read
    # a name this function does not have.
    text = head + "def third(rows):\n    total = 0\n    for weight, amount in rows:\n"
    text += "        total += wei\n"
    editor.open(uri, text, language_id="python")
    cursor = text.index("total += wei\n") + len("total += wei")
    result = await editor.inline_completion(uri, cursor, automatic=False)
    items = [] if result is None else (result.items if hasattr(result, "items") else result)
    assert [item.insert_text for item in items] == []
    # The same cut where the name exists is offered (the engine is not just silent).
    other = "file:///tmp/fastedit-e2e/names/offline_good.py"
    good = head + "def third(rows):\n    total = 0\n    for weight, value in rows:\n"
    good += "        total += wei\n"
    editor.open(other, good, language_id="python")
    cursor = good.index("total += wei\n") + len("total += wei")
    result = await editor.inline_completion(other, cursor, automatic=False)
    items = [] if result is None else (result.items if hasattr(result, "items") else result)
    assert [item.insert_text for item in items] == ["ght * value"]
    assert stub.requests == []
