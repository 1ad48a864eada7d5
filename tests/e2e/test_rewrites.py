"""Rewrites stream as their minimal diff: unchanged lines stay, hunks revert one at a time, and
(``review: hunks``) are highlighted until kept or reverted. The real server, the loopback stub."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support import shared_server
from tests.support.harness import Editor
from tests.support.shared_server import MakeEditor

# One server and stub for the module, reset between tests (tests/support/shared_server.py);
# tests about start-up or settings at initialize still get their own from make_editor.
pytestmark = pytest.mark.asyncio(loop_scope="module")
module_stub, module_editor = shared_server.module_stub, shared_server.module_editor
stub, editor, make_editor = shared_server.stub, shared_server.editor, shared_server.make_editor

URI = "file:///tmp/fastedit-e2e/rewrite.py"
#: ``compute`` defined: the drafts' names resolve (the names check).
HEAD = "import os\n\n\ndef compute(n, cache=False):\n    return n\n\n\ndef table():\n"
BODY = "".join(f"    value_{i} = compute({i})\n" for i in range(40))
TAIL = "    return locals()\n"


async def _rewrite(editor: Editor, rewrite: str, *, tps: float = 400) -> dict[str, Any]:
    return await editor.run(
        "fastedit.editSelection",
        {
            "uri": URI,
            "range": {
                "start": editor.pos(URI, len(HEAD)),
                "end": editor.pos(URI, len(HEAD) + len(BODY)),
            },
            "instruction": "tune it",
        },
    )


def _three_hunks() -> str:
    return (
        BODY.replace("compute(3)", "compute(3, cache=True)")
        .replace("    value_20 = compute(20)\n", "")
        .replace("    value_35 = compute(35)\n", "    value_35 = compute(35)\n    extra = 1\n")
    )


async def test_a_forty_line_rewrite_changing_one_line_deletes_only_that_line(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, HEAD + BODY + TAIL)
    rewrite = BODY.replace("compute(17)", "compute(17, fast=True)")
    stub.script(Answer(text=f"```python\n{rewrite}```", tps=2000))
    record = await _rewrite(editor, rewrite)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + rewrite + TAIL
    line = "    value_17 = compute(17)\n"
    assert sum(end - start for _, start, end, _ in editor.applied) <= len(line)
    assert [h["original"] for h in record["hunks"]] == [line]
    assert [h["state"] for h in record["hunks"]] == ["applied"]


async def test_three_hunks_are_listed_and_revert_one_at_a_time_in_any_order(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, HEAD + BODY + TAIL)
    rewrite = _three_hunks()
    stub.script(Answer(text=rewrite, tps=400))
    record = await _rewrite(editor, rewrite)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + rewrite + TAIL
    assert len(record["hunks"]) == 3
    # The first hunk landed while the model was still writing.
    assert record["metrics"]["edits"] >= 2
    job = record["jobId"]
    # Typing elsewhere (in the region, outside every hunk) does not block a per-hunk revert.
    at = editor.text(URI).index("value_10")
    editor.type(URI, at, "my_")
    editor.flush()
    expected = HEAD + rewrite.replace("value_10", "my_value_10") + TAIL
    for index, (old, new) in [
        (2, ("    extra = 1\n", "")),
        (0, ("compute(3, cache=True)", "compute(3)")),
        (1, ("    value_21", "    value_20 = compute(20)\n    value_21")),
    ]:
        result = await editor.command("fastedit.revertHunk", {"jobId": job, "hunk": index})
        assert result == {"reverted": True}, result
        expected = expected.replace(old, new, 1)
        assert editor.text(URI) == expected
    assert editor.text(URI) == HEAD + BODY.replace("value_10", "my_value_10") + TAIL
    status = await editor.command("fastedit.status")
    [final] = [j for j in status["jobs"] if j["jobId"] == job]
    assert [h["state"] for h in final["hunks"]] == ["reverted"] * 3
    again = await editor.command("fastedit.revertHunk", {"jobId": job, "hunk": 1})
    assert again == {"reverted": False, "reason": "hunk 1 was already reverted"}
    # The whole revert would drop the typing: refused, saying why.
    whole = await editor.command("fastedit.revert", {"jobId": job})
    assert whole["reverted"] is False and "edited since" in whole["reason"]


async def test_a_rewritten_document_closed_and_reopened_shorter_keeps_the_status_answering(
    editor: Editor, stub: StubModelServer
) -> None:
    # The finished rewrite's hunks belong to the closed text; edits to the reopened one are not
    # theirs (fastedit.status failed with an IndexError when they were applied to it).
    editor.open(URI, HEAD + BODY + TAIL)
    stub.script(Answer(text=_three_hunks(), tps=2000))
    record = await _rewrite(editor, _three_hunks())
    assert record["state"] == "done", record
    editor.close(URI)
    editor.open(URI, "x = 1\n")
    editor.type(URI, 0, "# typed\n")
    status = await editor.command("fastedit.status")
    (job,) = [j for j in status["jobs"] if j["jobId"] == record["jobId"]]
    assert job["hunks"] == record["hunks"]
    assert editor.text(URI) == "# typed\nx = 1\n"


async def test_a_whole_revert_of_a_rewrite_is_one_edit(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, HEAD + BODY + TAIL)
    rewrite = _three_hunks()
    stub.script(Answer(text=rewrite, tps=1000))
    record = await _rewrite(editor, rewrite)
    before = len(editor.applied)
    assert await editor.command("fastedit.revert", {"jobId": record["jobId"]}) == {"reverted": True}
    assert editor.text(URI) == HEAD + BODY + TAIL
    assert len(editor.applied) == before + 1


async def test_a_late_reporting_editor_gets_the_same_rewrite(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(sync="batched")
    editor.batch_delay = 0.2
    editor.open(URI, HEAD + BODY + TAIL)
    rewrite = _three_hunks()
    stub.script(Answer(text=rewrite, tps=600))
    record = await _rewrite(editor, rewrite)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + rewrite + TAIL
    deleted = sum(end - start for _, start, end, _ in editor.applied)
    assert deleted == len("    value_20 = compute(20)\n") + len("    value_3 = compute(3)\n")


async def test_review_highlights_hunks_until_keep_all(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"review": "hunks"})
    editor.open(URI, HEAD + BODY + TAIL)
    rewrite = _three_hunks()
    stub.script(Answer(text=rewrite, tps=2000))
    record = await _rewrite(editor, rewrite)
    assert record["state"] == "done", record
    for _ in range(100):
        if len(editor.client.diagnostics.get(URI, [])) == 3:
            break
        await editor.next_event(1)
    hints = editor.client.diagnostics[URI]
    assert [d.severity for d in hints] == [types.DiagnosticSeverity.Hint] * 3
    assert {d.source for d in hints} == {"fastedit"}
    hunk = record["hunks"][0]["range"]
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(
                start=types.Position(**hunk["start"]), end=types.Position(**hunk["start"])
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions or []]
    assert "Revert this change (fastedit)" in titles
    assert "Keep all changes (fastedit)" in titles and "Revert all changes (fastedit)" in titles
    [revert] = [a for a in actions or [] if a.title == "Revert this change (fastedit)"]
    assert isinstance(revert, types.CodeAction) and revert.command is not None
    assert list(revert.command.arguments or []) == [{"jobId": record["jobId"], "hunk": 0}]
    result = await editor.command("fastedit.revertHunk", *revert.command.arguments)
    assert result == {"reverted": True}
    await _until(editor, lambda: len(editor.client.diagnostics.get(URI, [])) == 2)
    assert await editor.command("fastedit.keepAll", {"jobId": record["jobId"]}) == {"kept": True}
    await _until(editor, lambda: len(editor.client.diagnostics.get(URI, [None])) == 0)


async def _until(editor: Editor, done: Any) -> None:
    for _ in range(100):
        if done():
            return
        await asyncio.wait([asyncio.ensure_future(editor.next_event(0.1))])
    assert done()


@pytest.mark.parametrize("bad", [{"jobId": "job-1"}, {"jobId": "job-1", "hunk": -1}])
async def test_revert_hunk_names_a_bad_argument(editor: Editor, bad: dict[str, Any]) -> None:
    with pytest.raises(Exception, match="hunk"):
        await editor.command("fastedit.revertHunk", bad)


def _both(prediction: str) -> dict[str, Any]:
    return {
        "mode": "fast",
        "profiles": {"fast": {"prediction": prediction}, "standard": {"prediction": prediction}},
    }


async def test_prediction_is_sent_where_the_setting_says_and_reported(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options=_both("on"))
    editor.open(URI, HEAD + BODY + TAIL)
    rewrite = _three_hunks()
    stub.script(Answer(text=rewrite, tps=2000))
    record = await _rewrite(editor, rewrite)
    assert record["state"] == "done", record
    assert stub.requests[-1].body["prediction"] == {"type": "content", "content": BODY}
    metrics = record["metrics"]
    assert metrics["acceptedPredictionTokens"] > 0
    assert metrics["rejectedPredictionTokens"] >= 0
    assert editor.text(URI) == HEAD + rewrite + TAIL


@pytest.mark.parametrize("setting", ["auto", "off"])
async def test_prediction_is_not_sent_when_off_or_unknown_to_support_it(
    make_editor: MakeEditor, stub: StubModelServer, setting: str
) -> None:
    editor = await make_editor(init_options=_both(setting))
    editor.open(URI, HEAD + BODY + TAIL)
    stub.script(Answer(text=_three_hunks(), tps=2000))
    record = await _rewrite(editor, _three_hunks())
    assert record["state"] == "done", record
    assert "prediction" not in stub.requests[-1].body
    assert "acceptedPredictionTokens" not in record["metrics"]


async def test_a_400_naming_prediction_retries_without_it_and_is_remembered(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options=_both("on"))
    editor.open(URI, HEAD + BODY + TAIL)
    rewrite = _three_hunks()
    stub.script(
        Answer(status=400, error_message="Unrecognized request argument supplied: prediction"),
        Answer(text=rewrite, tps=2000),
        Answer(text=BODY, tps=2000),
    )
    record = await _rewrite(editor, rewrite)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + rewrite + TAIL
    assert "refused prediction" in record["reason"]
    sent = [("prediction" in r.body) for r in stub.requests if r.path.endswith("/completions")]
    assert sent == [True, False]
    # The next rewrite on the same (baseUrl, model) does not send it again.
    assert (await editor.command("fastedit.revert", {"jobId": record["jobId"]}))["reverted"]
    again = await _rewrite(editor, BODY)
    assert again["state"] == "done", again
    sent = [("prediction" in r.body) for r in stub.requests if r.path.endswith("/completions")]
    assert sent == [True, False, False]


SHOUT = {
    "id": "shout",
    "title": "Shout the strings",
    "instruction": "Make every string literal upper case",
    "target": "selection",
    "route": "standard",
}
SOURCE = 'def greet(name):\n    return "hello " + name\n\n\nprint(greet("bob"))\n'


async def _code_actions(editor: Editor, start: int, end: int) -> list[types.CodeAction]:
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(
                start=types.Position(**editor.pos(URI, start)),
                end=types.Position(**editor.pos(URI, end)),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in actions or [] if isinstance(a, types.CodeAction)]


async def test_a_user_action_from_settings_is_a_code_action_and_runs_with_its_route(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(init_options={"actions": [SHOUT]})
    editor.open(URI, SOURCE)
    start, end = 0, SOURCE.index("\n\n")
    actions = await _code_actions(editor, start, end)
    [shout] = [a for a in actions if a.title == "Shout the strings (fastedit)"]
    assert shout.command is not None and shout.command.command == "fastedit.run"
    [argument] = shout.command.arguments or []
    assert argument["action"] == "shout" and argument["uri"] == URI
    rewrite = 'def greet(name):\n    return "HELLO " + name'
    stub.script(Answer(text=rewrite, tps=2000))
    record = await editor.run("fastedit.run", argument)
    assert record["state"] == "done", record
    assert (record["kind"], record["action"], record["route"]) == ("run", "shout", "standard")
    assert record["model"] == "stub-strong"
    assert (
        "Make every string literal upper case" in stub.requests[-1].body["messages"][-1]["content"]
    )
    assert editor.text(URI) == SOURCE.replace("hello", "HELLO")
    assert record["verification"]["ok"] is True
    # Nothing selected: a selection action is not offered.
    assert not [a for a in await _code_actions(editor, 3, 3) if a.title.startswith("Shout")]


async def test_the_docstring_preset_rewrites_the_function_at_the_cursor(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, SOURCE)
    inside = SOURCE.index("return")
    titles = [a.title for a in await _code_actions(editor, inside, inside)]
    assert "Add a docstring (fastedit)" in titles and "Add type hints (fastedit)" in titles
    outside = SOURCE.index("print")
    assert "Add a docstring (fastedit)" not in [
        a.title for a in await _code_actions(editor, outside, outside)
    ]
    function = SOURCE[: SOURCE.index("\n\n") + 1]
    documented = function.replace(":\n", ':\n    """Greet someone."""\n', 1)
    stub.script(Answer(text=documented, tps=2000))
    record = await editor.run(
        "fastedit.run", {"action": "docstring", "uri": URI, "position": editor.pos(URI, inside)}
    )
    assert record["state"] == "done", record
    assert editor.text(URI) == documented + SOURCE[len(function) :]
    # Only the docstring line was inserted: nothing of the function was deleted.
    assert sum(end - start for _, start, end, _ in editor.applied) == 0
    assert record["hunks"][0]["original"] == ""


async def test_the_docstring_preset_works_on_a_function_while_a_line_below_is_unfinished(
    editor: Editor, stub: StubModelServer
) -> None:
    # A person half-way through the next function (found in Emacs' terminal soak, issue 30):
    # was "no function at the cursor", and the whole file's parse check failed every rewrite.
    function = "def is_email(text: str) -> bool:\n    return EMAIL.fullmatch(text) is not None\n"
    unfinished = "def is_version(text: str) -> bool:\n    return V.match(\n"
    source = f"import re\n\n\n{function}\n\n{unfinished}"
    editor.open(URI, source)
    inside = source.index("return")
    titles = [a.title for a in await _code_actions(editor, inside, inside)]
    assert "Add a docstring (fastedit)" in titles, titles
    documented = function.replace(":\n", ':\n    """Whether text is an email address."""\n', 1)
    stub.script(Answer(text=f"```python\n{documented}```\n", tps=2000))
    record = await editor.run(
        "fastedit.run", {"action": "docstring", "uri": URI, "position": editor.pos(URI, inside)}
    )
    assert record["state"] == "done", record
    assert record["verification"] == {
        "ok": True,
        "details": "the rewrite parses (line 9 does not parse, as before)",
    }, record
    assert editor.text(URI) == source.replace(function, documented)
    # A rewrite that breaks the function itself is still flagged.
    broken = documented.replace("-> bool:", "-> bool")
    stub.script(*[Answer(text=f"```python\n{broken}```\n", tps=2000)] * 3)
    record = await editor.run(
        "fastedit.run", {"action": "docstring", "uri": URI, "position": editor.pos(URI, inside)}
    )
    checked = record["attempts"][0]["verification"]
    assert checked["ok"] is False and "the file does not parse" in checked["details"], record


async def test_an_unknown_action_is_refused_naming_it(editor: Editor) -> None:
    editor.open(URI, SOURCE)
    with pytest.raises(Exception, match="no action 'nope'"):
        await editor.command(
            "fastedit.run", {"action": "nope", "uri": URI, "position": editor.pos(URI, 0)}
        )


def _states(original: str, applied: list[tuple[str, int, int, str]]) -> list[str]:
    """Every buffer state the editor went through, replaying its applied edits in order."""
    states = [original]
    for _, start, end, text in applied:
        states.append(states[-1][:start] + text + states[-1][end:])
    return states


async def test_a_streamed_rewrite_never_shows_a_replaced_line_glued_to_the_old_one(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, HEAD + BODY + TAIL)
    # Every line changes, streamed in small pieces: each replacement meets its old line.
    rewrite = BODY.replace("value_", "result_")
    stub.script(Answer(text=rewrite, tps=400, token_size=3))
    record = await _rewrite(editor, rewrite)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + rewrite + TAIL
    old_lines = set((HEAD + BODY + TAIL).splitlines())
    new_lines = rewrite.splitlines()
    states = _states(HEAD + BODY + TAIL, editor.applied)
    assert len(states) > 3  # the rewrite streamed in several edits
    for state in states:
        for line in state.splitlines():
            # An old line, or a new line (possibly still partial) on a line of its own.
            assert line in old_lines or any(new.startswith(line) for new in new_lines), (
                f"glued line {line!r} in\n{state}"
            )
