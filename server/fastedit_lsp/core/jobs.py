"""Job records: what each action did, as editors, scripts and tests see it.

Stdlib only. A :class:`Job` is created by a command with its typed :class:`Inputs`, filled in by
the job pipeline as data flows through it, and serialised by :meth:`Job.record` into the
camelCase record of the editor contract (docs/actions.md, "Commands").
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .rewrite_tracking import RewriteTracker
from .tracking import RegionTracker

#: An action's kind as the job record names it (``completeRest``...): the action registry's keys.
Kind = str
#: A profile a retry may force.
Forced = Literal["fast", "standard"]
State = Literal["running", "done", "cancelled", "failed", "reverted"]
FINISHED: frozenset[State] = frozenset({"done", "cancelled", "failed", "reverted"})

#: The verification of a job with nothing to check its result with.
NOTHING_TO_VERIFY: dict[str, Any] = {"ok": None, "details": "nothing to verify"}

#: The route of the offline engine (no model: no tokens, no speed).
LOCAL = "local"

#: How many records ``fastedit.status`` returns (and the registry keeps).
KEEP = 50


@dataclass(frozen=True)
class Inputs:
    """What a job's command asked for beyond its range; kept with the job, for retry.

    Actions that need more subclass it (``RegexInputs``, ``TestInputs``); a retry copies the
    inputs with :func:`dataclasses.replace`, forcing a profile.
    """

    #: Error diagnostics in range, as the editor reported them with the code action (routing).
    diagnostics: int = 0
    #: The profile a retry forces (None: routing decides).
    profile: Forced | None = None


@dataclass(frozen=True)
class InstructionInputs(Inputs):
    """Inputs of an action that follows the user's instruction (edit selection)."""

    instruction: str = ""
    #: The command's ``plan`` (plan and apply: auto, on, off); None: the setting decides.
    plan: str | None = None


@dataclass(frozen=True)
class RunInputs(InstructionInputs):
    """Inputs of a user-defined action (``fastedit.run``): its id, its instruction and route."""

    action: str = ""


@dataclass(frozen=True)
class TestModule:
    """Where a test-writing job writes: the test module, found (or created) by the host.

    The job moves to this document (it appends at its end); its source module stays the one the
    command named.
    """

    # Not a pytest class (its name starts with "Test").
    __test__ = False

    #: The test module on disk, and its URI.
    path: str
    uri: str
    #: The dotted import path of the module under test, its text and URI.
    module: str
    source: str
    source_uri: str
    #: The test module's text before the job (empty for a new module).
    existing: str
    #: Whether the job created the file (an exclusive create: never an overwrite).
    created: bool
    #: The source of a workspace module by dotted name, None when it is not one.
    read_module: Callable[[str], str | None] = field(default=lambda _dotted: None, repr=False)
    #: Whether the project has ``hypothesis`` (read from its environment's files): property
    #: tests only then, plain values otherwise.
    hypothesis: bool = True
    #: How the tests reach a module the editor did not open for the server: ``disk`` (written
    #: whole at the end: a new file in one exclusive create, else appended), ``edit`` (one
    #: workspace edit at the end: the editor holds a buffer of it) or ``create`` (one workspace
    #: edit at the end that creates it, ``CreateFile``).
    delivery: str = "disk"


@dataclass
class Attempt:
    route: str
    model: str
    verification: dict[str, Any] | None = None
    #: Why the attempt gave way (a failover), when it did.
    error: str | None = None
    #: Plan and apply: ``plan`` (the standard model's update) or ``apply`` (its merge).
    stage: str | None = None
    #: How long the stage took, and why it ran (or what became of it).
    elapsed_ms: float | None = None
    why: str | None = None

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "route": self.route,
            "model": self.model,
            "verification": self.verification,
        }
        if self.error is not None:
            out["error"] = self.error
        if self.stage is not None:
            out |= {"stage": self.stage, "elapsedMs": self.elapsed_ms, "why": self.why}
        return out


