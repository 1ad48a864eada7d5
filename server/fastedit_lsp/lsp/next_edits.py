"""Next-edit suggestions' state: whether they are on, what was offered, shown, accepted and
dismissed, and the request in flight per document.

The engine (``engines.next_edit``) predicts from the document store's edit history; this module
asks it for the current version, verifies the answer against that version, remembers the offer
under an id (the accept command names it) and counts what the client reports. A suggestion is
never applied here: the editor applies it when the user accepts, to the version it was made for.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from typing import TYPE_CHECKING, Any

from ..core.document import Document, Point

if TYPE_CHECKING:
    from ..engines.next_edit.lines import Prediction
    from ..settings import Settings
    from .documents import DocumentStore
    from .next_edit_model import NextEditModel

#: Offers remembered for their accept/dismiss commands.
OFFERS = 64
#: Server times kept for the bench (milliseconds per suggestion request).
TIMINGS = 2000
ACCEPT = "fastedit.acceptNextEdit"
DISMISS = "fastedit.dismissNextEdit"


@dataclass
class Offer:
    """A suggestion sent to the client: for which document version, and what became of it."""

    id: str
    uri: str
    version: int
    prediction: Prediction
    state: str = "offered"  # offered | shown | accepted | dismissed


class NextEdits:
    """Next-edit suggestions for every open document."""

    def __init__(
        self,
        documents: DocumentStore,
        settings: Callable[[], Settings],
        model: NextEditModel | None = None,
    ) -> None:
        self._documents = documents
        self._settings = settings
        #: The fast model's suggestions (``nextEdit.useModel``).
        self.model = model
        #: ``fastedit.toggleNextEdit``'s choice; None follows the setting.
        self._toggled: bool | None = None
        self._ids = count(1)
        self._offers: OrderedDict[str, Offer] = OrderedDict()
        #: The model request in flight, by (uri, version, cursor line): a newer one cancels it.
        self._inflight: dict[tuple[str, int, int], asyncio.Task[Any]] = {}
        #: The last prefetch (after an accept), kept for the request it anticipates.
        self._prefetching: dict[tuple[str, int, int], asyncio.Future[Any]] = {}
        self.shown = self.accepted = self.dismissed = 0
        self.last: dict[str, Any] | None = None
        #: Server time per suggestion request, in milliseconds (``fastedit-lsp bench``).
        self.timings: deque[float] = deque(maxlen=TIMINGS)
        #: The same requests' CPU time on the server's thread: what the request cost, without
        #: the time other processes held the cores (on a loaded machine the wall time's p99 is
        #: mostly that: measured, bench).
        self.cpu_timings: deque[float] = deque(maxlen=TIMINGS)

    # -- switches --------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        if self._toggled is not None:
            return self._toggled
        return self._settings().next_edit.enabled

    def toggle(self) -> bool:
        self._toggled = not self.enabled
        return self._toggled

    def allowed(self, document: Document) -> bool:
        languages = self._settings().next_edit.languages
        return self.enabled and (not languages or document.language_id in languages)

    # -- suggestions -----------------------------------------------------------------------------

    async def from_model(
        self, uri: str, line: int, character: int, *, prefetch: bool = False
    ) -> list[Offer]:
        """The model's suggestion, as the one request in flight: a newer request (for any
        document) cancels it, which closes its model stream and answers nothing; a request for
        the version and line a prefetch (``prefetch``) is answering waits for it instead."""
        document = self._documents.get(uri)
        if self.model is None or document is None or not self.allowed(document):
            return []
        cursor = document.to_point(line, character)
        key = (uri, document.version, cursor.line)
        task = self._prefetching.get(key)
        if task is None or task.done():
            for older in list(self._inflight.values()):
                if not older.cancelling():  # once (see Job.stop)
                    older.cancel()
            self._inflight.clear()
            task = asyncio.ensure_future(self.model.suggest(uri, cursor, debounce=not prefetch))
            self._inflight[key] = task
            if prefetch:
                self._prefetching = {key: task}
            task.add_done_callback(lambda done: self._forget_task(key, done))
        try:
            prediction = await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.cancelled():
                task.cancel()  # this request itself was cancelled: so is its model call
                raise
            return []
        document = self._documents.get(uri)
        if prediction is None or document is None:
            return []
        return [self.offer(document, prediction)]

    def _forget_task(self, key: tuple[str, int, int], task: asyncio.Future[Any]) -> None:
        if self._inflight.get(key) is task:
            del self._inflight[key]
        if self._prefetching.get(key) is task and task.cancelled():
            del self._prefetching[key]

    def offline(self, uri: str, version: int | None, line: int, character: int) -> list[Offer]:
        """The offline engine's suggestion for the document's current version (``version``, when
        given, must be it: a request for a stale version gets nothing)."""
        found = self._predict(uri, version, line, character)
        return [] if found is None else [self.offer(*found)]

    def _predict(
        self, uri: str, version: int | None, line: int, character: int
    ) -> tuple[Document, Prediction] | None:
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            document = self._documents.get(uri)
            if document is None or not self.allowed(document):
                return None
            if version is not None and version != document.version:
                return None
            history = self._documents.history(uri)
            if history is None or not history.records:
                return None
            cursor = document.to_point(line, character)
            from ..engines.next_edit.predict import predict  # loaded by the warm-up

            prediction = predict(document, list(history.records), cursor, document.language_id)
            return None if prediction is None else (document, prediction)
        finally:
            self.timings.append((time.perf_counter() - started) * 1000)
            self.cpu_timings.append((time.thread_time() - cpu) * 1000)

    def offer(self, document: Document, prediction: Prediction) -> Offer:
        offer = Offer(f"ne-{next(self._ids)}", document.uri, document.version, prediction)
        self._offers[offer.id] = offer
        while len(self._offers) > OFFERS:
            self._offers.popitem(last=False)
        self.last = self._record(offer)
        return offer

    def check(self, document: Document, prediction: Prediction) -> str | None:
        """Why a suggestion (the model's) cannot be shown on ``document`` now (None: it can)."""
        from ..engines.next_edit.predict import verified

        return verified(document, prediction, document.language_id)

    def wire(self, offer: Offer) -> dict[str, Any]:
        """An offer in ``textDocument/copilotInlineEdit``'s shape."""
        document = self._documents.get(offer.uri)
        p = offer.prediction
        start = document.to_client(p.start) if document else (p.start.line, p.start.col)
        end = document.to_client(p.end) if document else (p.end.line, p.end.col)
        return {
            "text": p.text,
            "range": {
                "start": {"line": start[0], "character": start[1]},
                "end": {"line": end[0], "character": end[1]},
            },
            "textDocument": {"uri": offer.uri, "version": offer.version},
            "command": {"title": "Accept next edit", "command": ACCEPT, "arguments": [offer.id]},
        }

    def inline_item(self, uri: str, line: int, character: int) -> tuple[Offer, str, Point] | None:
        """The suggestion as an inline completion: only when it is on the cursor's line, its
        range holds the cursor and the replaced text is a prefix of the new text (what VS Code's
        stable API can show). ``(offer, text from the range's start, range start)``."""
        found = self._predict(uri, None, line, character)
        if found is None:
            return None
        document, p = found
        cursor = document.to_point(line, character)
        if not (p.start.line == p.end.line == cursor.line and p.start <= cursor <= p.end):
            return None
        replaced = document.get_text(p.start, p.end)
        if not p.text.startswith(replaced) or p.text == replaced:
            return None
        return self.offer(document, p), p.text, p.start

    def offer_of(self, offer_id: str) -> Offer | None:
        return self._offers.get(offer_id)

    # -- what the client reports -----------------------------------------------------------------

    def report(self, offer_id: str, state: str) -> bool:
        """The client showed, accepted or dismissed an offer; False for an unknown id."""
        offer = self._offers.get(offer_id)
        if offer is None:
            return False
        if state == "shown":
            if offer.state == "offered":
                self.shown += 1
                offer.state = "shown"
        elif offer.state in ("offered", "shown"):
            offer.state = state
            if state == "accepted":
                self.accepted += 1
            else:
                self.dismissed += 1
        self.last = self._record(offer)
        return True

    def status(self) -> dict[str, Any]:
        """``fastedit.status``'s ``nextEdit``."""
        return {
            "enabled": self.enabled,
            "useModel": self._settings().next_edit.use_model,
            "shown": self.shown,
            "accepted": self.accepted,
            "dismissed": self.dismissed,
            "last": self.last,
            "serverMs": _percentiles(self.timings),
            "serverCpuMs": _percentiles(self.cpu_timings),
            "modelRequests": self.model.requests if self.model is not None else 0,
            "modelServerMs": _percentiles(self.model.timings if self.model else deque()),
            "modelSkipped": self.model.skipped if self.model is not None else None,
        }

    def _record(self, offer: Offer) -> dict[str, Any]:
        p = offer.prediction
        return {
            "id": offer.id,
            "uri": offer.uri,
            "version": offer.version,
            "kind": p.kind,
            "state": offer.state,
            "line": p.start.line,
            "text": p.text,
        }


def _percentiles(samples: deque[float]) -> dict[str, float | int]:
    """p50/p99 of the offline engine's server time per request (ms)."""
    ordered = sorted(samples)
    if not ordered:
        return {"p50": 0.0, "p99": 0.0, "n": 0}
    p99 = ordered[min(len(ordered) - 1, -(-99 * len(ordered) // 100) - 1)]
    return {"p50": round(ordered[len(ordered) // 2], 3), "p99": round(p99, 3), "n": len(ordered)}
