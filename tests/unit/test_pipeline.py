"""The job pipeline behind its port, with a fake host: no process, no socket, milliseconds.

The fake host is an editor that applies every edit at once and reports it back (as the document
store would), and models that answer from a script. What is pinned here was tested only through
the real server before: failover order, escalation deleting only the job's own text, the refine
loop, circuit breakers, cancellation, and an action added to the registry at run time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace

import pytest

from fastedit_lsp.actions.base import (
    ActionInput,
    CommandInput,
    Draft,
    Offer,
    OfferView,
    Start,
    Verification,
)
from fastedit_lsp.actions.registry import ActionSpec, Registry
from fastedit_lsp.backends.base import BackendError, ChatMessage, ChatRequest, StreamInfo
from fastedit_lsp.backends.base import stop_reason as normalised_stop
from fastedit_lsp.backends.breaker import CircuitBreakers
from fastedit_lsp.core.document import Change, Document, Point
from fastedit_lsp.core.jobs import Inputs, Job, JobRegistry, Metrics, TestModule
from fastedit_lsp.core.rewrite_tracking import RewriteTracker
from fastedit_lsp.core.tracking import RegionTracker, SentEdit, apply_change
from fastedit_lsp.pipeline.announce import Announcer
from fastedit_lsp.pipeline.drafts import JobFailedError
from fastedit_lsp.pipeline.failover import after_failure, decide, failover_chain, failover_step
from fastedit_lsp.pipeline.job_run import JobRun
from fastedit_lsp.pipeline.models import failed, open_model
from fastedit_lsp.pipeline.route_stats import RouteStats
from fastedit_lsp.pipeline.runner import JobRunner
from fastedit_lsp.prompting.filters import Pipeline
from fastedit_lsp.settings import Mode, ResolvedProfile, Settings, load


class Script:
    """One model: each call takes the next answer (text, or an error raised before any text)."""

    def __init__(self, name: str, *answers: str | BackendError) -> None:
        self.provider = "openai-compatible"
        self.model = name
        self.answers = list(answers)
        self.requests: list[ChatRequest] = []
        #: Set to hold the stream after its first piece (a model still streaming).
        self.hold: asyncio.Event | None = None
        self.closed = 0

    async def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else ""
        if isinstance(answer, BackendError):
            raise answer
        if info.sent is not None:  # the request went out, as a real backend says
            info.sent()
        try:
            for index in range(0, len(answer), 3):
                info.deltas += 1
                yield answer[index : index + 3]
                if self.hold is not None:
                    await self.hold.wait()
        finally:
            self.closed += 1


@dataclass
class FakeModels:
    """The backend factory: scripted models per profile, and the real circuit breakers."""

    scripts: dict[str, Script]
    breakers: CircuitBreakers = field(default_factory=CircuitBreakers)

    async def backend(self, profile: ResolvedProfile) -> Script:
        return self.scripts[profile.name]

    def allow(self, key: tuple[str, str], now: float) -> float | None:
        return self.breakers.allow(key, now)

    def failure(self, key: tuple[str, str], now: float) -> None:
        self.breakers.failure(key, now)

    def success(self, key: tuple[str, str]) -> None:
        self.breakers.success(key)


class FakeHost:
    """An editor that applies and reports every edit at once, around one document."""

    def __init__(
        self, document: Document, models: FakeModels, *, mode: Mode = "fast", **settings: object
    ) -> None:
        self.document = document
        self.jobs = JobRegistry()
        self._mode: Mode = mode
        self._settings = load({}, {"streaming": "live", **settings}).settings
        self._models = models
        #: Every edit the editor applied: (start, end, text, the text it replaced).
        self.edits: list[tuple[Point, Point, str, str]] = []
        self.statuses: list[str] = []
        #: Set once the editor applied an edit.
        self.applied = asyncio.Event()
        self.ended: list[str] = []

    @property
    def mode(self) -> Mode:
        return self._mode

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def models(self) -> FakeModels:
        return self._models

    def profile(self, route: str, *, announce: bool) -> ResolvedProfile:
        name = "fast" if route == "fast" else "standard"
        own = getattr(self._settings.profiles, name)
        return ResolvedProfile(
            name, "openai-compatible", f"http://{name}.test/v1", f"{name}-model", None, None, own
        )

    async def excluded(self, uri: str) -> str | None:
        return None

    def other_texts(self, uri: str) -> Sequence[str]:
        return ()

    def package_names(self, path: str) -> frozenset[str] | None:
        return None

    async def apply_edit(
        self,
        uri: str,
        edit: SentEdit,
        *,
        document: Document,
        unreported: Sequence[SentEdit] = (),
        also: Sequence[SentEdit] = (),
    ) -> bool:
        await asyncio.sleep(0)  # the editor answers on a later turn of the loop
        for one in (edit, *also):
            replaced = document.get_text(one.start, one.end)
            self.edits.append((one.start, one.end, one.text, replaced))
            trackers = [(j.tracker, not j.is_finished and not j.settling) for j in self.jobs]
            apply_change(document, trackers, Change(one.start, one.end, one.text))
        self.applied.set()
        return True

    async def wait_reported(self, tracker: RegionTracker, seconds: float) -> bool:
        return not tracker.pending

    def status(self, job: Job, *, streaming: bool = False) -> None:
        self.statuses.append(job.state)

    async def begin(self, job: Job) -> None:
        return None

    def end(self, job: Job) -> None:
        self.ended.append(job.state)

    async def test_module(self, job: Job, source: Document) -> tuple[TestModule, Document | None]:
        raise AssertionError("no test-writing job here")

    async def write_tests(self, destination: TestModule, text: str) -> str:
        raise AssertionError("no test-writing job here")

    async def check_tests(
        self, destination: TestModule, module_text: str, *, run: bool
    ) -> tuple[bool, str]:
        raise AssertionError("no test-writing job here")


async def _run(
    host: FakeHost, kind: str, start: Point, end: Point, actions: Registry | None = None
) -> Job:
    """Place a job as its command would, run it to the end, return its record's job."""
    registry = actions or Registry()
    spec = registry.get(kind)
    assert spec is not None
    document = host.document
    placed = spec.load().start(document, CommandInput(start, end))
    job = Job(
        id=host.jobs.new_id(),
        kind=kind,
        uri=document.uri,
        range=(document.to_client(placed.start), document.to_client(placed.end)),
        tracker=RegionTracker(
            placed.start, placed.end, document.get_text(placed.start, placed.end)
        ),
        inputs=placed.inputs,
    )
    host.jobs.add(job)
    runner = JobRunner(host, registry, RouteStats())  # type: ignore[arg-type]
    job.task = asyncio.ensure_future(runner.run(job, document))
    await job.task
    return job


