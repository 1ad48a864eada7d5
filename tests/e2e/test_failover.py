"""Failover along ``failover`` (fast → standard → local) and the circuit breaker, end to end."""

from __future__ import annotations

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

URI = "file:///tmp/fastedit-e2e/failover.py"


async def _complete(editor: Editor) -> dict[str, object]:
    record: dict[str, object] = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 0, "character": 4}}
    )
    return record


async def test_a_rate_limited_fast_model_fails_over_to_standard_and_is_left_alone(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "x = \n")
    await editor.command("fastedit.setMode", {"mode": "fast"})
    stub.script(
        # A window far longer than the two jobs take, however busy the machine.
        Answer(status=429, headers={"retry-after": "600"}),
        Answer(text="1"),  # the standard model answers
    )
    record = await _complete(editor)
    assert record["state"] == "done", record
    assert record["route"] == "standard" and record["model"] == "stub-strong"
    assert "fast rate limit → failover to standard" in str(record["reason"])
    attempts = record["attempts"]
    assert isinstance(attempts, list) and [a["route"] for a in attempts] == ["fast", "standard"]
    assert "rate-limited" in attempts[0]["error"]
    assert editor.text(URI) == "x = 1\n"
    # Within the window, the next job does not call the fast model at all.
    stub.script(Answer(text="2"))
    record = await _complete(editor)
    assert record["state"] == "done" and record["model"] == "stub-strong"
    fast_calls = [r for r in stub.requests if r.body and r.body.get("model") == "stub-fast"]
    assert len(fast_calls) == 1


async def test_the_circuit_opens_after_repeated_failures_and_status_shows_it(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "x = \n")
    await editor.command("fastedit.setMode", {"mode": "fast"})
    failing = Answer(status=503)
    for _ in range(3):
        # The fast model fails (with its retries), the standard one answers.
        stub.script(failing, failing, failing, Answer(text="1"))
        record = await _complete(editor)
        assert record["state"] == "done" and record["route"] == "standard", record
    status = await editor.command("fastedit.status")
    breakers = status["breakers"]
    assert [(b["model"], b["state"]) for b in breakers] == [("stub-fast", "open")]
    # Open: the fast model is not called; the job goes straight to standard.
    before = len(stub.requests)
    stub.script(Answer(text="1"))
    record = await _complete(editor)
    assert record["state"] == "done" and record["route"] == "standard"
    assert "circuit open" in str(record["attempts"])
    assert [r.body["model"] for r in stub.requests[before:]] == ["stub-strong"]


async def test_when_every_model_fails_the_offline_engine_answers_last(
    editor: Editor, stub: StubModelServer
) -> None:
    editor.open(URI, "x = \n")
    stub.default = Answer(status=429, headers={"retry-after": "30"})
    record = await _complete(editor)
    assert record["state"] == "done", record
    assert record["route"] == "local"
    assert [a["route"] for a in record["attempts"]] == ["fast", "standard", "local"]


TEXT = "def add(a, b):\n    return a + b\n"


async def test_a_failed_model_on_an_action_with_no_offline_engine_is_the_jobs_reason(
    editor: Editor, stub: StubModelServer
) -> None:
    # The model fails over to the offline engine, which cannot edit a selection: the job said
    # "needs a model: set FASTEDIT_FAST_BASE_URL…" although a model is configured and had just
    # answered HTTP 500.
    editor.open(URI, TEXT)
    good = stub.default
    stub.default = Answer(status=500, error_message="the model broke")
    try:
        await editor.command("fastedit.setMode", {"mode": "standard"})
        end = TEXT.index("\n") + 1
        record = await editor.run(
            "fastedit.editSelection",
            {
                "uri": URI,
                "range": {"start": editor.pos(URI, 0), "end": editor.pos(URI, end)},
                "instruction": "rename it",
            },
        )
    finally:
        stub.default = good
    assert record["state"] == "failed", record
    assert "HTTP 500" in record["error"] and "the model broke" in record["error"], record
    assert "needs a model" not in record["error"], record
    assert "offline engine cannot" in record["error"], record
    assert editor.text(URI) == TEXT
