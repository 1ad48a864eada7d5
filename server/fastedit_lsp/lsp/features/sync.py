"""textDocument/didOpen, didChange, didClose: the document store first, then every owner that
follows a document's text, each on its own.

The protocol (``lsp.protocol``) hands the three notifications here (its :class:`DocumentEvents`
hook); this module fans them out: the documents (``lsp.documents``), the unverified-draft flags
(through the job reporter), the parse check's kept parses (``lsp.parse_trees``), the handler's
time (``fastedit/debugTimings``) and the grammar's warm-up. The store comes first and its error
propagates (the text is what every other owner reads); an error of any later owner is logged and
the others still run, as esbonio's ``call_features`` isolates each feature's handler.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from ...core.timings import Timings
from ..documents import DocumentStore

if TYPE_CHECKING:
    from ..parse_trees import ParseRefresher
    from ..reporter import JobReporter

log = logging.getLogger(__name__)


class DocumentSync:
    """The document notifications, fanned out to the owners that follow a document's text."""

    def __init__(
        self,
        *,
        documents: DocumentStore,
        reporter: JobReporter,
        parse_refresher: Callable[[], ParseRefresher | None],
        timings: Timings,
        grammar: Callable[[str, str], None],
    ) -> None:
        self._documents = documents
        self._reporter = reporter
        #: The kept parses' refresher (None before the first job checked a draft).
        self._parse_refresher = parse_refresher
        self._timings = timings
        #: Loads a document's grammar in the background (``warmup.grammar``).
        self._grammar = grammar

    def opened(self, params: types.DidOpenTextDocumentParams) -> None:
        self._documents.open(params)
        item = params.text_document
        _isolated("grammar", self._grammar, item.uri, item.language_id)

    def changed(self, params: types.DidChangeTextDocumentParams) -> None:
        started = time.perf_counter()
        self._documents.change(params)
        uri = params.text_document.uri
        _isolated("flags", self._reporter.changed, uri)
        if (refresher := self._parse_refresher()) is not None:
            _isolated("parse refresher", refresher.changed, uri)
        self._timings.record("didChange", time.perf_counter() - started)

    def closed(self, params: types.DidCloseTextDocumentParams) -> None:
        self._documents.close(params)


def _isolated(owner: str, handler: Callable[..., object], *args: object) -> None:
    """Run one owner's part of a notification; its error is logged, not passed on."""
    try:
        handler(*args)
    except Exception:
        log.exception("Error in the %s handler of a document notification", owner)