def _doc(text: str) -> Document:
    return Document("file:///w/t.py", text, language_id="python")


REGEX = "# regex: year\n# match: 2024\n# match: 1999\n# reject: 24\nx = 1\n"


def _end(text: str) -> Point:
    lines = text.split("\n")
    return Point(len(lines) - 1, len(lines[-1]))


# -- failover ------------------------------------------------------------------------------------


async def test_a_fast_model_that_is_down_hands_the_job_to_standard_before_any_edit() -> None:
    fast = Script("fast-model", BackendError("server", "fast is down (503)"))
    standard = Script("standard-model", "42")
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast, "standard": standard}))
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert job.state == "done" and (job.route, job.model) == ("standard", "standard-model")
    assert host.document.text == "x = 42\n"
    assert [(a.route, a.error) for a in job.attempts] == [
        ("fast", "fast is down (503)"),
        ("standard", None),
    ]
    assert "fast server → failover to standard" in job.reason
    assert len(fast.requests) == 1 and len(standard.requests) == 1


async def test_when_every_model_is_down_the_offline_engine_answers_last() -> None:
    fast = Script("fast-model", BackendError("connect", "no route to fast"))
    standard = Script("standard-model", BackendError("timeout", "standard timed out"))
    host = FakeHost(_doc(REGEX), FakeModels({"fast": fast, "standard": standard}))
    job = await _run(host, "generateRegex", Point(0, 0), Point(0, 0))
    assert job.state == "done" and job.route == "local"
    assert [a.route for a in job.attempts] == ["fast", "standard", "local"]
    assert "failover to standard" in job.reason and "failover to offline engine" in job.reason
    assert job.verification["ok"] is True
    assert "YEAR = re.compile(" in host.document.text


async def test_a_model_that_fails_after_its_first_edit_fails_the_job_without_failover() -> None:
    class Dropping(Script):
        async def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
            self.requests.append(request)
            info.deltas += 1
            yield "1 + "
            await asyncio.sleep(0.01)  # the first edit goes out
            raise BackendError("dropped", "the connection closed mid-stream")

    fast, standard = Dropping("fast-model"), Script("standard-model", "2")
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast, "standard": standard}))
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert job.state == "failed" and job.error == "the connection closed mid-stream"
    assert standard.requests == []  # text had landed: a second model would write over it
    assert host.document.text == "x = 1 + \n"
    assert host.ended == ["failed"]


# -- the refine loop and escalation ----------------------------------------------------------------


async def test_a_rejected_regex_is_asked_again_with_what_failed_and_only_the_pass_lands() -> None:
    fast = Script("fast-model", r"\d+", r"\d{4}")
    host = FakeHost(_doc(REGEX), FakeModels({"fast": fast, "standard": Script("s")}))
    job = await _run(host, "generateRegex", Point(0, 0), Point(0, 0))
    assert job.state == "done" and job.route == "fast"
    assert [a.verification and a.verification["ok"] for a in job.attempts] == [False, True]
    follow_up = fast.requests[1].messages[-1].content
    assert "A previous attempt failed" in follow_up and "'24'" in follow_up
    assert 'YEAR = re.compile(r"\\d{4}")' in host.document.text
    assert r"\d+" not in host.document.text  # the rejected answer never touched the buffer


