"""The parse check through the real server: in JavaScript, Go and Rust documents a fast draft
with an unbalanced brace is asked for again, then escalates in auto mode and lands flagged in
fast mode (job record, a ``fastedit`` warning diagnostic, "unverified" in the progress end and
the status); a good draft passes; escalation deletes only the job's own text.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import HANG_GUARD, Editor
from tests.support.leaks import at_rest

from .conftest import MakeEditor

DIAGNOSTICS = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS


@dataclass(frozen=True)
class Case:
    language_id: str
    uri: str
    text: str
    #: Where the cursor is (the text's first "@" is removed).
    good: str
    bad: str


CASES = {
    "javascript": Case(
        "javascript",
        "file:///tmp/fastedit-e2e/parse/app.js",
        "function add(a, b) {\n  @\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n",
        "return a + b;",
        "if (a) {\n    return a + b;",
    ),
    "go": Case(
        "go",
        "file:///tmp/fastedit-e2e/parse/main.go",
        "package main\n\nfunc add(a, b int) int {\n\t@\n}\n\nfunc sub(a, b int) int {\n"
        "\treturn a - b\n}\n",
        "return a + b",
        "if a > 0 {\n\t\treturn a + b",
    ),
    "c": Case(
        "c",
        "file:///tmp/fastedit-e2e/parse/add.c",
        "#include <stdio.h>\n\nint add(int a, int b) {\n    @\n}\n\nint sub(int a, int b) {\n"
        "    return a - b;\n}\n",
        "return a + b;",
        "if (a) {\n        return a + b;",
    ),
    "rust": Case(
        "rust",
        "file:///tmp/fastedit-e2e/parse/lib.rs",
        "fn add(a: i32, b: i32) -> i32 {\n    @\n}\n\nfn sub(a: i32, b: i32) -> i32 {\n"
        "    a - b\n}\n",
        "a + b",
        "if a > 0 {\n        a + b",
    ),
}


def _open(editor: Editor, case: Case) -> tuple[str, int]:
    cursor = case.text.index("@")
    text = case.text.replace("@", "", 1)
    editor.open(case.uri, text, language_id=case.language_id)
    return text, cursor


async def _complete(editor: Editor, case: Case, cursor: int) -> dict[str, Any]:
    record = await editor.run(
        "fastedit.completeRest", {"uri": case.uri, "position": editor.pos(case.uri, cursor)}
    )
    await _final_status(editor, record["jobId"])
    return record


async def _final_status(editor: Editor, job_id: str) -> dict[str, Any]:
    """The job's last ``fastedit/status`` (sent after its diagnostics and progress end)."""
    while True:
        for status in reversed(editor.statuses):
            job = status.get("job") or {}
            if job.get("jobId") == job_id and job.get("state") != "running":
                return dict(job)
        await editor.next_event()


async def _next_diagnostics(editor: Editor) -> asyncio.Future[Any]:
    """A future for the next publishDiagnostics, listening from now on."""
    # Listening from this call on: the protocol files the future before returning it.
    return editor.client.protocol.wait_for_notification_async(DIAGNOSTICS)


def _progress_ends(editor: Editor) -> list[str]:
    return [
        report.message or ""
        for reports in editor.client.progress_reports.values()
        for report in reports
        if isinstance(report, types.WorkDoneProgressEnd)
    ]


def _fastedit_diagnostics(editor: Editor, uri: str) -> list[types.Diagnostic]:
    return [d for d in editor.client.diagnostics.get(uri, []) if d.source == "fastedit"]


@pytest.mark.parametrize("language", sorted(CASES))
async def test_a_bad_fast_draft_lands_flagged_in_fast_mode_until_the_user_edits_it(
    make_editor: MakeEditor, stub: StubModelServer, language: str
) -> None:
    case = CASES[language]
    editor = await make_editor(init_options={"mode": "fast"})
    text, cursor = _open(editor, case)
    # The draft, and the answer to "that does not parse: ...": still unbalanced.
    stub.script(Answer(text=case.bad), Answer(text=case.bad))
    record = await _complete(editor, case, cursor)
    assert record["state"] == "done", record
    assert record["escalated"] is False
    assert editor.text(case.uri) == text[:cursor] + case.bad + text[cursor:]
    verification = record["verification"]
    assert verification["ok"] is False
    assert "syntax error" in verification["details"], verification
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
    ]
    # The second request told the model what the parser said.
    second = stub.requests[1].body["messages"]
    assert "does not parse" in second[-1]["content"] and "syntax error" in second[-1]["content"]
    # The status and the progress end say so.
    final = await _final_status(editor, record["jobId"])
    assert final["verification"]["ok"] is False
    assert any(m.startswith("unverified") for m in _progress_ends(editor)), _progress_ends(editor)
    # A warning on the draft's lines, from fastedit.
    (diagnostic,) = _fastedit_diagnostics(editor, case.uri)
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert "unverified" in diagnostic.message and "syntax error" in diagnostic.message
    first_line = text[:cursor].count("\n")
    assert diagnostic.range.start.line == first_line
    assert diagnostic.range.end.line == first_line + case.bad.count("\n")
    # The user edits inside the draft: the mark goes.
    cleared = await _next_diagnostics(editor)
    editor.type(case.uri, cursor + 1, "x")
    editor.flush()
    await asyncio.wait_for(cleared, HANG_GUARD)
    assert _fastedit_diagnostics(editor, case.uri) == []


