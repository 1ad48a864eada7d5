"""jobs.py: job records as editors, scripts and tests see them, and the registry of a session."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.core.document import Point
from fastedit_lsp.core.jobs import (
    FINISHED,
    KEEP,
    Attempt,
    Job,
    JobRegistry,
    Metrics,
    State,
    figures_text,
    speed_line,
)
from fastedit_lsp.core.tracking import RegionTracker

URI = "file:///w/m.py"


def make_job(job_id: str = "job-1", uri: str = URI, **kw: object) -> Job:
    tracker = RegionTracker(Point(1, 4), Point(2, 0), "old\n")
    return Job(job_id, "editSelection", uri, ((1, 4), (2, 0)), tracker, **kw)  # type: ignore[arg-type]


def test_a_new_job_record_has_every_field_of_the_contract_in_camel_case() -> None:
    record = make_job().record()
    assert set(record) == {
        "jobId", "kind", "state", "uri", "range", "route", "model", "reason",
        "escalated", "attempts", "verification", "metrics",
    }  # fmt: skip
    assert record["jobId"] == "job-1"
    assert record["kind"] == "editSelection"
    assert record["state"] == "running"
    assert record["uri"] == URI
    assert record["range"] == {
        "start": {"line": 1, "character": 4},
        "end": {"line": 2, "character": 0},
    }
    assert record["escalated"] is False
    assert record["attempts"] == []
    assert record["verification"] == {"ok": None, "details": "nothing to verify"}
    assert set(record["metrics"]) == {
        "ttftMs", "tokens", "tokensPerSecond", "edits", "elapsedMs", "landedMs"
    }  # fmt: skip
    assert record["metrics"]["ttftMs"] is None
    assert record["metrics"]["tokensPerSecond"] is None


def test_a_finished_job_record_carries_route_attempts_verification_error_and_metrics() -> None:
    job = make_job(route="standard", model="big", steps=["auto: 61 lines > 60"], escalated=True)
    job.attempts = [
        Attempt("fast", "small", {"ok": False, "details": "does not parse"}),
        Attempt("standard", "big", {"ok": True, "details": "parses"}),
    ]
    job.verification = {"ok": True, "details": "parses"}
    job.metrics = Metrics(started_at=100.0, first_token_at=100.25, tokens=40, edits=7)
    job.metrics.decode_from, job.metrics.decode_to = 100.25, 100.64
    job.metrics.finished_at = 101.5
    job.finish("failed", "the model went away")
    record = job.record()
    assert record["state"] == "failed"
    assert record["error"] == "the model went away"
    assert (record["route"], record["model"], record["reason"]) == (
        "standard",
        "big",
        "auto: 61 lines > 60",
    )
    assert record["escalated"] is True
    assert record["attempts"] == [
        {
            "route": "fast",
            "model": "small",
            "verification": {"ok": False, "details": "does not parse"},
        },
        {"route": "standard", "model": "big", "verification": {"ok": True, "details": "parses"}},
    ]
    assert record["verification"] == {"ok": True, "details": "parses"}
    assert record["metrics"] == {
        "ttftMs": 250.0,
        "tokens": 40,
        "tokensPerSecond": 100.0,
        "edits": 7,
        "elapsedMs": 1500.0,
        "landedMs": None,
    }


def test_error_is_absent_from_a_record_without_one() -> None:
    job = make_job()
    job.finish("done")
    assert "error" not in job.record()


@pytest.mark.parametrize("state", ["done", "cancelled", "failed", "reverted"])
async def test_finishing_a_job_sets_its_state_and_wakes_waiters(state: State) -> None:
    job = make_job()
    assert not job.is_finished
    assert not job.finished.is_set()
    job.finish(state)
    assert job.is_finished
    assert job.finished.is_set()
    assert job.record()["state"] == state


def test_finished_states_are_exactly_those_of_the_contract() -> None:
    assert frozenset({"done", "cancelled", "failed", "reverted"}) == FINISHED


def test_the_finish_time_is_kept_from_the_first_finish() -> None:
    job = make_job()
    job.metrics = Metrics(started_at=10.0)
    job.metrics.finished_at = 12.0
    job.finish("done")
    job.finish("reverted")
    assert job.state == "reverted"
    assert job.metrics.record()["elapsedMs"] == 2000.0


def test_tokens_per_second_needs_stream_time() -> None:
    metrics = Metrics(started_at=0.0, first_token_at=0.1, tokens=1, finished_at=0.2)
    assert metrics.record()["tokensPerSecond"] is None
    metrics = Metrics(started_at=0.0, first_token_at=0.1, tokens=1, finished_at=0.2)
    metrics.decode_from = metrics.decode_to = 0.1
    assert metrics.record()["tokensPerSecond"] is None


def test_tokens_per_second_is_the_decode_speed_with_the_time_to_first_token_apart() -> None:
    # A 10-token answer at 300 tok/s after 323 ms: its 9 later tokens in 30 ms. The edits'
    # round trips and the wait for the editor's reports (until 0.5 s) count in neither figure.
    metrics = Metrics(started_at=0.0, first_token_at=0.323, tokens=10, edits=4, finished_at=0.5)
    metrics.decode_from, metrics.decode_to = 0.323, 0.353
    record = metrics.record()
    assert record["tokensPerSecond"] == 300.0
    assert record["ttftMs"] == 323.0
    assert record["elapsedMs"] == 500.0


def test_the_offline_engine_reports_its_elapsed_time_and_no_speed() -> None:
    # Its "tokens" are pieces of an answer computed at once: no speed, no first token.
    job = make_job(route="local", model="offline")
    job.metrics = Metrics(started_at=0.0, first_token_at=0.0119, tokens=1200, edits=1)
    job.metrics.decode_from, job.metrics.decode_to = 0.0119, 0.012
    job.metrics.finished_at = 0.0124
    metrics = job.record()["metrics"]
    assert metrics == {
        "ttftMs": None,
        "tokens": 0,
        "tokensPerSecond": None,
        "edits": 1,
        "elapsedMs": 12.4,
        "landedMs": None,
    }
    assert speed_line(job) == "○ local · offline · 12 ms"
    # Once the editor acknowledged the last edit: the time to the text, not the job's wait for
    # the editor's report of it.
    job.metrics.landed_at = 0.0071
    assert job.record()["metrics"]["landedMs"] == 7.1
    assert speed_line(job) == "○ local · offline · 7 ms"


def test_the_speed_line_shows_the_decode_speed_and_the_first_token_apart() -> None:
    job = make_job(route="fast", model="small")
    job.metrics = Metrics(started_at=0.0, first_token_at=0.12, tokens=1841, finished_at=2.0)
    job.metrics.decode_from, job.metrics.decode_to = 0.12, 1.12
    assert speed_line(job) == "⚡ fast · small · 1,840 tok/s · first token 120 ms"
    # While it waits for its first token: the route and model only.
    job.metrics = Metrics(started_at=0.0)
    assert speed_line(job) == "⚡ fast · small"


def test_figures_text_is_what_the_editors_show() -> None:
    model = {"ttftMs": 323.4, "tokens": 10, "tokensPerSecond": 299.6, "elapsedMs": 500.0}
    assert figures_text(model, offline=False) == "300 tok/s · first token 323 ms"
    assert figures_text({**model, "tokensPerSecond": None}, offline=False) == (
        "10 tokens · first token 323 ms"
    )
    offline = {"ttftMs": None, "tokens": 0, "tokensPerSecond": None, "elapsedMs": 1234.0}
    assert figures_text(offline, offline=True) == "offline · 1,234 ms"
    assert figures_text({**offline, "landedMs": 7.4}, offline=True) == "offline · 7 ms"


# -- registry ------------------------------------------------------------------------------------


def test_registry_ids_are_unique_and_increasing() -> None:
    registry = JobRegistry()
    assert [registry.new_id() for _ in range(3)] == ["job-1", "job-2", "job-3"]


def test_registry_keeps_the_last_50_finished_jobs() -> None:
    registry = JobRegistry()
    for _ in range(KEEP + 10):
        job = make_job(registry.new_id())
        registry.add(job)
        job.finish("done")
    ids = [job.id for job in registry]
    assert KEEP == 50
    assert ids == [f"job-{i}" for i in range(11, 61)]  # job-1 .. job-60 were made
    assert [r["jobId"] for r in registry.records()] == ids
    assert registry.get("job-1") is None
    assert registry.get("job-60") is not None


def test_registry_never_forgets_a_running_job() -> None:
    registry = JobRegistry()
    running = make_job(registry.new_id())
    registry.add(running)
    for _ in range(KEEP + 5):
        job = make_job(registry.new_id())
        registry.add(job)
        job.finish("done")
    assert registry.get(running.id) is running
    assert registry.running() == [running]
    assert len(registry.records()) == KEEP


def test_registry_finds_running_and_last_finished_jobs_per_document() -> None:
    registry = JobRegistry()
    a1, b1, a2, a3 = (
        make_job("job-1", uri="file:///a"),
        make_job("job-2", uri="file:///b"),
        make_job("job-3", uri="file:///a"),
        make_job("job-4", uri="file:///a"),
    )
    for job in (a1, b1, a2, a3):
        registry.add(job)
    a1.finish("done")
    b1.finish("cancelled")
    a2.finish("failed")
    assert registry.running() == [a3]
    assert registry.running("file:///b") == []
    assert registry.last_finished("file:///a") is a2
    assert registry.last_finished("file:///b") is b1
    assert registry.last_finished() is a2
    assert registry.last_finished("file:///c") is None


@given(st.lists(st.tuples(st.sampled_from(["add", "finish"]), st.integers(0, 80), st.booleans())))
def test_registry_running_is_every_unfinished_kept_job_in_order(
    steps: list[tuple[str, int, bool]],
) -> None:
    registry = JobRegistry()
    made: list[Job] = []
    for op, pick, on_a in steps:
        if op == "add" or not made:
            uri = "file:///a" if on_a else "file:///b"
            job = make_job(registry.new_id(), uri=uri)
            made.append(job)
            registry.add(job)
        else:
            job = made[pick % len(made)]
            if not job.is_finished:
                job.finish("done")
        for which in (None, "file:///a", "file:///b"):
            expected = [j for j in made if not j.is_finished and which in (None, j.uri)]
            assert registry.running(which) == expected
        assert all(registry.get(j.id) is j for j in made if not j.is_finished)