async def test_rejected_fast_answers_in_auto_mode_escalate_to_standard() -> None:
    fast = Script("fast-model", r"\d+", r"\w+")
    standard = Script("standard-model", r"\d{4}")
    host = FakeHost(_doc(REGEX), FakeModels({"fast": fast, "standard": standard}), mode="auto")
    job = await _run(host, "generateRegex", Point(0, 0), Point(0, 0))
    assert job.state == "done" and job.route == "standard" and job.escalated
    assert "fast answers failed verification → escalated to standard" in job.reason
    assert len(fast.requests) == 2 and len(standard.requests) == 1


def _checked_action(accept: str) -> ActionSpec:
    """A run-time action (as user-defined ones will be): inserts at the cursor, and its verifier
    accepts only ``accept``; no refine, so a failing draft lands and auto mode escalates. It
    asks for the fast profile, as a retry on fast does (routing sends kinds it does not know,
    which ``fastKinds`` cannot list, to standard)."""

    class Checked:
        def start(self, document: Document, command: CommandInput) -> Start:
            return Start(command.start, command.end, Inputs(profile="fast"))

        def offers(self, view: OfferView) -> Sequence[Offer]:
            return ()

        def prepare(self, data: ActionInput) -> Draft:
            def verify(text: str) -> Verification:
                ok = text == accept
                return {"ok": ok, "details": "as asked" if ok else f"{text!r} is not {accept!r}"}

            request = ChatRequest((ChatMessage("user", "answer"),), max_tokens=64)
            return Draft(request=request, pipeline=Pipeline(), verify=verify)

    return ActionSpec(
        "checked", "Checked", "checked", "fastedit.checked", "position", implementation=Checked
    )


async def test_escalation_deletes_only_the_fast_drafts_own_text() -> None:
    text = "before = 1\nvalue = \nafter = 2\n"
    fast = Script("fast-model", "wrong()")
    standard = Script("standard-model", "right()")
    host = FakeHost(_doc(text), FakeModels({"fast": fast, "standard": standard}), mode="auto")
    actions = Registry()
    actions.add(_checked_action("right()"))
    job = await _run(host, "checked", Point(1, 8), Point(1, 8), actions)
    assert job.state == "done" and job.escalated and job.route == "standard"
    assert "fast draft failed verification" in job.reason
    assert host.document.text == "before = 1\nvalue = right()\nafter = 2\n"
    deleted = [replaced for _, _, _, replaced in host.edits if replaced]
    assert deleted == ["wrong()"]  # the one deletion: the fast draft, nothing of the user's
    assert [a.verification and a.verification["ok"] for a in job.attempts] == [False, True]
    assert job.metrics.edits >= 2


async def test_a_failing_draft_outside_auto_mode_lands_flagged() -> None:
    host = FakeHost(
        _doc("value = \n"),
        FakeModels({"fast": Script("fast-model", "wrong()"), "standard": Script("s")}),
    )
    actions = Registry()
    actions.add(_checked_action("right()"))
    job = await _run(host, "checked", Point(0, 8), Point(0, 8), actions)
    assert job.state == "done" and not job.escalated
    assert job.verification == {"ok": False, "details": "'wrong()' is not 'right()'"}
    assert host.document.text == "value = wrong()\n"


def test_a_run_time_entry_cannot_take_a_built_in_kind_or_command() -> None:
    actions = Registry()
    taken = ActionSpec("completeRest", "Mine", "mine", "fastedit.mine", "position")
    with pytest.raises(ValueError, match="already registered"):
        actions.add(taken)
    assert actions.get("completeRest") is not taken


# -- circuit breakers ------------------------------------------------------------------------------


async def test_a_model_failing_repeatedly_is_not_called_while_its_breaker_is_open() -> None:
    down = [BackendError("server", f"503 #{i}") for i in range(3)]
    fast = Script("fast-model", *down)
    standard = Script("standard-model", "1", "2", "3", "4")
    models = FakeModels({"fast": fast, "standard": standard})
    for _ in range(3):
        host = FakeHost(_doc("x = \n"), models)
        job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
        assert job.route == "standard"
    assert len(fast.requests) == 3
    host = FakeHost(_doc("x = \n"), models)
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert len(fast.requests) == 3  # the breaker is open: fast was not called
    assert job.state == "done" and job.route == "standard"
    assert "fast blocked → failover to standard" in job.reason
    assert "circuit open" in (job.attempts[0].error or "")


# -- cancellation ---------------------------------------------------------------------------------


async def test_cancel_mid_stream_closes_the_model_stream_and_keeps_what_the_editor_applied() -> (
    None
):
    fast = Script("fast-model", "first second third")
    fast.hold = asyncio.Event()
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast, "standard": Script("s")}))
    spec = Registry().get("completeRest")
    assert spec is not None
    job = Job(
        id="job-1",
        kind="completeRest",
        uri=host.document.uri,
        range=((0, 4), (0, 4)),
        tracker=RegionTracker(Point(0, 4), Point(0, 4), ""),
    )
    host.jobs.add(job)
    job.task = asyncio.ensure_future(
        JobRunner(host, Registry(), RouteStats()).run(job, host.document)  # type: ignore[arg-type]
    )
    await host.applied.wait()
    job.stop(None)
    await job.task
    assert job.state == "cancelled" and job.error is None
    assert fast.closed == 1
    applied = "".join(text for _, _, text, _ in host.edits)
    assert host.document.text == f"x = {applied}\n" and applied == "fir"
    assert host.ended == ["cancelled"]


