"""Modes, escalation, retry and the speed shown to the user, through the real server."""

from __future__ import annotations

from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

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


async def test_a_failing_fast_regex_is_escalated_and_never_lands_in_auto_mode(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, REGEX_DOC)
    here = {"line": 2, "character": 0}
    # The fast model is wrong twice (the second time it was told what failed); standard is right.
    stub.script(Answer(text="\\d+"), Answer(text="\\d+-\\d+"), Answer(text="\\d{4}-\\d{2}-\\d{2}"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done", record
    assert record["escalated"] is True
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
        ("standard", True),
    ]
    assert "2024-1-31" in str(stub.requests[1].body["messages"])  # told what failed
    assert record["verification"]["ok"] is True
    expected = REGEX_DOC.replace(
        "#   reject: 2024-1-31\n",
        '#   reject: 2024-1-31\nISO_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")\n',
    )
    assert editor.text(URI) == expected
    # A failing pattern never reached the buffer.
    assert all("\\d+" not in text for _, _, _, text in editor.applied)
    assert await editor.command("fastedit.revert", {"jobId": record["jobId"]}) == {"reverted": True}
    assert editor.text(URI) == REGEX_DOC


async def test_in_fast_mode_wrong_regexes_fall_back_to_the_local_synthesiser(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, REGEX_DOC)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    here = {"line": 2, "character": 0}
    stub.script(Answer(text="\\d+"), Answer(text="[0-9]+"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done" and record["escalated"] is False
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
        ("local", True),
    ]
    assert len(stub.requests) == 2  # standard was not asked: that is what retry is for
    assert "ISO_DATE = re.compile(" in editor.text(URI)
    # Retry with the standard model replaces the job's own text.
    stub.script(Answer(text="\\d{4}-\\d{2}-\\d{2}"))
    started = await editor.command("fastedit.retry", {"jobId": record["jobId"]})
    retried = await editor.wait_job(started["jobId"])
    assert retried["state"] == "done" and retried["route"] == "standard"
    assert editor.text(URI).count("ISO_DATE = re.compile(") == 1
    assert 'ISO_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")' in editor.text(URI)
    assert await editor.command("fastedit.revert", {"jobId": retried["jobId"]}) == {
        "reverted": True
    }
    assert editor.text(URI) == REGEX_DOC


async def test_without_the_local_fallback_wrong_regexes_fail_and_leave_the_region_alone(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"failover": ["fast", "standard"], "mode": "fast"})
    editor.open(URI, REGEX_DOC)
    here = {"line": 2, "character": 0}
    stub.script(Answer(text="\\d+"), Answer(text="\\d+"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "failed"
    assert "failed verification" in record["error"] and "2024-01-31" in record["error"]
    assert editor.text(URI) == REGEX_DOC and editor.applied == []


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


async def test_a_fast_fix_that_fails_verification_offers_retry_as_a_quick_fix(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"failover": ["fast", "standard"], "mode": "fast"})
    broken = "x = 1\nif x\n    print(x)\n"
    editor.open(URI, broken)
    # Twice a "fix" that still does not parse: rejected before it touches the buffer.
    stub.script(Answer(text="x = 1\nif x\n    print(x)"), Answer(text="x = 1\nif x\n    print(x)"))
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}
    record = await editor.run("fastedit.fixSyntax", {"uri": URI, "range": everything})
    assert record["state"] == "failed" and "still a syntax error" in record["error"]
    assert editor.text(URI) == broken and editor.applied == []
    at = types.Position(line=1, character=1)
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(start=at, end=at),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix]),
        )
    )
    titles = [a.title for a in actions or []]
    retry = [a for a in actions or [] if a.title.startswith("Retry with the standard model")]
    assert len(retry) == 1, titles
    action = retry[0]
    assert isinstance(action, types.CodeAction) and action.command is not None
    stub.script(Answer(text="x = 1\nif x:\n    print(x)"))
    started = await editor.command(action.command.command, *(action.command.arguments or []))
    retried = await editor.wait_job(started["jobId"])
    assert retried["route"] == "standard" and retried["verification"]["ok"] is True
    assert editor.text(URI) == "x = 1\nif x:\n    print(x)\n"


async def test_a_model_fix_reaching_outside_the_error_region_is_rejected_for_the_offline_repair(
    editor: Editor, stub: StubModelServer
) -> None:
    doc = "import os\n\n\n\n\ndef f(x)\n    return x\n\n\n\n\nprint(os.sep)\n"
    editor.open(URI, doc)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    # The model rewrites more than it was given: it repeats the line after the region.
    outside = "def f(x):\n    return x\n\n\n\n\nprint(os.sep)"
    stub.script(Answer(text=outside), Answer(text=outside))
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 12, "character": 0}}
    record = await editor.run("fastedit.fixSyntax", {"uri": URI, "range": everything})
    assert record["state"] == "done", record
    assert record["route"] == "local" and record["verification"]["ok"] is True
    assert "reaches outside" in str(record["attempts"][0]["verification"])
    assert editor.text(URI) == doc.replace("def f(x)\n", "def f(x):\n")


async def test_many_diagnostics_in_range_route_a_fix_to_standard(
    editor: Editor, stub: StubModelServer
) -> None:
    broken = "x = 1\nif x\n    print(x)\n"
    editor.open(URI, broken)
    stub.script(Answer(text="x = 1\nif x:\n    print(x)"))
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}
    record = await editor.run(
        "fastedit.fixSyntax", {"uri": URI, "range": everything, "diagnostics": 5}
    )
    assert record["state"] == "done" and record["route"] == "standard", record
    assert "5 diagnostics in range (> 3)" in record["reason"]
    assert editor.text(URI) == "x = 1\nif x:\n    print(x)\n"


async def test_a_wrong_regex_then_a_right_one_lands_the_right_one(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, REGEX_DOC)
    await editor.command("fastedit.setMode", {"mode": "fast"})
    here = {"line": 2, "character": 0}
    stub.script(Answer(text="\\d+"), Answer(text="\\d{4}-\\d{2}-\\d{2}"))
    record = await editor.run(
        "fastedit.generateRegex", {"uri": URI, "range": {"start": here, "end": here}}
    )
    assert record["state"] == "done" and record["route"] == "fast"
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", True),
    ]
    assert record["verification"]["ok"] is True
    assert "1/1 negatives rejected" in record["verification"]["details"]
    assert editor.text(URI) == REGEX_DOC.replace(
        "#   reject: 2024-1-31\n",
        '#   reject: 2024-1-31\nISO_DATE = re.compile(r"\\d{4}-\\d{2}-\\d{2}")\n',
    )
