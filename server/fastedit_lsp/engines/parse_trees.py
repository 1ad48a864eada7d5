"""The last parse of each document, kept across jobs (:class:`ParseTrees`).

Pure, and in ``engines`` (not ``actions``): ``actions.base`` names it in a job's input, and the
verifier of ``actions.parse_check`` uses it, so neither imports the other for it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .parse import Parsed, Reparse


class ParseTrees:
    """The last parse of each document, by URI: a job's text before is parsed incrementally from
    it (what changed since, found as the texts' common start and end), so a check after the
    user's edits costs a reparse of what they touched, not of the document (the server keeps
    one, the job runner's; a few documents, the least recently checked dropped first).

    The server also keeps each of these parses current while the user types (:meth:`refresh`
    and :meth:`advance`, fed by ``didChange``, in steps of bounded time off the request path):
    a new job's first check then finds its text before parsed already, instead of reparsing it
    (10-30 ms on a 10,000-line Python document, where tree-sitter reuses little).
    """

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._last: OrderedDict[str, Parsed] = OrderedDict()
        #: Refreshes under way: the kept parse brought to a newer text, in steps.
        self._pending: dict[str, Reparse] = {}
        self._lock = threading.Lock()
        #: Texts :meth:`parse` found parsed already, and those it had to (re)parse.
        self.hits = 0
        self.misses = 0

    def parse(self, uri: str, language: str, text: str) -> Parsed:
        """``text`` (the document ``uri`` in grammar ``language``) parsed, from the last parse
        of ``uri`` when there is one (a refresh of it to ``text`` under way is finished)."""
        from .parse import parse, reparse

        with self._lock:
            last = self._last.pop(uri, None)
            pending = self._pending.pop(uri, None)
        if pending is not None and pending.language == language and pending.text == text:
            last = pending.finish()
            self.misses += 1
        elif last is not None and last.language == language:
            if last.text != text:
                start, end, replacement = _difference(last.text, text)
                last = reparse(last, start, end, replacement)
                self.misses += 1
            else:
                self.hits += 1
        else:
            last = parse(language, text)
            self.misses += 1
        self._keep(uri, last)
        return last

    def refresh(self, uri: str, text: str) -> bool:
        """Start bringing the kept parse of ``uri`` to ``text`` (the document now), to be done
        by :meth:`advance`; False when there is none or it is current. A refresh to an older
        text is dropped (its steps were spent on a text no job will check)."""
        from .parse import Reparse

        with self._lock:
            last = self._last.get(uri)
            pending = self._pending.get(uri)
            if last is None or last.text == text:
                self._pending.pop(uri, None)
                return False
            if pending is not None and pending.text == text:
                return True
        start, end, replacement = _difference(last.text, text)
        work = Reparse(last.language, last, start, end, replacement)
        with self._lock:
            if self._last.get(uri) is last:
                self._pending[uri] = work
        return True

    def advance(self, uri: str, seconds: float) -> bool:
        """Work on the refresh of ``uri`` for about ``seconds``; True once there is nothing
        left to do (its parse is kept, or the refresh was taken over or dropped)."""
        with self._lock:
            work = self._pending.get(uri)
        if work is None:
            return True
        parsed = work.step(seconds)
        if parsed is None:
            return False
        with self._lock:
            if self._pending.get(uri) is not work:
                return True
            del self._pending[uri]
        self._keep(uri, parsed)
        return True

    def _keep(self, uri: str, parsed: Parsed) -> None:
        with self._lock:
            self._last.pop(uri, None)
            self._last[uri] = parsed
            while len(self._last) > self._size:
                dropped, _ = self._last.popitem(last=False)
                self._pending.pop(dropped, None)

    def forget(self, uri: str) -> None:
        with self._lock:
            self._last.pop(uri, None)
            self._pending.pop(uri, None)

    def __contains__(self, uri: object) -> bool:
        return uri in self._last


def _difference(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, text): ``new`` is ``old`` with ``old[start:end]`` replaced by ``text``; the
    common start and end found by halves (slices compared in C, not character by character)."""
    size = min(len(old), len(new))
    low, high = 0, size
    while low < high:
        mid = (low + high + 1) // 2
        if old[:mid] == new[:mid]:
            low = mid
        else:
            high = mid - 1
    prefix = low
    low, high = 0, size - prefix
    while low < high:
        mid = (low + high + 1) // 2
        if old[len(old) - mid :] == new[len(new) - mid :]:
            low = mid
        else:
            high = mid - 1
    return prefix, len(old) - low, new[prefix : len(new) - low]