# -- the parse check on streamed drafts (issue 15) -------------------------------------------------


def _go(text: str) -> Document:
    return Document("file:///w/main.go", text, language_id="go")


GO = (
    "package main\n\nfunc add(a, b int) int {\n\t\n}\n\n"
    "func sub(a, b int) int {\n\treturn a - b\n}\n"
)
GO_BAD = "if a > 0 {\n\t\treturn a + b"


async def test_a_draft_that_fails_the_parse_check_is_asked_again_with_the_parsers_message() -> None:
    fast = Script("fast-model", GO_BAD, "return a + b")
    host = FakeHost(_go(GO), FakeModels({"fast": fast, "standard": Script("s")}), mode="fast")
    job = await _run(host, "completeRest", Point(3, 1), Point(3, 1))
    assert job.state == "done" and job.route == "fast" and not job.escalated
    assert [a.verification and a.verification["ok"] for a in job.attempts] == [False, True]
    follow_up = fast.requests[1].messages
    assert follow_up[-2].role == "assistant" and follow_up[-2].content == GO_BAD
    assert "does not parse: Go syntax error" in follow_up[-1].content
    assert host.document.text == GO.replace("\t\n}", "\treturn a + b\n}", 1)
    # The second answer replaced only the first one's text.
    deleted = [replaced for _, _, _, replaced in host.edits if replaced]
    assert deleted == [GO_BAD]
    assert "asked again" in job.reason


async def test_a_draft_still_failing_the_parse_check_lands_flagged_with_the_parsers_message() -> (
    None
):
    fast = Script("fast-model", GO_BAD, GO_BAD)
    host = FakeHost(_go(GO), FakeModels({"fast": fast, "standard": Script("s")}), mode="fast")
    job = await _run(host, "completeRest", Point(3, 1), Point(3, 1))
    record = job.record()
    assert record["state"] == "done" and record["escalated"] is False
    assert record["verification"]["ok"] is False
    assert record["verification"]["details"].startswith("Go syntax error: line ")
    assert [a["verification"]["ok"] for a in record["attempts"]] == [False, False]
    assert host.document.text == GO.replace("\t\n}", "\t" + GO_BAD + "\n}", 1)
    assert record["metrics"]["edits"] >= 2


async def test_a_draft_failing_the_parse_check_in_auto_mode_escalates_after_one_retry() -> None:
    fast = Script("fast-model", GO_BAD, GO_BAD)
    standard = Script("standard-model", "return a + b")
    host = FakeHost(_go(GO), FakeModels({"fast": fast, "standard": standard}), mode="auto")
    job = await _run(host, "completeRest", Point(3, 1), Point(3, 1))
    # Small completions route fast in auto mode; the fast drafts fail, standard's passes.
    assert job.state == "done" and job.escalated and job.route == "standard", job.reason
    assert [(a.route, a.verification and a.verification["ok"]) for a in job.attempts] == [
        ("fast", False),
        ("fast", False),
        ("standard", True),
    ]
    assert host.document.text == GO.replace("\t\n}", "\treturn a + b\n}", 1)
    assert [replaced for _, _, _, replaced in host.edits if replaced] == [GO_BAD, GO_BAD]


async def test_a_good_draft_passes_the_parse_check_with_one_request() -> None:
    fast = Script("fast-model", "return a + b")
    host = FakeHost(_go(GO), FakeModels({"fast": fast, "standard": Script("s")}), mode="fast")
    job = await _run(host, "completeRest", Point(3, 1), Point(3, 1))
    assert (job.verification["ok"], job.verification["details"]) == (
        True,
        "Go parses around the edit; names: every name read resolves",
    )
    assert [(c["name"], c["ok"]) for c in job.verification["checks"]] == [
        ("parse", True),
        ("names", True),
    ]
    assert len(fast.requests) == 1


JS_BROKEN = (
    "function add(a, b) {\n  const x = (a + b;\n  return x;\n}\n\n"
    "function sub(a, b) {\n  return a - b;\n}\n"
)
JS_REGION_FIXED = "function add(a, b) {\n  const x = (a + b);\n  return x;\n}"


