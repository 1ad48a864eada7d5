"""A hypothesis state machine over one real server: jobs, typing, cancels, reverts, mode changes.

Extends test_interleavings.py (one job, one schedule of typing) to many jobs on two documents,
started, cancelled and reverted in any order while the user types before, inside and after the
streamed text, reported promptly or late and batched. After every step:

- every character the user typed is still in the buffer, in order (jobs only ever add their
  own letters; the buffer without them is the user's text);
- jobs never share a region: two running jobs' texts never interleave, and a job asked for at the
  end of a running job's text is refused (checked where changes are reported promptly, so that
  the editor's and the server's coordinates agree);
- at rest, the server's copy of each document equals the editor's.

The documents are plain text: no check runs on a job's letters, so auto mode never asks the
model a second time (an escalation or a failover would take the answer scripted for the next
job). Escalation has its own tests (test_modes.py, test_names_check*.py).

pytest-lsp's client lives in an event loop of its own thread: hypothesis' stateful runner is
synchronous, each rule runs its coroutine there and waits for it.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from pygls.exceptions import JsonRpcException

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor, _plain, hermetic_env, start_editor, stop_editor
from tests.support.leaks import DEBUG_STATS
from tests.support.reliability import RECORDER

T = TypeVar("T")
LETTERS = "QRSTUVWXYZ"  # one per job; the user never types them
TYPED = st.text(st.sampled_from(["a", "b", " ", "\n", "é", "😀"]), min_size=1, max_size=3)
TEXT = "import os\nvalue = \nother = \nprint(value)\n"
EXAMPLES, STEPS = 12, 14
REQUEST_FAILED = -32803


class Session:
    """The server, the stub and an event loop in a thread, shared by every example."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stub: StubModelServer = self.run(StubModelServer.start())
        self.editor: Editor = self.run(
            start_editor(
                hermetic_env(
                    FASTEDIT_FAST_BASE_URL=self.stub.base_url,
                    FASTEDIT_FAST_MODEL="stub-fast",
                    FASTEDIT_STANDARD_BASE_URL=self.stub.base_url,
                    FASTEDIT_STANDARD_MODEL="stub-strong",
                )
            )
        )
        self.examples = 0

    def run(self, coro: Coroutine[Any, Any, T], seconds: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(seconds)

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """Call a synchronous editor method in the loop's thread (it sends notifications)."""

        async def call() -> T:
            return function(*args)

        return self.run(call())

    def close(self) -> None:
        self.run(stop_editor(self.editor))
        self.run(self.stub.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def session() -> Iterator[Session]:
    shared = Session()
    try:
        yield shared
    finally:
        shared.close()


class Jobs(RuleBasedStateMachine):
    session: Session

    def __init__(self) -> None:
        super().__init__()
        self.s = self.session
        self.editor = self.s.editor
        self.s.examples += 1
        base = f"file:///tmp/fastedit-sm/{self.s.examples}"
        self.uris = [f"{base}-a.txt", f"{base}-b.txt"]
        #: Each document without the jobs' letters: what the user has.
        self.expected = dict.fromkeys(self.uris, TEXT)
        #: Job id -> (uri, letter).
        self.jobs: dict[str, tuple[str, str]] = {}
        #: Jobs asked for, accepted or not: preconditions depend on this, never on timing
        #: (hypothesis must see the same rules available when it replays an example).
        self.asked = 0
        self.requests = 0

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.s.run(coro)

    @initialize(batched=st.booleans())
    def open_documents(self, batched: bool) -> None:
        self.editor.sync = "batched" if batched else "prompt"
        self.editor.batch_delay = 0.03
        for uri in self.uris:
            self.s.call(self.editor.open, uri, TEXT, "plaintext")
        self.s.call(self.editor.flush)
        self.requests = len(self.s.stub.requests)

    # -- helpers ---------------------------------------------------------------------------

    def _text(self, uri: str) -> str:
        return self.editor.text(uri)

    def _running(self) -> set[str]:
        status = self.run(self.editor.command("fastedit.status"))
        return {j["jobId"] for j in status["jobs"] if j["state"] == "running"}

    def _span(self, uri: str, letter: str) -> tuple[int, int] | None:
        text = self._text(uri)
        first, last = text.find(letter), text.rfind(letter)
        return None if first < 0 else (first, last + 1)

    def _offset(self, uri: str, where: str) -> int:
        text = self._text(uri)
        spans = [self._span(uri, letter) for u, letter in self.jobs.values() if u == uri]
        spans = [s for s in spans if s is not None]
        line_end = text.index("\n", text.index("value = ")) if "value = " in text else 0
        return {
            "doc-start": 0,
            "line-end": line_end,
            "doc-end": len(text),
            "inside": spans[-1][0] + 1 if spans else line_end,
            "after": spans[-1][1] if spans else line_end,
        }[where]

    def _one_request_per_job(self) -> None:
        recorded = self.run(self.s.stub.wait_for_requests(self.requests))
        # A second request of one job (an escalation, a failover) would have taken another
        # job's letters: say so plainly rather than fail later on a letter out of place.
        assert len(recorded) == self.requests, [r.body.get("model") for r in recorded]

    # -- rules -----------------------------------------------------------------------------

    @precondition(lambda self: self.asked < len(LETTERS))
    @rule(doc=st.integers(0, 1), where=st.sampled_from(["line-end", "after", "doc-end"]))
    def start_job(self, doc: int, where: str) -> None:
        uri = self.uris[doc]
        letter = LETTERS[self.asked]
        self.asked += 1
        offset = self._offset(uri, where)
        self.s.stub.script(Answer(text=letter * 40, tps=400))
        try:
            started = self.run(
                self.editor.command(
                    "fastedit.completeRest", {"uri": uri, "position": self.editor.pos(uri, offset)}
                )
            )
        except JsonRpcException as exc:
            self.s.stub._script.pop()  # not asked for: keep the letters one per job
            assert exc.code in (REQUEST_FAILED, -32602), exc
            return
        self.jobs[started["jobId"]] = (uri, letter)
        # The job's own request takes the answer just scripted (requests arrive in job order).
        self.requests += 1
        self._one_request_per_job()

    @precondition(lambda self: 0 < self.asked < len(LETTERS) and self.editor.sync == "prompt")
    @rule(pick=st.integers(0, 9))
    def start_at_a_running_jobs_end(self, pick: int) -> None:
        # An index, not a draw from the running jobs: what runs depends on timing, and
        # hypothesis needs the same draws to replay an example.
        letter = LETTERS[self.asked]
        self.asked += 1
        running = sorted(self._running() & set(self.jobs))
        if not running:
            return
        old = running[pick % len(running)]
        uri, old_letter = self.jobs[old]
        span = self._span(uri, old_letter)
        if span is None:
            return
        self.s.stub.script(Answer(text=letter * 40, tps=400))
        try:
            started = self.run(
                self.editor.command(
                    "fastedit.completeRest", {"uri": uri, "position": self.editor.pos(uri, span[1])}
                )
            )
        except JsonRpcException as exc:
            self.s.stub._script.pop()
            assert exc.code == REQUEST_FAILED and old in exc.message, exc
            return
        # Accepted: only because the running job ended meanwhile.
        self.jobs[started["jobId"]] = (uri, letter)
        self.requests += 1
        self._one_request_per_job()
        assert old not in self._running(), (old, started)

    @rule(
        doc=st.integers(0, 1),
        where=st.sampled_from(["doc-start", "line-end", "doc-end", "inside", "after"]),
        typed=TYPED,
    )
    def type_text(self, doc: int, where: str, typed: str) -> None:
        uri = self.uris[doc]
        offset = self._offset(uri, where)
        text = self._text(uri)
        before = "".join(ch for ch in text[:offset] if ch not in LETTERS)
        self.expected[uri] = before + typed + self.expected[uri][len(before) :]
        self.s.call(self.editor.type, uri, offset, typed)

    @rule()
    def wait_for_the_server(self) -> None:
        self.run(self.editor.next_event(seconds=1))

    @rule()
    def flush(self) -> None:
        self.s.call(self.editor.flush)

    @precondition(lambda self: self.asked > 0)
    @rule(pick=st.integers(0, 9))
    def cancel(self, pick: int) -> None:
        if not self.jobs:
            return
        job_id = sorted(self.jobs)[pick % len(self.jobs)]
        reply = self.run(self.editor.command("fastedit.cancel", {"jobId": job_id}))
        assert reply["cancelled"] in ([], [job_id]), reply

    @precondition(lambda self: self.asked > 0)
    @rule(pick=st.integers(0, 9))
    def revert(self, pick: int) -> None:
        if not self.jobs:
            return
        self.s.call(self.editor.flush)  # what the bundled integrations do before a command
        job_id = sorted(self.jobs)[pick % len(self.jobs)]
        reply = self.run(self.editor.command("fastedit.revert", {"jobId": job_id}))
        assert reply["reverted"] in (True, False), reply
        if reply["reverted"]:
            uri, letter = self.jobs[job_id]
            assert letter not in self._text(uri)

    @rule(mode=st.sampled_from(["fast", "standard", "auto"]))
    def set_mode(self, mode: str) -> None:
        assert self.run(self.editor.command("fastedit.setMode", {"mode": mode})) == {"mode": mode}

    # -- invariants ------------------------------------------------------------------------

    @invariant()
    def the_users_text_is_intact(self) -> None:
        for uri in self.uris:
            text = "".join(ch for ch in self._text(uri) if ch not in LETTERS)
            assert text == self.expected[uri], (uri, self._text(uri))

    @invariant()
    def running_jobs_never_share_a_region(self) -> None:
        if not self.jobs or self.editor.sync != "prompt":
            return
        running = self._running() & set(self.jobs)
        spans: dict[str, list[tuple[int, int]]] = {}
        for job_id in running:
            uri, letter = self.jobs[job_id]
            span = self._span(uri, letter)
            if span is not None:
                spans.setdefault(uri, []).append(span)
        for uri, found in spans.items():
            found.sort()
            for (_, end), (start, _) in itertools.pairwise(found):
                assert end <= start, (uri, found, self._text(uri))

    def teardown(self) -> None:
        if not self.jobs and not self.uris:
            return
        for job_id in self.jobs:
            record = self.run(self.editor.wait_job(job_id))
            assert record["state"] != "running", record
            if record["state"] in ("cancelled", "failed"):
                assert record.get("error") or record["state"] == "cancelled", record
        self.s.call(self.editor.flush)
        for uri in self.uris:
            server = _plain(
                self.run(
                    self.editor.client.protocol.send_request_async(
                        DEBUG_STATS, {"settle": True, "uri": uri}
                    )
                )
            )
            assert server["text"] == self._text(uri), uri
            self.s.call(self.editor.close, uri)


def test_jobs_typing_cancels_reverts_and_modes_in_any_order(session: Session) -> None:
    Jobs.session = session
    run_state_machine_as_test(
        Jobs,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    RECORDER(
        "concurrency",
        f"hypothesis state machine: {EXAMPLES} runs of up to {STEPS} steps (jobs on two "
        "documents, typing before/inside/after the streamed text reported promptly or late "
        "and batched, cancels, reverts, mode changes, a job asked for at a running job's end)",
        "after every step the user's typing is intact and running jobs never share a region; "
        "overlapping jobs refused; at rest the server's copy equals the editor's",
    )
