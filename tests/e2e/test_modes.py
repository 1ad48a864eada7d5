"""Modes, escalation, retry and the speed shown to the user, through the real server."""

from __future__ import annotations

from lsprotocol import types

from fastedit_lsp.stub import Answer, StubModelServer

from .harness import Editor

URI = "file:///tmp/fastedit-e2e/modes.py"

REGEX_DOC = """import re

# regex: ISO date
#   match: 2024-01-31
#   match: 1999-12-01
#   reject: 2024-1-31

print(1)
"""


async def _complete(editor: Editor) -> dict[str, object]:
    record: dict[str, object] = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 0, "character": 4}}
    )
    return record


async def test_toggle_and_set_mode_change_the_model_the_next_job_uses(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "x = \n")
    assert await editor.command("fastedit.setMode", {"mode": "standard"}) == {"mode": "standard"}
    await _complete(editor)
    assert await editor.command("fastedit.toggleFastMode") == {"mode": "fast"}
    await _complete(editor)
    assert await editor.command("fastedit.toggleFastMode") == {"mode": "standard"}
    await _complete(editor)
    models = [r.body["model"] for r in stub.requests]
    assert models == ["stub-strong", "stub-fast", "stub-strong"]
    modes = [s["mode"] for s in editor.statuses if "job" not in s]
    assert modes[-3:] == ["standard", "fast", "standard"]


async def test_a_failing_fast_draft_is_escalated_to_standard_in_auto_mode(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, REGEX_DOC)
    here = {"line": 2, "character": 0}
    stub.script(Answer(text="\\d+"), Answer(text="\\d{4}-\\d{2}-\\d{2}"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    assert record["escalated"] is True
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("standard", True),
    ]
    assert record["verification"]["ok"] is True
    assert "escalated to standard" in record["reason"]
    expected = REGEX_DOC.replace(
        "#   reject: 2024-1-31\n",
        '#   reject: 2024-1-31\nISO_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")\n',
    )
    assert editor.text(URI) == expected
    # One revert restores what the user had.
    assert await editor.command("fastedit.revert", {"jobId": record["jobId"]}) == {"reverted": True}
    assert editor.text(URI) == REGEX_DOC


async def test_in_fast_mode_a_failing_draft_is_not_escalated(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, REGEX_DOC)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    here = {"line": 2, "character": 0}
    stub.script(Answer(text="\\d+"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["escalated"] is False and record["verification"]["ok"] is False
    assert len(stub.requests) == 1
    # Retry with the standard model replaces the job's own text.
    stub.script(Answer(text="\\d{4}-\\d{2}-\\d{2}"))
    started = await editor.command("fastedit.retry", {"jobId": record["jobId"]})
    retried = await editor.wait_job(started["jobId"])
    assert retried["state"] == "done" and retried["route"] == "standard"
    assert retried["verification"]["ok"] is True
    assert editor.text(URI).count("ISO_DATE = re.compile(") == 1
    assert 'ISO_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")' in editor.text(URI)
    assert await editor.command("fastedit.revert", {"jobId": retried["jobId"]}) == {
        "reverted": True
    }
    assert editor.text(URI) == REGEX_DOC


async def test_speed_is_shown_in_progress_and_kept_per_route(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "x = \n")
    await editor.command("fastedit.setMode", {"mode": "fast"})
    stub.default = Answer(text="1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9", tps=300)
    for _ in range(3):
        record = await _complete(editor)
        assert record["state"] == "done"
        await editor.command("fastedit.revert", {"jobId": record["jobId"]})
    status = await editor.command("fastedit.status")
    fast = status["speed"]["fast"]
    assert fast["jobs"] == 3
    assert fast["tokensPerSecond"]["p50"] > 0 and fast["ttftMs"]["p90"] >= fast["ttftMs"]["p50"]
    ends = [
        report.message
        for reports in editor.client.progress_reports.values()
        for report in reports
        if isinstance(report, types.WorkDoneProgressEnd)
    ]
    assert any(m and "⚡ fast · stub-fast · " in m and "tok/s" in m for m in ends), ends


async def test_auto_routing_sends_a_regex_fast_and_a_large_multi_function_edit_to_standard(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, REGEX_DOC)
    here = {"line": 2, "character": 0}
    stub.script(Answer(text="\\d{4}-\\d{2}-\\d{2}"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["route"] == "fast" and record["reason"].startswith("fast: regex")
    functions = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(4))
    other = "file:///tmp/fastedit-e2e/modes-functions.py"
    editor.open(other, functions)
    stub.script(Answer(text=functions.replace("return x", "return -x")))
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 16, "character": 0}}
    record = await editor.run(
        "fastedit.editSelection", {"uri": other, "range": rng, "instruction": "negate x"}
    )
    assert record["route"] == "standard" and record["model"] == "stub-strong"
    assert "4 definitions in the selection (> 1)" in record["reason"]


async def test_in_fast_mode_a_failed_draft_offers_retry_as_a_quick_fix(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, REGEX_DOC)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    here = {"line": 2, "character": 0}
    stub.script(Answer(text="\\d+"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["verification"]["ok"] is False
    line = editor.text(URI).splitlines().index('ISO_DATE = re.compile(r"\\d+")')
    at = types.Position(line=line, character=3)
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(start=at, end=at),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix]),
        )
    )
    assert actions is not None and len(actions) == 1
    action = actions[0]
    assert isinstance(action, types.CodeAction) and action.command is not None
    assert action.title.startswith("Retry with the standard model")
    stub.script(Answer(text="\\d{4}-\\d{2}-\\d{2}"))
    started = await editor.command(action.command.command, *(action.command.arguments or []))
    retried = await editor.wait_job(started["jobId"])
    assert retried["route"] == "standard" and retried["verification"]["ok"] is True
