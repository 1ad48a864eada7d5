"""The server process' memory: glibc's allocator held to one arena, and freed pages given back.

A language server's threads only wait (a worker imports for the warm-up, another resolves a
host or waits for git), but glibc gives each new thread its own malloc arena, whose pages stay
resident once touched: one arena for the whole process kept ~3 MiB less resident after the
warm-up (``MALLOC_ARENA_MAX=1``, ``fastedit-lsp bench --only first-job``). The GIL serialises
the threads' allocations anyway, so the arenas' lock is never contended.

Start-up frees garbage only once the session is idle (the warm-up's last step, see
:mod:`.warmup`); what it frees sits in the heap's middle, where ``malloc_trim`` hands the
pages back to the system.

Both do nothing where the C library is not glibc (macOS, Windows, musl): they look the
functions up and skip what is missing.
"""

from __future__ import annotations

import sys
from typing import Any

#: ``mallopt``'s parameter for the arena limit (glibc's malloc.h).
M_ARENA_MAX = -8

_libc: Any = None
_looked_up = False


def _glibc() -> Any:
    """The C library when it is glibc (it has ``malloc_trim``), else None."""
    global _libc, _looked_up
    if not _looked_up:
        _looked_up = True
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                libc = ctypes.CDLL(None)
            except OSError:
                libc = None
            if libc is not None and hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt"):
                _libc = libc
    return _libc


def one_arena() -> bool:
    """Hold malloc to one arena; call before the process starts its first thread."""
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, 1))


def trim() -> bool:
    """Give the heap's free pages back to the system; whether any were."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))
