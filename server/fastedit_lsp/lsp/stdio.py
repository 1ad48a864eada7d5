"""Reading the client's messages from stdin on the event loop, without pygls' thread hops.

pygls 2.1.1 reads stdin through its thread pool: three ``run_in_executor`` round trips per
message (header line, blank line, body), each a thread wake-up, a queue, and a self-pipe write
back to the loop. While a stream runs every edit brings two messages (the reply and the editor's
``didChange``), so those hops cost CPU per streamed token (same-minute A/B at 1,000 tok/s,
before reads were paced: 0.28 → 0.20–0.23 s per 1,000 tokens). An asyncio pipe reader gets the
same bytes from the loop's own selector.

No pygls here: :func:`pipe_reader` returns an object with pygls' ``AsyncReader`` interface
(``readline`` and ``readexactly`` returning ``b""`` at the end), or None when stdin is not a pipe
(a regular file cannot be watched by the selector; a socket may be stdout too, which must stay
blocking), in which case pygls' reader is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from typing import BinaryIO


class PipeReader:
    """``asyncio.StreamReader`` with pygls' end-of-input convention."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial


async def pipe_reader(stdin: BinaryIO) -> PipeReader | None:
    """A reader of ``stdin`` on the running loop, if it is a pipe (POSIX only: Windows' proactor
    loop reads pipes differently, and pygls' reader stays in charge there)."""
    if os.name != "posix":
        return None
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return None
    if not stat.S_ISFIFO(mode):
        return None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    protocol = asyncio.StreamReaderProtocol(reader)
    with contextlib.suppress(OSError, ValueError):
        await loop.connect_read_pipe(lambda: protocol, stdin)
        return PipeReader(reader)
    return None
