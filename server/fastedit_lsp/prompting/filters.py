"""Stream filters between the model and the edit session: the protocol, and their chain.

Pure: no pygls, no httpx. Each filter takes text deltas as they arrive (``feed``) and returns the
text that may go into the buffer now; ``finish`` returns what it still held when the stream ended.
The answer reconciler (:mod:`fastedit_lsp.prompting.reconcile`) is the filter every action that
inserts model text uses; :class:`Pipeline` chains filters.
"""

from __future__ import annotations

from typing import Protocol


class Filter(Protocol):
    def feed(self, text: str) -> str: ...

    def finish(self) -> str: ...


class Pipeline:
    """Filters applied in order."""

    def __init__(self, *filters: Filter) -> None:
        self._filters = filters

    def feed(self, text: str) -> str:
        for f in self._filters:
            text = f.feed(text)
        return text

    def finish(self) -> str:
        text = ""
        for f in self._filters:
            text = f.feed(text) + f.finish()
        return text
