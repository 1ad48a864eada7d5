"""fastedit/debugTimings: the server's own handler times and start-up facts, for the bench.

A custom request (not part of the editor contract): ``fastedit-lsp bench`` and the structural
tests read what the server measured inside itself, without transport or JSON decoding.

Params (all optional): ``{reset: bool}`` forgets the samples after reading them, ``{modules:
true}`` adds the names of the imported modules. Reply: ``{timingsMs: {name: [ms, ...]},
cpuSeconds, modules?}``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from pygls.lsp.server import LanguageServer

from ...core.timings import Timings

DEBUG_TIMINGS = "fastedit/debugTimings"


def _flag(params: Any, name: str) -> bool:
    value = params.get(name) if isinstance(params, dict) else getattr(params, name, None)
    return value is True


def register(server: LanguageServer, *, timings: Timings) -> None:
    @server.feature(DEBUG_TIMINGS)
    def debug_timings(ls: LanguageServer, params: Any) -> dict[str, Any]:
        """fastedit/debugTimings: handler times measured in the server, and imported modules."""
        reply: dict[str, Any] = {
            "timingsMs": timings.snapshot(),
            "cpuSeconds": time.process_time(),
        }
        if _flag(params, "reset"):
            timings.clear()
        if _flag(params, "modules"):
            reply["modules"] = sorted(sys.modules)
        return reply
