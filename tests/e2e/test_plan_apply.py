"""Plan and apply: the standard model writes an update with ``... existing code ...`` markers,
the apply model merges it into the selection (streamed as a minimal diff), and a merge that
keeps a marker or drops a line of the plan falls back to a direct rewrite. The real server, the
loopback stub (one queue of answers, asked in order: plan, merge, then any direct rewrite)."""

from __future__ import annotations

from typing import Any

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support import shared_server
from tests.support.harness import Editor
from tests.support.shared_server import MakeEditor

# One server and stub for the module, reset between tests (tests/support/shared_server.py);
# tests about start-up or settings at initialize still get their own from make_editor.
pytestmark = pytest.mark.asyncio(loop_scope="module")
module_stub, module_editor = shared_server.module_stub, shared_server.module_editor
stub, editor, make_editor = shared_server.stub, shared_server.editor, shared_server.make_editor

URI = "file:///tmp/fastedit-e2e/plan.py"
#: ``f`` defined: the drafts' names resolve (the names check).
HEAD = "import os\n\n\ndef f(n, cache=False):\n    return n\n\n\ndef table():\n"
TAIL = "    return locals()\n"
CHAT = "/v1/chat/completions"


def body(lines: int) -> str:
    return "".join(f"    v_{i} = f({i})\n" for i in range(lines))


def changed(lines: int) -> str:
    """The selection with one line changed (the third)."""
    return body(lines).replace("    v_2 = f(2)\n", "    v_2 = f(2, cache=True)\n")


#: The standard model's update: the changed line, a line of context, markers for the rest.
PLAN = "    v_1 = f(1)\n    v_2 = f(2, cache=True)\n    # ... existing code ...\n"


async def _edit(editor: Editor, lines: int, **extra: Any) -> dict[str, Any]:
    editor.open(URI, HEAD + body(lines) + TAIL)
    return await editor.run(
        "fastedit.editSelection",
        {
            "uri": URI,
            "range": {
                "start": editor.pos(URI, len(HEAD)),
                "end": editor.pos(URI, len(HEAD) + len(body(lines))),
            },
            "instruction": "cache the third value",
            **extra,
        },
    )


def _chats(stub: StubModelServer) -> list[dict[str, Any]]:
    return [r.body for r in stub.requests if r.path == CHAT]


async def test_plan_goes_to_standard_and_the_merge_of_original_and_plan_lands(
    editor: Editor, stub: StubModelServer
) -> None:
    merged = changed(64)
    stub.script(Answer(text=PLAN, tps=2000), Answer(text=merged, tps=2000))
    record = await _edit(editor, 64)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + merged + TAIL
    plan_request, apply_request = _chats(stub)
    assert plan_request["model"] == "stub-strong"
    assert "# ... existing code ..." in plan_request["messages"][0]["content"]
    # profiles.apply is unset: the fast profile merges, given the selection and plan verbatim.
    assert apply_request["model"] == "stub-fast"
    user = apply_request["messages"][-1]["content"]
    assert f"<code>{body(64)}</code>" in user
    assert f"<update>{PLAN}</update>" in user
    assert "<instruction>cache the third value</instruction>" in user
    stages = record["attempts"]
    assert [(a["stage"], a["model"]) for a in stages] == [
        ("plan", "stub-strong"),
        ("apply", "stub-fast"),
    ]
    assert all(isinstance(a["elapsedMs"], float) for a in stages)
    assert "64 lines ≥ planMinLines 60" in stages[0]["why"]
    assert stages[1]["verification"]["ok"] is True
    assert record["verification"]["ok"] is True
    assert record["route"] == "fast" and record["model"] == "stub-fast"
    assert "plan and apply" in record["reason"]
    # Streamed as a minimal diff: only the changed line was deleted.
    deleted = sum(end - start for _, start, end, _ in editor.applied)
    assert deleted <= len("    v_2 = f(2)\n")
    assert [h["original"] for h in record["hunks"]] == ["    v_2 = f(2)\n"]


