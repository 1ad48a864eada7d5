"""``fastedit-lsp stub``: a loopback model to watch streaming in an editor without a key.

It runs the stub model of the tests (tools/stub.py) on 127.0.0.1 at a speed a person can follow
and prints the environment that points fastedit-lsp at it. Every answer is the same text: it shows
how edits stream, cancel and revert, not what a model would write.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import TextIO

from .stub import DEFAULT_MODELS, Answer, StubModelServer


def environment(base_url: str) -> str:
    """The lines that point fastedit-lsp's two profiles at the stub at ``base_url``."""
    fast, strong = DEFAULT_MODELS
    return (
        f"export FASTEDIT_FAST_BASE_URL={base_url} FASTEDIT_FAST_MODEL={fast}\n"
        f"export FASTEDIT_STANDARD_BASE_URL={base_url} FASTEDIT_STANDARD_MODEL={strong}\n"
    )


async def _serve(out: TextIO, port: int, answer: Answer) -> None:
    server = await StubModelServer.start("127.0.0.1", port, DEFAULT_MODELS, default=answer)
    async with server as stub:
        # SIGTERM stops it cleanly from the first line printed on (a script reads, then stops it).
        stop = asyncio.Event()
        with contextlib.suppress(NotImplementedError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        out.write(f"listening on {stub.base_url}\n")
        out.write("In the shell that starts your editor (fastedit-lsp reads them at start):\n")
        out.write(environment(stub.base_url))
        out.write("Every answer is the same sample text. Stop with Ctrl-C.\n")
        out.flush()
        await stop.wait()


def main(out: TextIO, *, port: int, tps: float, text: str | None) -> int:
    """Run the stub until interrupted (Ctrl-C or SIGTERM)."""
    answer = Answer(tps=tps) if text is None else Answer(text=text, tps=tps)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(out, port, answer))
    return 0