@pytest.mark.parametrize("language", sorted(CASES))
async def test_reverting_a_flagged_draft_clears_its_mark(
    make_editor: MakeEditor, stub: StubModelServer, language: str
) -> None:
    case = CASES[language]
    editor = await make_editor(init_options={"mode": "fast"})
    text, cursor = _open(editor, case)
    stub.script(Answer(text=case.bad), Answer(text=case.bad))
    record = await _complete(editor, case, cursor)
    assert record["verification"]["ok"] is False
    assert len(_fastedit_diagnostics(editor, case.uri)) == 1
    cleared = await _next_diagnostics(editor)
    assert (await editor.command("fastedit.revert", {"jobId": record["jobId"]}))["reverted"]
    await asyncio.wait_for(cleared, HANG_GUARD)
    assert _fastedit_diagnostics(editor, case.uri) == []
    assert editor.text(case.uri) == text


@pytest.mark.parametrize("language", sorted(CASES))
async def test_a_bad_fast_draft_escalates_in_auto_mode_deleting_only_its_own_text(
    make_editor: MakeEditor, stub: StubModelServer, language: str
) -> None:
    case = CASES[language]
    editor = await make_editor(init_options={"mode": "auto"})
    text, cursor = _open(editor, case)
    # Fast twice unbalanced (the second time told why), then the standard model's answer.
    stub.script(Answer(text=case.bad), Answer(text=case.bad), Answer(text=case.good))
    record = await _complete(editor, case, cursor)
    assert record["state"] == "done", record
    assert record["escalated"] is True
    assert [(a["route"], a["verification"]["ok"]) for a in record["attempts"]] == [
        ("fast", False),
        ("fast", False),
        ("standard", True),
    ]
    assert [r.body["model"] for r in stub.requests] == ["stub-fast", "stub-fast", "stub-strong"]
    # Everything around the cursor is the user's, untouched; only the job's text was replaced.
    assert editor.text(case.uri) == text[:cursor] + case.good + text[cursor:]
    for uri, start, end, _new in editor.applied:
        assert uri == case.uri
        assert start >= cursor and end <= cursor + len(case.bad), (start, end)
    assert record["verification"]["ok"] is True
    assert _fastedit_diagnostics(editor, case.uri) == []


@pytest.mark.parametrize("language", sorted(CASES))
async def test_a_good_fast_draft_passes_the_parse_check_with_one_request(
    make_editor: MakeEditor, stub: StubModelServer, language: str
) -> None:
    case = CASES[language]
    editor = await make_editor(init_options={"mode": "fast"})
    text, cursor = _open(editor, case)
    stub.script(Answer(text=case.good))
    record = await _complete(editor, case, cursor)
    assert record["state"] == "done", record
    verification = record["verification"]
    assert verification["ok"] is True and "parses" in verification["details"]
    # Each check recorded (each of these languages has a names check).
    assert [(c["name"], c["ok"]) for c in verification["checks"]] == [
        ("parse", True),
        ("names", True),
    ]
    assert len(stub.requests) == 1
    assert editor.text(case.uri) == text[:cursor] + case.good + text[cursor:]
    assert _fastedit_diagnostics(editor, case.uri) == []
    assert not any(m.startswith("unverified") for m in _progress_ends(editor))


async def test_the_users_edits_keep_the_documents_parse_current_for_the_next_jobs_check(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    case = CASES["go"]
    editor = await make_editor(init_options={"mode": "fast"})
    text, cursor = _open(editor, case)
    stub.script(Answer(text=case.good))
    first = await _complete(editor, case, cursor)  # its check parses the document, kept
    assert first["verification"]["ok"] is True
    # The user types elsewhere; the server refreshes the kept parse once they pause (debugStats'
    # settle runs the waiting refresh at once).
    editor.type(case.uri, 0, "// Package main adds.\n")
    editor.flush()
    rest = (await at_rest(editor))["parseTrees"]
    assert rest["refreshed"] >= 1 and rest["waiting"] == 0, rest
    # The next job's first check finds its text before parsed: no parse of its own.
    text = editor.text(case.uri)
    at = text.index("return a + b") + len("return a + b")
    stub.script(Answer(text=" // sum"))
    second = await editor.run(
        "fastedit.completeRest", {"uri": case.uri, "position": editor.pos(case.uri, at)}
    )
    record = await _final_status(editor, second["jobId"])
    assert record["verification"]["ok"] is True, record
    assert editor.text(case.uri) == text[:at] + " // sum" + text[at:]
    after = (await at_rest(editor))["parseTrees"]
    assert after["hits"] == rest["hits"] + 1 and after["misses"] == rest["misses"], (rest, after)
