"""The server process' memory: one malloc arena, freed pages given back (glibc only)."""

from __future__ import annotations

import ctypes
import sys

import pytest

from fastedit_lsp.lsp import memory


def _glibc() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return hasattr(ctypes.CDLL(None), "malloc_trim")
    except OSError:
        return False


@pytest.mark.skipif(not _glibc(), reason="the C library is not glibc")
def test_on_glibc_the_arena_limit_and_the_trim_are_applied() -> None:
    assert memory.one_arena() is True
    kept = [bytearray(64 * 1024) for _ in range(200)]  # ~13 MB from malloc, then freed
    del kept
    assert isinstance(memory.trim(), bool)


def test_without_glibc_both_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_looked_up", True)
    monkeypatch.setattr(memory, "_libc", None)
    assert memory.one_arena() is False
    assert memory.trim() is False