async def test_a_model_syntax_fix_beyond_python_lands_only_when_the_reparse_has_fewer_errors() -> (
    None
):
    unchanged = "function add(a, b) {\n  const x = (a + b;\n  return x;\n}"
    fast = Script("fast-model", unchanged, JS_REGION_FIXED)
    document = Document("file:///w/app.js", JS_BROKEN, language_id="javascript")
    host = FakeHost(document, FakeModels({"fast": fast, "standard": Script("s")}), mode="fast")
    job = await _run(host, "fixSyntax", Point(1, 0), Point(1, 0))
    assert job.state == "done" and job.route == "fast", job.error
    assert [a.verification and a.verification["ok"] for a in job.attempts] == [False, True]
    assert job.attempts[0].verification is not None
    assert "still a syntax error: line 2: missing ')'" in job.attempts[0].verification["details"]
    assert "missing ')'" in fast.requests[0].messages[-1].content
    assert host.document.text == JS_BROKEN.replace("(a + b;", "(a + b);")
    assert job.verification == {"ok": True, "details": "fixed (line 2: missing ')')"}


async def test_a_model_syntax_fix_that_adds_an_error_never_lands() -> None:
    worse = "function add(a, b) {\n  const x = (a + b);\n  return x;\n"
    fast = Script("fast-model", worse, worse)
    document = Document("file:///w/app.js", JS_BROKEN, language_id="javascript")
    host = FakeHost(document, FakeModels({"fast": fast, "standard": Script("s")}), mode="fast")
    job = await _run(host, "fixSyntax", Point(1, 0), Point(1, 0))
    # The failing answers never touched the buffer; the offline repair answered last.
    assert all(text != worse for _, _, text, _ in host.edits)
    assert [a.verification and a.verification["ok"] for a in job.attempts][:2] == [False, False]
    assert job.route == "local" and host.document.text == JS_BROKEN.replace("(a + b;", "(a + b);")


async def test_the_second_answer_goes_through_fresh_filters() -> None:
    """The fence filter of the first answer has seen its closing fence: reusing it would drop
    the second answer as commentary."""
    fenced = "```go\n" + GO_BAD + "\n```"
    fast = Script("fast-model", fenced, "```go\nreturn a + b\n```")
    host = FakeHost(_go(GO), FakeModels({"fast": fast, "standard": Script("s")}), mode="fast")
    job = await _run(host, "completeRest", Point(3, 1), Point(3, 1))
    assert [a.verification and a.verification["ok"] for a in job.attempts] == [False, True]
    assert host.document.text == GO.replace("\t\n}", "\treturn a + b\n}", 1)


async def test_the_offline_engine_repairs_a_missing_closer_beyond_python() -> None:
    document = Document("file:///w/app.js", JS_BROKEN, language_id="javascript")
    down = {  # every model down: the offline engine answers
        "fast": Script("fast-model", BackendError("connect", "no route to fast")),
        "standard": Script("standard-model", BackendError("connect", "no route to standard")),
    }
    host = FakeHost(document, FakeModels(down), mode="fast")
    job = await _run(host, "fixSyntax", Point(1, 0), Point(1, 0))
    assert job.state == "done" and job.route == "local", (job.error, job.reason)
    assert host.document.text == JS_BROKEN.replace("(a + b;", "(a + b);")
    assert job.verification["ok"] is True
    # Only the missing ')' was inserted: nothing deleted.
    assert all(replaced == "" or "(a + b;" in replaced for _, _, _, replaced in host.edits)


def test_route_speeds_keep_a_models_decode_speed_and_never_the_offline_engines() -> None:
    stats = RouteStats()
    for route, tokens in (("fast", 10), ("local", 1200)):
        job = Job("job", "completeRest", "file:///m.py", ((0, 0), (0, 0)), RegionTracker(
            Point(0, 0), Point(0, 0), ""), route=route)  # fmt: skip
        # 10 tokens, the 9 after the first in 30 ms (300 tok/s); the offline engine's pieces
        # would have made 1,200 "tokens" in no time.
        job.metrics = Metrics(started_at=0.0, first_token_at=0.3, tokens=tokens, finished_at=0.5)
        job.metrics.decode_from, job.metrics.decode_to = 0.3, 0.33
        stats.record_speed(job)
    speed = stats.speed()
    assert set(speed) == {"fast"}
    assert speed["fast"]["tokensPerSecond"]["p50"] == 300.0
    assert speed["fast"]["ttftMs"]["p50"] == 300.0


# -- what the editor hears, and when ---------------------------------------------------------------


class Ordered(FakeHost):
    """A host that logs, in order, the job's status, its progress, the model request, each edit."""

    def __init__(self, document: Document, models: FakeModels) -> None:
        super().__init__(document, models)
        self.log: list[str] = []
        self.begun = asyncio.Event()

    def status(self, job: Job, *, streaming: bool = False) -> None:
        self.log.append(f"status {job.state} {job.route or '-'}")

    async def begin(self, job: Job) -> None:
        self.log.append("progress")
        self.begun.set()

    async def apply_edit(self, uri: str, edit: SentEdit, **kwargs: object) -> bool:
        self.log.append("edit")
        return await super().apply_edit(uri, edit, **kwargs)  # type: ignore[arg-type]


class Logged(Script):
    """A model that logs its request and may stay silent until ``release`` is set."""

    def __init__(self, log: list[str], answer: str) -> None:
        super().__init__("fast-model", answer)
        self.log = log
        self.release: asyncio.Event | None = None

    async def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
        self.log.append("request")
        if info.sent is not None:
            sent, info.sent = info.sent, None
            sent()
        if self.release is not None:
            await self.release.wait()
        async for piece in super().stream(request, info):
            yield piece