async def test_an_apply_profile_on_morph_gets_its_format_alone(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(
        env={
            "FASTEDIT_APPLY_PROVIDER": "morph",
            "FASTEDIT_APPLY_BASE_URL": stub.base_url,
            "FASTEDIT_APPLY_MODEL": "stub-apply",
            "MORPH_API_KEY": "morph-test-key",
        }
    )
    merged = changed(64)
    stub.script(Answer(text=PLAN, tps=2000), Answer(text=merged, tps=2000))
    record = await _edit(editor, 64)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + merged + TAIL
    apply_request = _chats(stub)[1]
    assert apply_request["model"] == "stub-apply"
    assert apply_request["messages"] == [
        {
            "role": "user",
            "content": f"<instruction>cache the third value</instruction>\n"
            f"<code>{body(64)}</code>\n<update>{PLAN}</update>",
        }
    ]
    apply_headers = [r.headers for r in stub.requests if r.path == CHAT][1]
    assert apply_headers["authorization"] == "Bearer morph-test-key"
    assert [(a["stage"], a["route"]) for a in record["attempts"]] == [
        ("plan", "standard"),
        ("apply", "apply"),
    ]


def _keeps_marker(lines: int) -> str:
    text = changed(lines)
    cut = text.index("    v_30")
    return text[:cut] + "    # ... existing code ...\n"


async def test_a_merge_stopped_at_its_marker_closes_the_stream(
    editor: Editor, stub: StubModelServer
) -> None:
    lines = changed(64).splitlines(keepends=True)
    tokens = [*lines[:30], "    # ... existing code ...\n", *lines[40:]]
    # The stub stalls after the marker: only the server closing the stream ends the merge.
    merge = Answer(tokens=tokens, stall_after=31)
    stub.script(Answer(text=PLAN, tps=2000), merge, Answer(text=changed(64), tps=2000))
    record = await _edit(editor, 64)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + changed(64) + TAIL
    apply_request = (await stub.wait_for_requests(3))[1]
    await apply_request.done.wait()
    assert apply_request.client_closed
    assert apply_request.tokens_sent == 31


@pytest.mark.parametrize(
    ("merge", "why"),
    [
        (_keeps_marker(64), "the merge kept a marker"),
        (body(64), "the merge dropped a line of the plan"),
    ],
    ids=["keeps-a-marker", "drops-a-plan-line"],
)
async def test_a_bad_merge_falls_back_to_a_direct_rewrite(
    editor: Editor, stub: StubModelServer, merge: str, why: str
) -> None:
    # Not what the failed merge left (line 50 differs): the direct rewrite lands edits.
    rewrite = changed(64).replace("f(50)", "f(50, cache=True)")
    stub.script(
        Answer(text=PLAN, tps=2000), Answer(text=merge, tps=2000), Answer(text=rewrite, tps=2000)
    )
    record = await _edit(editor, 64)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + rewrite + TAIL
    # The marker never reached the buffer: the merge stopped before its line.
    assert not any("existing code" in text for *_, text in editor.applied)
    plan_request, apply_request, direct = _chats(stub)
    assert (plan_request["model"], apply_request["model"]) == ("stub-strong", "stub-fast")
    # The direct rewrite is the edit selection's own request (64 lines: auto routes to standard).
    assert direct["model"] == "stub-strong"
    assert "replaces the selection" in direct["messages"][0]["content"]
    attempts = record["attempts"]
    assert [a.get("stage") for a in attempts] == ["plan", "apply", None]
    assert attempts[1]["verification"]["ok"] is False
    assert why in attempts[1]["verification"]["details"]
    assert why in record["reason"] and "direct rewrite" in record["reason"]
    assert record["verification"]["ok"] is True
    # One revert restores the original, whatever the failed merge left on the way.
    assert await editor.command("fastedit.revert", {"jobId": record["jobId"]}) == {"reverted": True}
    assert editor.text(URI) == HEAD + body(64) + TAIL


@pytest.mark.parametrize(
    ("settings", "argument", "lines", "mode", "planned"),
    [
        ({}, None, 64, "auto", True),
        ({}, None, 59, "auto", False),
        ({}, None, 60, "standard", True),
        ({"editSelection": {"plan": "off"}}, None, 64, "auto", False),
        ({"editSelection": {"plan": "off"}}, "on", 8, "auto", True),
        ({}, "off", 64, "standard", False),
        ({"editSelection": {"planMinLines": 10}}, None, 12, "auto", True),
        ({"editSelection": {"plan": "on"}}, None, 8, "fast", False),
    ],
    ids=[
        "auto-64",
        "auto-59",
        "standard-60",
        "setting-off",
        "argument-on",
        "argument-off",
        "min-lines-10",
        "fast-mode",
    ],
)
async def test_plan_setting_argument_and_threshold_decide(
    make_editor: MakeEditor,
    stub: StubModelServer,
    settings: dict[str, Any],
    argument: str | None,
    lines: int,
    mode: str,
    planned: bool,
) -> None:
    editor = await make_editor(init_options={**settings, "mode": mode})
    merged = changed(lines)
    answers = [Answer(text=PLAN, tps=2000)] if planned else []
    stub.script(*answers, Answer(text=merged, tps=2000))
    extra = {"plan": argument} if argument else {}
    record = await _edit(editor, lines, **extra)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + merged + TAIL
    chats = _chats(stub)
    assert len(chats) == (2 if planned else 1)
    stages = [a.get("stage") for a in record["attempts"]]
    assert stages == (["plan", "apply"] if planned else [None])
    if planned:
        assert chats[0]["model"] == "stub-strong"
    elif mode == "fast":
        assert chats[0]["model"] == "stub-fast"


async def test_a_bad_plan_argument_is_refused_naming_it(editor: Editor) -> None:
    editor.open(URI, HEAD + body(4) + TAIL)
    with pytest.raises(Exception, match="plan"):
        await editor.command(
            "fastedit.editSelection",
            {
                "uri": URI,
                "range": {"start": editor.pos(URI, 0), "end": editor.pos(URI, 4)},
                "instruction": "x",
                "plan": "sometimes",
            },
        )


async def test_a_failed_plan_request_falls_back_to_a_direct_rewrite(
    editor: Editor, stub: StubModelServer
) -> None:
    stub.script(Answer(status=400, error_message="no plans today"), Answer(text=changed(64)))
    record = await _edit(editor, 64)
    assert record["state"] == "done", record
    assert editor.text(URI) == HEAD + changed(64) + TAIL
    [plan, direct] = record["attempts"]
    assert (plan["stage"], plan["model"]) == ("plan", "stub-strong")
    assert "no plans today" in plan["error"]
    assert direct.get("stage") is None and direct["verification"]["ok"] is True
    assert "plan failed (bad request) → direct rewrite" in record["reason"]
    assert len(_chats(stub)) == 2


async def test_cancelling_during_the_plan_stops_its_stream_and_leaves_the_text(
    editor: Editor, stub: StubModelServer
) -> None:
    stub.script(Answer(text=PLAN, stall_after=2))
    editor.open(URI, HEAD + body(64) + TAIL)
    started = await editor.command(
        "fastedit.editSelection",
        {
            "uri": URI,
            "range": {
                "start": editor.pos(URI, len(HEAD)),
                "end": editor.pos(URI, len(HEAD) + len(body(64))),
            },
            "instruction": "cache the third value",
        },
    )
    [plan_request] = await stub.wait_for_requests(1)
    reply = await editor.command("fastedit.cancel", {"jobId": started["jobId"]})
    assert reply == {"cancelled": [started["jobId"]]}
    record = await editor.wait_job(started["jobId"])
    assert record["state"] == "cancelled"
    await plan_request.done.wait()
    assert plan_request.client_closed
    assert editor.text(URI) == HEAD + body(64) + TAIL
    assert editor.applied == []
