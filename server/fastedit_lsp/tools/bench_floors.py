"""The bench's yardsticks: what the wire itself costs, measured without the server.

- :class:`RawStreamClient`: a minimal raw-socket HTTP/1.1 client (one kept-alive connection, the
  request bytes prepared once, no HTTP library): the time from sending a streamed request to the
  stub until its first SSE event arrives is the floor of any client's first token.
- ``python -m fastedit_lsp.tools.bench_floors URL TOKENS``: a bare httpx reader of one stream
  (``aiter_lines`` and ``json.loads`` per event, nothing else), printing the process' CPU
  seconds spent on it: the yardstick of the server's CPU at 1,000 tok/s. It runs as its own
  process so that its CPU time is its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Sequence
from urllib.parse import urlsplit


class RawStreamClient:
    """One kept-alive TCP connection to the stub; requests sent as prepared bytes."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        body = json.dumps(
            {"model": "stub-fast", "stream": True, "messages": [], "max_tokens": 8}
        ).encode()
        self.request = (
            f"POST {parts.path}/chat/completions HTTP/1.1\r\nhost: {parts.netloc}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        ).encode() + body
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def first_event_ms(self) -> float:
        """Send the request; milliseconds until the first ``data:`` arrives (then read to the
        end of the response, so that the connection is ready for the next one)."""
        if self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._reader, self._writer
        assert reader is not None
        sent = time.monotonic()
        writer.write(self.request)
        seen = b""
        first: float | None = None
        while True:
            data = await reader.read(65536)
            if not data:
                raise ConnectionError("the stub closed the connection")
            if first is None and b"data:" in seen[-5:] + data:
                first = time.monotonic()
            seen = seen[-5:] + data
            if b"0\r\n\r\n" in seen:  # the chunked body's end
                break
        return (first - sent) * 1000 if first is not None else float("nan")

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()


async def _read_with_httpx(url: str, tokens: int) -> float:
    import httpx

    body = {"model": "stub-fast", "stream": True, "messages": [], "max_tokens": tokens}
    async with httpx.AsyncClient(trust_env=False, timeout=60) as http:
        start = time.process_time()
        async with http.stream("POST", f"{url}/chat/completions", json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    json.loads(line[6:])
        return time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    """``URL TOKENS``: read one stream, print the CPU seconds it cost."""
    url, tokens = (argv if argv is not None else sys.argv[1:])[:2]
    sys.stdout.write(f"{asyncio.run(_read_with_httpx(url, int(tokens)))}\n")
    return 0


async def bare_reader_cpu(url: str, tokens: int, env: dict[str, str]) -> float:
    """CPU seconds a bare httpx reader (its own process) spends on one stream."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "fastedit_lsp.tools.bench_floors",
        url,
        str(tokens),
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    out, _ = await proc.communicate()
    return float(out.decode().strip() or "nan")


if __name__ == "__main__":
    raise SystemExit(main())