async def test_the_status_follows_the_request_and_the_progress_follows_the_edit() -> None:
    # A model answering at once (a loopback stub): nothing is written before the model request;
    # one status with the route once it is out, before the first edit (editors that ran the
    # command through their own code-action menu know the job's edits by it); the progress after.
    host = Ordered(_doc("x = \n"), FakeModels({}))
    fast = Logged(host.log, "42")
    host.models.scripts["fast"] = fast
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert job.state == "done" and host.document.text == "x = 42\n"
    assert host.log[:3] == ["request", "status running fast", "edit"], host.log
    assert host.log.index("progress") > host.log.index("edit"), host.log


async def test_a_silent_model_does_not_hold_back_the_jobs_progress() -> None:
    # A hosted model's first token takes 50 ms or more: the progress goes out meanwhile.
    host = Ordered(_doc("x = \n"), FakeModels({}))
    fast = Logged(host.log, "42")
    fast.release = asyncio.Event()
    host.models.scripts["fast"] = fast
    task = asyncio.ensure_future(_run(host, "completeRest", Point(0, 4), Point(0, 4)))
    await host.begun.wait()  # while the model says nothing
    assert "edit" not in host.log and host.log[:2] == ["request", "status running fast"]
    fast.release.set()
    job = await task
    assert job.state == "done" and host.log.count("progress") == 1, host.log


# -- the stages one by one (issue 27) --------------------------------------------------------------


class Stopping(Script):
    """A model that ends each answer with the given stop reason (``finish_reason``)."""

    def __init__(self, name: str, *answers: tuple[str, str]) -> None:
        super().__init__(name, *(text for text, _ in answers))
        self.stops = [stop for _, stop in answers]

    async def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
        stop = self.stops.pop(0)
        async for piece in super().stream(request, info):
            yield piece
        info.stop_reason, info.stop_detail = normalised_stop(stop), stop


def _run_state(host: FakeHost, kind: str = "completeRest") -> JobRun:
    """A job's run as the runner prepares it (no task: the stages are called one by one)."""
    job = Job("job-1", kind, host.document.uri, ((0, 4), (0, 4)), RegionTracker(
        Point(0, 4), Point(0, 4), ""))  # fmt: skip
    host.jobs.add(job)
    runner = JobRunner(host, Registry(), RouteStats())  # type: ignore[arg-type]
    return runner.prepare(job, Announcer(host, job))  # type: ignore[arg-type]


async def test_prepare_looks_the_action_up_once_and_decides_a_rewrites_region() -> None:
    host = FakeHost(_doc("x = 1\n"), FakeModels({}))
    job = Job("job-1", "editSelection", host.document.uri, ((0, 0), (0, 5)), RegionTracker(
        Point(0, 0), Point(0, 5), "x = 1"))  # fmt: skip
    run = JobRunner(host, Registry(), RouteStats()).prepare(job, Announcer(host, job))  # type: ignore[arg-type]
    assert run.spec.kind == "editSelection" and run.spec.strategy == "plan_apply"
    assert isinstance(job.tracker, RewriteTracker)


def test_the_registry_holds_each_actions_strategy() -> None:
    strategies = {spec.kind: spec.strategy for spec in Registry()}
    assert strategies == {
        "generateRegex": "direct",
        "fixSyntax": "direct",
        "generateTests": "test_module",
        "completeRest": "direct",
        "editSelection": "plan_apply",
    }


async def test_an_unknown_kind_fails_the_job_with_a_message() -> None:
    host = FakeHost(_doc("x = \n"), FakeModels({}))
    job = Job("job-1", "nothing", host.document.uri, ((0, 4), (0, 4)), RegionTracker(
        Point(0, 4), Point(0, 4), ""))  # fmt: skip
    host.jobs.add(job)
    await JobRunner(host, Registry(), RouteStats()).run(job, host.document)  # type: ignore[arg-type]
    assert job.state == "failed" and job.error == "nothing is not available"


async def test_a_draft_the_action_cannot_make_fails_the_job_with_the_actions_reason() -> None:
    host = FakeHost(_doc("x = 1\n"), FakeModels({}))
    run = _run_state(host, "generateRegex")
    with pytest.raises(JobFailedError, match="example"):
        run.drafts.prepare(run.job, host.document, run.profile("fast"))


async def test_the_recorder_is_offered_only_with_tests_run_and_a_test_module_port() -> None:
    host = FakeHost(_doc("x = 1\n"), FakeModels({}), tests={"run": True})
    run = _run_state(host)
    run.job.destination = TestModule(
        "/w/t.py", "file:///w/t.py", "m", "", "file:///w/m.py", "", False
    )
    assert run.drafts.recorder(run.job) is None  # no TestModuleHost: nothing of the user's runs


