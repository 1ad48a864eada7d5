"""The documents the client has open, as it reported them, and what is derived from them.

The document store keeps each open document in sync (``didOpen``/``didChange``/``didClose``),
rebases every job's region through each change (``core.tracking``), stops a job whose region a
change cannot be rebased through, resolves the futures waiting for the client's next change or
for a document to open, keeps each Python document's outline (parsed off the request path), keeps
each document's recent edits by the user (``engines.next_edit.history``: never a job's own edits
echoed back, never an excluded document's), and knows which documents ``context.exclude`` keeps
from any model (git is asked once per opened file).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ..core.document import Change, Document, Encoding, Point, advance
from ..core.jobs import JobRegistry
from ..core.outline import Outline, outline
from ..core.tracking import RegionTracker, apply_change
from ..engines.next_edit.history import EditHistory
from ..prompting.context import is_excluded

log = logging.getLogger(__name__)

#: Quiet time after a change before a Python document is re-parsed for code actions.
OUTLINE_DELAY = 0.3
#: How long a check waits for git to say whether its document is git-ignored.
GIT_CHECK_TIMEOUT = 5.0


#: Paths whose exclude match is remembered at most (the cache starts again past it).
MATCHES_KEPT = 1_000


class DocumentStore:
    """Open documents by URI, their outlines, and who waits for their changes."""

    def __init__(
        self,
        jobs: JobRegistry,
        *,
        spawn: Callable[[Any], asyncio.Task[Any]],
        encoding: Callable[[], Encoding],
        exclude: Callable[[], Sequence[str]],
        on_close: Callable[[str], None] = lambda _uri: None,
    ) -> None:
        self._jobs = jobs
        self._spawn = spawn
        self._encoding = encoding
        self._exclude = exclude
        self._on_close = on_close
        self._documents: dict[str, Document] = {}
        self._change_waiters: list[asyncio.Future[None]] = []
        self._open_waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._outlines: dict[str, Outline] = {}
        self._outline_timers: dict[str, asyncio.TimerHandle] = {}
        #: Open documents' paths known to be git-ignored (True) or not (False); a path still
        #: being checked is absent, and counts as excluded until git answers.
        self.git_ignored: dict[str, bool] = {}
        self._git_checks: dict[str, asyncio.Task[bool]] = {}
        #: Each open document's recent edits by the user (next-edit suggestions learn from them).
        self._histories: dict[str, EditHistory] = {}
        #: Jobs whose document was closed: their regions belong to the closed text, so edits to
        #: a document reopened at the same URI are not theirs.
        self._detached: set[str] = set()
        #: The exclude pattern each path matched (None: none), for the patterns in ``_matched_by``
        #: (asked on every didChange: matching them was ~0.2 ms a time, 5 % of a stream's CPU).
        self._matches: dict[str, str | None] = {}
        self._matched_by: tuple[str, ...] = ()

    # -- the documents ---------------------------------------------------------------------------

    def get(self, uri: str) -> Document | None:
        return self._documents.get(uri)

    def __contains__(self, uri: object) -> bool:
        return uri in self._documents

    def __len__(self) -> int:
        return len(self._documents)

    def items(self) -> Iterator[tuple[str, Document]]:
        return iter(list(self._documents.items()))

    def others(self, uri: str) -> list[str]:
        """The text of every other open document."""
        return [d.text for other, d in self._documents.items() if other != uri]

    def open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        self._documents[item.uri] = Document(
            item.uri,
            item.text,
            version=item.version,
            language_id=item.language_id,
            encoding=self._encoding(),
        )
        for waiter in self._open_waiters.pop(item.uri, []):
            if not waiter.done():
                waiter.set_result(None)
        self._outlines.pop(item.uri, None)
        self.refresh_outline_later(item.uri)
        self._check_git_ignored(item.uri)

    def change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = self._documents.get(uri)
        if document is None:
            log.warning("didChange for a document that is not open: %s", uri)
            return
        jobs = [
            j
            for j in self._jobs
            if j.uri == uri and j.state != "reverted" and j.id not in self._detached
        ]
        trackers = [(j.tracker, not j.is_finished and not j.settling) for j in jobs]
        history: EditHistory | None = None
        if self._learns(uri):
            history = self._histories.setdefault(uri, EditHistory())
        else:
            self._histories.pop(uri, None)
        for content in params.content_changes:
            partial = isinstance(content, types.TextDocumentContentChangePartial)
            if isinstance(content, types.TextDocumentContentChangePartial):
                start = document.to_point(content.range.start.line, content.range.start.character)
                end = document.to_point(content.range.end.line, content.range.end.character)
                if end < start:
                    start, end = end, start
            else:
                start, end = Point(0, 0), document.end
            change = Change(start, end, content.text)
            if history is None or not partial:
                apply_change(document, trackers, change)
                if history is not None:
                    history.clear()  # a whole-document change says nothing about what was edited
                continue
            before = tuple(document.line(i) for i in range(start.line, end.line + 1))
            own = apply_change(document, trackers, change)
            last = advance(start, content.text).line
            after = tuple(document.line(i) for i in range(start.line, last + 1))
            history.record(change, before, after, own=own)
        document.version = params.text_document.version
        self.refresh_outline_later(uri)
        waiters, self._change_waiters = self._change_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        for job in jobs:
            if not job.is_finished and job.tracker.conflict is not None:
                job.stop(job.tracker.conflict)

    def close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self._documents.pop(uri, None)
        self._outlines.pop(uri, None)
        self._histories.pop(uri, None)
        self._on_close(uri)
        if (timer := self._outline_timers.pop(uri, None)) is not None:
            timer.cancel()
        for job in self._jobs.running(uri):
            job.stop("the document was closed")
        known = {j.id for j in self._jobs}
        self._detached = {i for i in self._detached if i in known}  # the table keeps the last few
        self._detached.update(j.id for j in self._jobs if j.uri == uri)

    def _learns(self, uri: str) -> bool:
        """Whether the user's edits to ``uri`` may be kept: not excluded (a file git has not
        answered for yet is kept, and dropped if git says it is ignored)."""
        reason = self.excluded(uri)
        if reason is None:
            return True
        from ..settings import GIT_IGNORED

        return reason == GIT_IGNORED and (to_fs_path(uri) or uri) not in self.git_ignored

    def git_pending(self, uri: str) -> bool:
        """Whether git has not said yet if the file is ignored."""
        path = to_fs_path(uri)
        return path is not None and path not in self.git_ignored

    def history(self, uri: str) -> EditHistory | None:
        """The user's recent edits to an open document (None for an excluded one)."""
        if self.excluded(uri) is not None:
            self._histories.pop(uri, None)
            return None
        return self._histories.get(uri)

    # -- waiting for the client ------------------------------------------------------------------

    def next_change(self) -> asyncio.Future[None]:
        """A future resolved by the client's next ``didChange``."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._change_waiters.append(waiter)
        return waiter

    def next_open(self, uri: str) -> asyncio.Future[None]:
        """A future resolved when the client opens ``uri``."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._open_waiters.setdefault(uri, []).append(waiter)
        return waiter

    async def wait_reported(self, tracker: RegionTracker, seconds: float) -> bool:
        """Wait until the editor has reported a job's edits (or a conflict shows), at most
        ``seconds``: editors report late (eglot after 0.5 s idle). Whether all were reported."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while tracker.pending and tracker.conflict is None and loop.time() < deadline:
            await asyncio.wait([self.next_change()], timeout=max(0.0, deadline - loop.time()))
        return not tracker.pending

    # -- outlines --------------------------------------------------------------------------------

    def outline(self, uri: str) -> Outline:
        """The document's outline: parsed once per version, off the request path.

        While the user types, the last outline answers (a refresh is scheduled on every
        change); only a document never parsed yet is parsed here.
        """
        cached = self._outlines.get(uri)
        if cached is None:
            document = self._documents[uri]
            cached = outline(document.text, document.version)
            self._outlines[uri] = cached
        return cached

    def refresh_outline_later(self, uri: str) -> None:
        """Re-parse a Python document shortly after the user stops typing, off the request path."""
        document = self._documents.get(uri)
        if document is None or (document.language_id or "python") != "python":
            return
        if (timer := self._outline_timers.pop(uri, None)) is not None:
            timer.cancel()

        def start() -> None:
            self._outline_timers.pop(uri, None)
            self._spawn(self._refresh_outline(uri))

        self._outline_timers[uri] = asyncio.get_running_loop().call_later(OUTLINE_DELAY, start)

    def refresh_outlines_now(self) -> None:
        """Run every pending outline refresh at once (a debug request settling the server)."""
        for uri in list(self._outline_timers):
            self._outline_timers.pop(uri).cancel()
            self._spawn(self._refresh_outline(uri))

    @property
    def outline_timers(self) -> int:
        """Outline refreshes scheduled (``fastedit/debugStats``)."""
        return len(self._outline_timers)

    def cancel_timers(self) -> None:
        for timer in self._outline_timers.values():
            timer.cancel()
        self._outline_timers.clear()

    async def _refresh_outline(self, uri: str) -> None:
        document = self._documents.get(uri)
        if document is None:
            return
        version, text = document.version, document.text
        fresh = await asyncio.to_thread(outline, text, version)
        current = self._documents.get(uri)
        if current is not None and current.version == version:
            self._outlines[uri] = fresh

    # -- what never reaches a model --------------------------------------------------------------

    def _check_git_ignored(self, uri: str) -> asyncio.Task[bool] | None:
        """Ask git once, off the request path, whether an opened file is git-ignored."""
        path = to_fs_path(uri)
        if path is None or path in self.git_ignored:
            return None  # untitled: and other schemes have no file for git to ignore
        if (pending := self._git_checks.get(path)) is not None:
            return pending

        async def check() -> bool:
            from ..project.git import git_ignored

            try:
                ignored = self.git_ignored[path] = await git_ignored(path)
            finally:
                self._git_checks.pop(path, None)
            return ignored

        task = self._git_checks[path] = self._spawn(check())
        return task

    def excluded(self, uri: str) -> str | None:
        """The ``context.exclude`` pattern an open document matches, without waiting for git.

        A file git has not answered for yet counts as git-ignored.
        """
        # Not at start-up: settings load pydantic, which has no place before the initialize reply.
        from ..settings import GIT_IGNORED

        path = to_fs_path(uri) or uri
        patterns = self._exclude()
        if pattern := self._pattern_matching(path, patterns, GIT_IGNORED):
            return pattern
        is_file = to_fs_path(uri) is not None
        if GIT_IGNORED in patterns and is_file and self.git_ignored.get(path, True):
            return GIT_IGNORED
        return None

    def _pattern_matching(self, path: str, patterns: Sequence[str], git: str) -> str | None:
        """The first of ``patterns`` (but ``git``'s) that ``path`` matches, remembered while the
        patterns stay the same."""
        own = tuple(p for p in patterns if p != git)
        if own != self._matched_by or len(self._matches) > MATCHES_KEPT:
            self._matched_by = own
            self._matches.clear()
        try:
            return self._matches[path]
        except KeyError:
            pattern = self._matches[path] = is_excluded(path, own)
            return pattern

    async def excluded_checked(self, uri: str) -> str | None:
        """:meth:`excluded`, waiting (at most a few seconds) for git's answer if it is pending."""
        pending = self._check_git_ignored(uri)
        if pending is not None:
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(pending), GIT_CHECK_TIMEOUT)
        return self.excluded(uri)
