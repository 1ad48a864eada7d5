"""fastedit/debugStats: what the server holds right now, to find leaks from the outside.

A custom request (not part of the editor contract): tasks, file descriptors, HTTP connections,
progress tokens, pending requests and jobs. With ``{"settle": true}`` the server first lets its
background work finish (pending outline and parse refreshes run at once, background tasks are
awaited, at most ``timeoutMs``), so that a test compares counts at rest, never racing a
finishing job.
"""

from __future__ import annotations

import asyncio
import gc
import os
from typing import Any

from ..protocol import pending_requests

# Imported at run time: pygls reads the handlers' annotations.
from ..server import FasteditServer

DEBUG_STATS = "fastedit/debugStats"


def register(server: FasteditServer) -> None:
    @server.feature(DEBUG_STATS)
    async def debug_stats(ls: FasteditServer, params: Any) -> dict[str, Any]:
        """fastedit/debugStats {settle?, timeoutMs?, uri?}: counts of what the server holds (and
        its copy of ``uri``'s text)."""
        settle = bool(_param(params, "settle", False))
        timeout_ms = _param(params, "timeoutMs", 5000)
        if not isinstance(timeout_ms, int | float) or isinstance(timeout_ms, bool):
            timeout_ms = 5000
        settled = None
        if settle:
            with ls.imports.waiting():
                settled = await _settle(ls, max(0.0, min(float(timeout_ms), 60_000.0)) / 1000)
        out = stats(ls) | ({"settled": settled} if settled is not None else {})
        uri = _param(params, "uri", None)
        if isinstance(uri, str):
            document = ls.documents.get(uri)
            out["text"] = document.text if document is not None else None
        return out


def _param(params: Any, name: str, default: Any) -> Any:
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


async def _settle(ls: FasteditServer, seconds: float) -> bool:
    """Run pending outline and parse refreshes now and wait for jobs and background tasks to end."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    ls.documents.refresh_outlines_now()
    if (refresher := ls.parse_refresher) is not None:
        refresher.now()
    ls.imports.hurry()  # the warm-up's last step waits for a quiet moment
    while True:
        busy = [t for t in ls.tasks if not t.done()]
        busy += [j.task for j in ls.jobs.running() if j.task is not None and not j.task.done()]
        left = deadline - loop.time()
        if not busy:
            gc.collect()  # so that memory is compared at rest too
            return True
        if left <= 0:
            return False
        await asyncio.wait(busy, timeout=left)


def stats(ls: FasteditServer) -> dict[str, Any]:
    """The counts, as plain JSON."""
    return {
        "tasks": len(asyncio.all_tasks()),
        "backgroundTasks": sum(1 for t in ls.tasks if not t.done()),
        "fds": _open_fds(),
        "rssKb": _rss_kb(),
        "http": ls.backends.connections(),
        "progressTokens": len(ls.work_done_progress.tokens),
        "progressJobs": len(ls.client.progress_jobs),
        # Requests in both directions still waiting for an answer (this one included).
        "pendingRequests": pending_requests(ls),
        "cancellable": len(ls.hooks.cancellable),
        "runningJobs": len(ls.jobs.running()),
        "jobs": sum(1 for _ in ls.jobs),
        "documents": len(ls.documents),
        "outlineTimers": ls.documents.outline_timers,
        "parseTrees": refresher.stats() if (refresher := ls.parse_refresher) else None,
        # What a full collection of the cyclic GC walks (frozen objects are skipped).
        "gcTracked": len(gc.get_objects()),
    }


def _rss_kb() -> int:
    """Resident memory (VmRSS), in KiB; -1 where /proc is missing."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux: count what we can
        return -1
