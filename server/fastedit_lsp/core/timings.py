"""Server-side timings of handlers, kept for ``fastedit/debugTimings`` and ``fastedit-lsp bench``.

Pure: no pygls, no I/O. A handler measures itself with ``time.perf_counter()`` and records the
duration under a name; the bench reads the samples back through the debug request, so what it
reports is the server's own time, without transport or JSON decoding.
"""

from __future__ import annotations

from collections import deque

#: Samples kept per name (the oldest are dropped).
KEEP = 5000


class Timings:
    """Recent durations per name, in seconds."""

    def __init__(self, keep: int = KEEP) -> None:
        self._keep = keep
        self._samples: dict[str, deque[float]] = {}

    def record(self, name: str, seconds: float) -> None:
        samples = self._samples.get(name)
        if samples is None:
            samples = self._samples[name] = deque(maxlen=self._keep)
        samples.append(seconds)

    def snapshot(self) -> dict[str, list[float]]:
        """Every name's samples in milliseconds, oldest first."""
        return {name: [s * 1000 for s in samples] for name, samples in self._samples.items()}

    def clear(self) -> None:
        self._samples.clear()


def percentile(values: list[float], pct: int, *, digits: int = 1) -> float:
    """Nearest-rank percentile of sorted values."""
    rank = max(1, -(-pct * len(values) // 100))
    return round(values[rank - 1], digits)
