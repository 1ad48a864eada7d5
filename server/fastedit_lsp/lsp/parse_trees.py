"""``textDocument/didChange`` → the parse check's kept parses: each document a job has checked
drafts in stays parsed as the user types, so that the next job's first check does not reparse it.

The parses are the job runner's :class:`~fastedit_lsp.engines.parse_trees.ParseTrees`. Shortly
after the user stops typing in such a document (:data:`DELAY`: a stream's own edits, or a
typist's keys, come faster and restart the wait), its parse is brought to the document's text
incrementally, in steps of at most :data:`STEP` seconds with the event loop answering messages
between them: tree-sitter holds the GIL while it parses, and on a 10,000-line Python document
the reparse costs 10-30 ms, which no message should wait for. A job whose first check comes
before the refresh is done finishes it then (its check pays what is left).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engines.parse_trees import ParseTrees
    from .documents import DocumentStore

#: Quiet time after a change before a kept parse is refreshed (seconds).
DELAY = 0.15
#: The longest a refresh holds the event loop at a time (seconds).
STEP = 0.002


class ParseRefresher:
    """Refreshes the kept parses after ``didChange``, in bounded steps, off the request path."""

    def __init__(
        self,
        documents: DocumentStore,
        trees: Callable[[], ParseTrees | None],
        spawn: Callable[[Any], asyncio.Task[Any]],
    ) -> None:
        self._documents = documents
        #: The job runner's parses (None before the first job: nothing is kept yet).
        self._trees = trees
        self._spawn = spawn
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: Refreshes completed, and the steps they took (``fastedit/debugStats``).
        self.refreshed = 0
        self.steps = 0

    def changed(self, uri: str) -> None:
        """The document changed: refresh its kept parse once the user pauses."""
        trees = self._trees()
        if trees is None or uri not in trees:
            return
        if (timer := self._timers.pop(uri, None)) is not None:
            timer.cancel()
        if (task := self._tasks.pop(uri, None)) is not None:
            task.cancel()  # between two steps: the next refresh starts from the kept parse
        self._timers[uri] = asyncio.get_running_loop().call_later(DELAY, self._start, uri)

    def now(self) -> None:
        """Start every waiting refresh at once (a debug request settling the server)."""
        for uri in list(self._timers):
            self._timers.pop(uri).cancel()
            self._start(uri)

    def forget(self, uri: str) -> None:
        """The document closed: no refresh, and its parse goes."""
        if (timer := self._timers.pop(uri, None)) is not None:
            timer.cancel()
        if (task := self._tasks.pop(uri, None)) is not None:
            task.cancel()
        if (trees := self._trees()) is not None:
            trees.forget(uri)

    def cancel_timers(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    @property
    def waiting(self) -> int:
        """Refreshes scheduled or under way."""
        return len(self._timers) + len(self._tasks)

    def stats(self) -> dict[str, int]:
        """Refreshes done, their steps and those waiting; jobs' first checks that found their
        text parsed (hits) or parsed it themselves (misses) (``fastedit/debugStats``)."""
        trees = self._trees()
        return {
            "refreshed": self.refreshed,
            "steps": self.steps,
            "waiting": self.waiting,
            "hits": trees.hits if trees is not None else 0,
            "misses": trees.misses if trees is not None else 0,
        }

    def _start(self, uri: str) -> None:
        self._timers.pop(uri, None)
        task = self._tasks[uri] = self._spawn(self._refresh(uri))
        task.add_done_callback(lambda done: self._done(uri, done))

    def _done(self, uri: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(uri) is task:
            del self._tasks[uri]

    async def _refresh(self, uri: str) -> None:
        document = self._documents.get(uri)
        trees = self._trees()
        if document is None or trees is None or not trees.refresh(uri, document.text):
            return
        while True:
            self.steps += 1
            if trees.advance(uri, STEP):
                break
            await asyncio.sleep(0)  # messages that arrived meanwhile are handled first
        self.refreshed += 1