@dataclass
class Metrics:
    """A job's figures: time to the first token, the model's decode speed, edits, elapsed time.

    The decode speed is the model's own: the tokens after the first ÷ the time from the first to
    the last token of the stream that answered (an escalation's, after a failed draft), so
    neither the time to the first token nor the editor's time to apply the edits lowers it. The
    offline engine has no tokens and no first token: it reports only ``elapsedMs``.
    """

    started_at: float = field(default_factory=time.monotonic)
    #: When the job's first token arrived (time to first token).
    first_token_at: float | None = None
    finished_at: float | None = None
    #: When the editor acknowledged the job's last edit: its text was all in the buffer.
    landed_at: float | None = None
    tokens: int = 0
    edits: int = 0
    #: When the first and the last token of the answering stream arrived (decode speed).
    decode_from: float | None = None
    decode_to: float | None = None
    #: Predicted-output tokens the provider accepted / rejected (a rewrite sent with one).
    accepted_prediction_tokens: int | None = None
    rejected_prediction_tokens: int | None = None

    def tokens_per_second(self) -> float | None:
        """Tokens after the first ÷ seconds from the first to the last token (None: too few)."""
        if self.decode_from is None or self.decode_to is None or self.tokens < 2:
            return None
        seconds = self.decode_to - self.decode_from
        return round((self.tokens - 1) / seconds, 1) if seconds > 0 else None

    def record(self, *, offline: bool = False) -> dict[str, Any]:
        """The record's ``metrics``; ``offline``: the offline engine answered (no speed)."""
        end = self.finished_at or time.monotonic()
        ttft = None
        if self.first_token_at is not None and not offline:
            ttft = round((self.first_token_at - self.started_at) * 1000, 1)
        return {
            "ttftMs": ttft,
            "tokens": 0 if offline else self.tokens,
            "tokensPerSecond": None if offline else self.tokens_per_second(),
            "edits": self.edits,
            "elapsedMs": round((end - self.started_at) * 1000, 1),
            # What the user waited for the text (the job then waits for the editor's report of
            # it, up to a second: eglot reports after 0.5 s idle, Neovim after 150 ms).
            "landedMs": (
                None
                if self.landed_at is None
                else round((self.landed_at - self.started_at) * 1000, 1)
            ),
        } | (
            {
                "acceptedPredictionTokens": self.accepted_prediction_tokens,
                "rejectedPredictionTokens": self.rejected_prediction_tokens or 0,
            }
            if self.accepted_prediction_tokens is not None
            else {}
        )


@dataclass
class Job:
    """One action on one document region."""

    id: str
    kind: Kind
    uri: str
    #: The original target range in client coordinates: ((line, character), (line, character)).
    range: tuple[tuple[int, int], tuple[int, int]]
    tracker: RegionTracker
    state: State = "running"
    route: str = ""
    model: str = ""
    #: Why the job took its route, and what happened on the way (failover, escalation...), in
    #: order: the record's ``reason`` is these steps joined with "; ".
    steps: list[str] = field(default_factory=list)
    escalated: bool = False
    #: Why the model stopped early, when it did (``length``, ``content_filter``,
    #: ``max_tokens``, ``refusal``): the answer that landed is cut off.
    truncated: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    verification: dict[str, Any] = field(default_factory=lambda: dict(NOTHING_TO_VERIFY))
    error: str | None = None
    metrics: Metrics = field(default_factory=Metrics)
    #: The request's inputs beyond the range (instruction...), for retry.
    inputs: Inputs = field(default_factory=Inputs)
    #: Where a test-writing job writes, once found (kept for retry).
    destination: TestModule | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    #: Why the server stopped the stream (a conflict, a closed document); None for a user cancel.
    stop_reason: str | None = None
    #: The stream is over; the job waits for the editor to report its last edits.
    settling: bool = False
    #: The work-done progress token, when the client shows progress.
    progress_token: str | None = None
    #: A line the job added outside its region (``import re``), for revert to remove again.
    added_line: str | None = None
    #: A rewrite's hunks are highlighted for review (setting ``review: hunks``).
    review: bool = False
    #: What the job is busy with before it edits, for its progress ("recording fold
    #: (12/40)"); empty otherwise.
    activity: str = ""
    #: The profile's speed tier: ``{"asked": "fast", "served": "fast" | "standard" | None}``
    #: (None: the response did not say); None when the profile asks for none.
    speed_tier: dict[str, str | None] | None = None

    @property
    def is_finished(self) -> bool:
        return self.state in FINISHED

    @property
    def reason(self) -> str:
        """Why this route, and what happened on the way: the steps, in order."""
        return "; ".join(self.steps)

    def step(self, text: str) -> None:
        """Add what the job did next to its reason."""
        self.steps.append(text)

    def amend(self, text: str) -> None:
        """Complete the job's last step (`` → offline engine (...)``)."""
        if self.steps:
            self.steps[-1] += text
        else:
            self.steps.append(text.lstrip())

    def stop(self, reason: str | None) -> None:
        """Stop a running job's stream; the pipeline records ``reason`` (None: the user's
        cancel)."""
        if self.stop_reason is None:
            self.stop_reason = reason
        # Cancelled once: a second cancel (the cancel command and the progress' button) would
        # interrupt the job's cleanup, which closes the model's stream.
        if self.task is not None and not self.task.done() and not self.task.cancelling():
            self.task.cancel()

    def finish(self, state: State, error: str | None = None) -> None:
        self.state = state
        if error is not None:
            self.error = error
        if self.metrics.finished_at is None:
            self.metrics.finished_at = time.monotonic()
        self.finished.set()

    def record(self) -> dict[str, Any]:
        (sl, sc), (el, ec) = self.range
        out: dict[str, Any] = {
            "jobId": self.id,
            "kind": self.kind,
            "state": self.state,
            "uri": self.uri,
            "range": {
                "start": {"line": sl, "character": sc},
                "end": {"line": el, "character": ec},
            },
            "route": self.route,
            "model": self.model,
            "reason": self.reason,
            "escalated": self.escalated,
            "attempts": [a.record() for a in self.attempts],
            "verification": self.verification,
            "metrics": self.metrics.record(offline=self.route == LOCAL),
        }
        if self.error is not None:
            out["error"] = self.error
        if self.truncated is not None:
            out["truncated"] = self.truncated
        if self.speed_tier is not None:
            out["speedTier"] = dict(self.speed_tier)
        if isinstance(self.inputs, RunInputs):
            out["kind"], out["action"] = "run", self.inputs.action
        if isinstance(self.tracker, RewriteTracker) and self.tracker.hunks:
            out["hunks"] = self.tracker.hunk_records()
        return out


