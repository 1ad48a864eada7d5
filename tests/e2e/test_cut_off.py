"""Cut-off answers through the real server: a stream that ends with ``finish_reason: "length"``
or ``"content_filter"`` lands as what it is, flagged (the record's ``truncated``, a ``fastedit``
diagnostic on the region, "cut off" in the status and the progress end), and auto mode asks a
cut-off answer once more with the profile's whole ``maxTokens``, replacing only its own text.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

URI = "file:///tmp/fastedit-e2e/cut_off.py"
FUNCTION = "def add(a, b):\n    \n"
CURSOR = {"line": 1, "character": 4}


async def _final_status(editor: Editor, job_id: str) -> dict[str, Any]:
    """The job's last ``fastedit/status`` (sent after its diagnostics and progress end)."""
    while True:
        for status in reversed(editor.statuses):
            job = status.get("job") or {}
            if job.get("jobId") == job_id and job.get("state") != "running":
                return dict(job)
        await editor.next_event()


def _progress_ends(editor: Editor) -> list[str]:
    return [
        report.message or ""
        for reports in editor.client.progress_reports.values()
        for report in reports
        if isinstance(report, types.WorkDoneProgressEnd)
    ]


def _asked_tokens(body: dict[str, Any]) -> int:
    return int(body.get("max_completion_tokens") or body["max_tokens"])


async def test_an_answer_cut_off_for_length_is_flagged_in_the_record_diagnostic_and_status(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"mode": "fast"})
    editor.open(URI, FUNCTION)
    stub.script(Answer(text="return a +", finish_reason="length"))
    record = await editor.run("fastedit.completeRest", {"uri": URI, "position": CURSOR})
    assert record["state"] == "done", record
    assert record["truncated"] == "length"
    assert record["verification"]["ok"] is False
    assert re.match(r"the answer was cut off after \d+ tokens", record["verification"]["details"])
    assert editor.text(URI) == "def add(a, b):\n    return a +\n"  # what landed stays
    assert len(stub.requests) == 1  # a cut answer is not "corrected" by the same budget
    final = await _final_status(editor, record["jobId"])
    assert final["truncated"] == "length" and final["verification"]["ok"] is False
    assert any("cut off" in m for m in _progress_ends(editor)), _progress_ends(editor)
    (flag,) = [d for d in editor.client.diagnostics.get(URI, []) if d.source == "fastedit"]
    assert "cut off" in flag.message
    assert (flag.range.start.line, flag.range.end.line) == (1, 1)


async def test_a_content_filter_stop_is_flagged_as_stopped_by_the_providers_filter(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"mode": "fast"})
    editor.open(URI, FUNCTION)
    stub.script(Answer(text="return a + b", finish_reason="content_filter"))
    record = await editor.run("fastedit.completeRest", {"uri": URI, "position": CURSOR})
    assert record["state"] == "done", record
    assert record["truncated"] == "content_filter"
    assert record["verification"] == {
        "ok": False,
        "details": "the answer was cut off: stopped by the provider's filter",
    }
    assert editor.text(URI) == "def add(a, b):\n    return a + b\n"
    final = await _final_status(editor, record["jobId"])
    assert final["truncated"] == "content_filter"


SELECTION = "def f():\n    return 1\n"
LONG = ["def f():\n", *(f"    a{i} = {i}\n" for i in range(400)), "    return 1\n"]


async def test_auto_mode_asks_a_cut_off_answer_again_and_the_buffer_holds_it_once(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    budget = {"maxTokens": 2048}
    editor = await make_editor(
        init_options={"mode": "auto", "profiles": {"fast": budget, "standard": budget}}
    )
    editor.open(URI, SELECTION + "\nprint(f())\n")
    # The stub stops at the request's max_tokens with finish_reason "length": the edit
    # selection's own budget cuts this answer, the profile's whole maxTokens does not.
    stub.script(Answer(tokens=LONG), Answer(tokens=LONG))
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}
    record = await editor.run(
        "fastedit.editSelection",
        {"uri": URI, "range": whole, "instruction": "number the steps", "plan": "off"},
    )
    assert record["state"] == "done", record
    assert "truncated" not in record and record["verification"]["ok"] is True, record
    assert editor.text(URI) == "".join(LONG) + "\nprint(f())\n"  # the answer, once
    asked = [_asked_tokens(r.body) for r in stub.requests]
    assert len(asked) == 2 and asked[0] < len(LONG) and asked[1] == 2048, asked
    assert (
        "cut off after" in record["reason"]
        and "asked again with maxTokens 2048" in (record["reason"])
    )
    assert record["escalated"] is False