async def test_a_model_whose_breaker_is_open_is_blocked_before_any_request() -> None:
    fast = Script("fast-model", "1")
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast}))
    profile = host.profile("fast", announce=False)
    key = ("http://fast.test/v1", "fast-model")
    for _ in range(3):
        failed(host, key, BackendError("server", "503"))  # type: ignore[arg-type]
    failed(host, key, BackendError("rate_limit", "429"))  # type: ignore[arg-type]
    with pytest.raises(BackendError, match="circuit open") as raised:
        await open_model(host, profile)  # type: ignore[arg-type]
    assert raised.value.kind == "blocked" and fast.requests == []


def test_failover_goes_along_the_chain_and_rejected_answers_escalate_only_in_auto_mode() -> None:
    routes = failover_chain("fast", ("fast", "standard", "local"))
    assert routes == ["fast", "standard", "local"]
    assert after_failure("fast", BackendError("timeout", "t"), routes, 0) == 1
    assert after_failure("fast", BackendError("dropped", "d"), routes, 0) is None
    assert after_failure("auto", BackendError("rejected", "r"), routes, 0) == 1
    assert after_failure("fast", BackendError("rejected", "r"), routes, 0) == 2
    job = Job("j", "completeRest", "file:///m.py", ((0, 0), (0, 0)), RegionTracker(
        Point(0, 0), Point(0, 0), ""))  # fmt: skip
    step = failover_step(job, BackendError("rate_limit", "r"), "fast", "local", True)
    assert step == "fast rate limit → failover to offline engine" and not job.escalated
    step = failover_step(job, BackendError("rejected", "r"), "fast", "standard", False)
    assert step == "fast answers failed verification → escalated to standard" and job.escalated


async def test_a_retry_forces_its_route_without_asking_routing() -> None:
    host = FakeHost(_doc("x = \n"), FakeModels({}), mode="auto")
    run = _run_state(host)
    run.job.inputs = Inputs(profile="standard")
    decision = decide(run, host.document, RouteStats())
    assert (decision.profile, decision.reason) == ("standard", "retry with standard")


async def test_the_guard_refuses_a_document_that_matches_context_exclude() -> None:
    class Excluding(FakeHost):
        async def excluded(self, uri: str) -> str | None:
            return ".env*"

    host = Excluding(_doc("x = \n"), FakeModels({"fast": Script("fast-model", "1")}))
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert job.state == "failed" and "matches context.exclude (.env*)" in (job.error or "")
    assert host.models.scripts["fast"].requests == [] and host.edits == []


def test_the_reason_is_the_jobs_steps_in_order() -> None:
    job = Job("j", "completeRest", "file:///m.py", ((0, 0), (0, 0)), RegionTracker(
        Point(0, 0), Point(0, 0), ""))  # fmt: skip
    job.step("fast mode")
    job.amend(" → offline engine (no key)")
    job.step("no suggestion")
    assert job.steps == ["fast mode → offline engine (no key)", "no suggestion"]
    assert job.record()["reason"] == "fast mode → offline engine (no key); no suggestion"


# -- cut-off answers (issue 27) --------------------------------------------------------------------


async def test_an_answer_cut_off_for_length_lands_flagged_as_truncated() -> None:
    fast = Stopping("fast-model", ("total = 1 + ", "length"))
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast, "standard": Script("s")}))
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    record = job.record()
    assert record["state"] == "done" and record["truncated"] == "length"
    assert record["verification"]["ok"] is False
    assert record["verification"]["details"].startswith("the answer was cut off after 4 tokens")
    assert host.document.text == "x = total = 1 + \n"  # what landed stays, flagged
    assert len(fast.requests) == 1  # not asked again to correct: the budget, not the model


async def test_a_content_filter_stop_is_flagged_as_stopped_by_the_filter() -> None:
    fast = Stopping("fast-model", ("42", "content_filter"))
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast, "standard": Script("s")}))
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert job.state == "done" and job.truncated == "content_filter"
    assert job.verification == {
        "ok": False,
        "details": "the answer was cut off: stopped by the provider's filter",
    }


async def test_a_refusal_with_nothing_to_insert_lands_nothing_and_says_so() -> None:
    fast = Stopping("fast-model", ("", "refusal"))
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast, "standard": Script("s")}))
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert job.state == "done" and job.truncated == "refusal" and host.edits == []
    assert job.reason.endswith("the model refused")
    assert job.verification["ok"] is None


async def test_auto_mode_asks_a_cut_off_answer_again_with_the_profiles_max_tokens() -> None:
    fast = Stopping("fast-model", ("rig", "length"), ("right()", "stop"))
    host = FakeHost(
        _doc("value = \n"), FakeModels({"fast": fast, "standard": Script("s")}), mode="auto"
    )
    actions = Registry()
    actions.add(_checked_action("right()"))
    job = await _run(host, "checked", Point(0, 8), Point(0, 8), actions)
    assert job.state == "done" and job.truncated is None and not job.escalated
    assert host.document.text == "value = right()\n"  # the answer once
    assert [replaced for _, _, _, replaced in host.edits if replaced] == ["rig"]
    assert [r.max_tokens for r in fast.requests] == [64, host.settings.profiles.fast.max_tokens]
    assert "fast answer cut off after 1 tokens → asked again with maxTokens" in job.reason