def speed_line(job: Job) -> str:
    """What progress shows: "⚡ fast · <model> · 1,840 tok/s · first token 120 ms", or
    "○ local · offline · 12 ms" for the offline engine; then what the job is busy with, if
    anything ("recording fold (12/40)")."""
    offline = job.route == LOCAL
    metrics = job.metrics.record(offline=offline)
    icon = {"fast": "⚡ ", "standard": "◆ ", LOCAL: "○ "}.get(job.route, "")
    # The offline engine's model is "offline": its figures say so once.
    parts = [f"{icon}{job.route or 'routing'}", "" if offline else job.model or "…"]
    if job.speed_tier is not None and not offline:
        parts.append(tier_text(job.speed_tier))
    parts.append(figures_text(metrics, offline=offline))
    parts.append(job.activity)
    return " · ".join(p for p in parts if p)


def tier_text(tier: dict[str, str | None]) -> str:
    """ "fast tier", or "fast tier asked, standard served" when the provider fell back."""
    asked, served = tier.get("asked"), tier.get("served")
    if served is None or served == asked:
        return f"{asked} tier"
    return f"{asked} tier asked, {served} served"


def figures_text(metrics: dict[str, Any], *, offline: bool) -> str:
    """A record's figures as editors show them: "1,840 tok/s · first token 120 ms" for a model
    (what is known so far while it streams), "offline · 12 ms" for the offline engine."""
    if offline:
        shown = metrics.get("landedMs") or metrics.get("elapsedMs")
        return f"offline · {shown:,.0f} ms" if shown else ""
    parts = []
    if metrics.get("tokensPerSecond"):
        parts.append(f"{metrics['tokensPerSecond']:,.0f} tok/s")
    elif metrics.get("tokens"):
        parts.append(f"{metrics['tokens']} tokens")
    if metrics.get("ttftMs") is not None:
        parts.append(f"first token {metrics['ttftMs']:,.0f} ms")
    return " · ".join(parts)


class JobRegistry:
    """Every job of the session, newest last; finished ones beyond :data:`KEEP` are forgotten."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        #: The jobs not seen finished yet (a few): :meth:`running` looks only at these, where
        #: it looked at every kept job on each command and each keystroke.
        self._live: dict[str, Job] = {}
        self._ids = itertools.count(1)

    def new_id(self) -> str:
        return f"job-{next(self._ids)}"

    def add(self, job: Job) -> None:
        self._jobs[job.id] = job
        self._live[job.id] = job
        excess = len(self._jobs) - KEEP
        if excess > 0:
            # The oldest finished ones go (usually the first one looked at).
            doomed: list[str] = []
            for old in self._jobs.values():
                if old.is_finished:
                    doomed.append(old.id)
                    if len(doomed) == excess:
                        break
            for job_id in doomed:
                del self._jobs[job_id]

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def __iter__(self) -> Iterator[Job]:
        return iter(self._jobs.values())

    def running(self, uri: str | None = None) -> list[Job]:
        live = self._live
        for job_id in [i for i, j in live.items() if j.is_finished]:
            del live[job_id]
        return [j for j in live.values() if uri in (None, j.uri)]

    def last_finished(self, uri: str | None = None) -> Job | None:
        for job in reversed(self._jobs.values()):
            if job.is_finished and uri in (None, job.uri):
                return job
        return None

    def records(self) -> list[dict[str, Any]]:
        return [j.record() for j in list(self._jobs.values())[-KEEP:]]