async def test_a_cut_off_answer_already_at_max_tokens_escalates_in_auto_mode() -> None:
    fast = Stopping("fast-model", ("1 + ", "length"))
    standard = Stopping("standard-model", ("1 + 2", "stop"))
    host = FakeHost(_doc("x = \n"), FakeModels({"fast": fast, "standard": standard}), mode="auto")
    job = await _run(host, "completeRest", Point(0, 4), Point(0, 4))
    assert job.state == "done" and job.escalated and job.route == "standard", job.reason
    assert job.truncated is None and job.verification["ok"] is True
    assert host.document.text == "x = 1 + 2\n" and len(fast.requests) == 1


class DiskOnly(FakeHost):
    """An editor that cannot open the test module: the tests go to the file (the port of test
    writing, :class:`~fastedit_lsp.pipeline.ports.TestModuleHost`)."""

    def __init__(self, document: Document) -> None:
        super().__init__(document, FakeModels({}), mode="fast")
        self.written: list[str] = []

    async def test_module(self, job: Job, source: Document) -> tuple[TestModule, Document | None]:
        module = TestModule(
            "/w/test_t.py", "file:///w/test_t.py", "t", source.text, source.uri, "", True
        )
        return module, None

    async def write_tests(self, destination: TestModule, text: str) -> str:
        self.written.append(text)
        return f"written to {destination.path}"


async def test_the_test_module_strategy_writes_the_offline_tests_through_its_own_port() -> None:
    host = DiskOnly(_doc("def add(a, b):\n    return a + b\n"))
    spec = Registry().get("generateTests")
    assert spec is not None and spec.strategy == "test_module"
    placed = spec.load().start(host.document, CommandInput(Point(0, 4), Point(0, 4)))
    job = Job("job-1", "generateTests", host.document.uri, ((0, 4), (0, 4)), RegionTracker(
        placed.start, placed.end, ""), inputs=placed.inputs)  # fmt: skip
    host.jobs.add(job)
    runner = JobRunner(host, Registry(), RouteStats(), tests=host)  # type: ignore[arg-type]
    await runner.run(job, host.document)
    assert job.state == "done" and job.route == "local", (job.error, job.reason)
    (written,) = host.written
    assert "def test_" in written and "add(" in written
    assert job.reason.endswith("written to /w/test_t.py")
    assert host.document.text == "def add(a, b):\n    return a + b\n"  # the source untouched


class ReadsAnotherModule(DiskOnly):
    """The module under test calls a helper of another project module, which the generator reads
    (and parses) through ``read_module``."""

    async def test_module(self, job: Job, source: Document) -> tuple[TestModule, Document | None]:
        module, _ = await super().test_module(job, source)
        helpers = "def scale(x):\n    return x * 2\n"
        read = {"helpers": helpers}.get
        return replace(module, read_module=read), None


async def test_a_test_writing_job_keeps_no_tree_of_the_other_modules_it_read() -> None:
    from fastedit_lsp.engines.test_stubs import bindings

    source = "from helpers import scale\n\n\ndef add(a, b):\n    return scale(a) + b\n"
    host = ReadsAnotherModule(_doc(source))
    spec = Registry().get("generateTests")
    assert spec is not None
    placed = spec.load().start(host.document, CommandInput(Point(3, 4), Point(3, 4)))
    job = Job("job-1", "generateTests", host.document.uri, ((3, 4), (3, 4)), RegionTracker(
        placed.start, placed.end, ""), inputs=placed.inputs)  # fmt: skip
    host.jobs.add(job)
    bindings.forget_parsed()
    read: list[str] = []
    parse = bindings.ast.parse

    def counted(text: str, *args: object, **kwargs: object) -> object:
        read.append(text)
        return parse(text, *args, **kwargs)  # type: ignore[call-overload]

    bindings.ast.parse = counted  # type: ignore[assignment]
    try:
        runner = JobRunner(host, Registry(), RouteStats(), tests=host)  # type: ignore[arg-type]
        await runner.run(job, host.document)
    finally:
        bindings.ast.parse = parse
    assert job.state == "done", (job.error, job.reason)
    assert "def scale" in "".join(read), "the generator never read the helper module"
    assert bindings._parsed.cache_info().currsize == 0


async def test_a_test_writing_job_without_the_test_module_port_fails_with_a_message() -> None:
    host = DiskOnly(_doc("def add(a, b):\n    return a + b\n"))
    job = Job("job-1", "generateTests", host.document.uri, ((0, 4), (0, 4)), RegionTracker(
        Point(0, 4), Point(0, 4), ""))  # fmt: skip
    host.jobs.add(job)
    await JobRunner(host, Registry(), RouteStats()).run(job, host.document)  # type: ignore[arg-type]
    assert job.state == "failed" and "cannot write test modules" in (job.error or "")
    assert host.written == []
