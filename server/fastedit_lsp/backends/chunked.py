"""HTTP/1.1 chunked transfer coding (RFC 9112 §7.1), decoded incrementally from raw reads.

Pure: no httpx, no I/O. :class:`ChunkedDecoder` turns the reads of a chunked body into its
payload however the reads split it (inside a size line, inside a chunk, between CR and LF),
whole reads at a time: a read holding a hundred one-token chunks costs one call, not a hundred
events (the model streams' client, :mod:`.wire`, reads their bodies with it).

Line ends are CRLF as the RFC says; a bare LF is accepted too, as most HTTP parsers do. Bad
framing raises :class:`ChunkedError`: a body whose framing is broken cannot be trusted.
"""

from __future__ import annotations

import re

#: A size line (or a trailer line) longer than this is not HTTP: a runaway or hostile server.
MAX_LINE_BYTES = 4096

# chunk-size [ chunk-ext ] (extensions are ignored, as the RFC allows). Sixteen hex digits are
# more than any real chunk; more would only make a huge number.
_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?")

_SIZE, _DATA, _DATA_END, _TRAILER, _DONE = range(5)


class ChunkedError(ValueError):
    """The body's chunked framing is broken."""


class ChunkedDecoder:
    """Incremental decoder of one chunked body: :meth:`feed` each read, until :attr:`done`."""

    def __init__(self) -> None:
        self._state = _SIZE
        #: Bytes of the current chunk still to come (state ``_DATA``).
        self._left = 0
        #: Whether the CR of the CRLF after a chunk's data was seen (state ``_DATA_END``).
        self._cr = False
        #: A size or trailer line split between reads.
        self._line = bytearray()
        #: Bytes that arrived after the body's end (a well-behaved server sends none).
        self.extra = b""

    @property
    def done(self) -> bool:
        """Whether the last chunk and the trailer section's end were read."""
        return self._state == _DONE

    def feed(self, data: bytes) -> bytes:
        """The payload in ``data`` (possibly empty); raises :class:`ChunkedError`."""
        out: list[bytes] = []
        pos, end = 0, len(data)
        state = self._state
        while pos < end:
            if state == _DATA:
                take = min(self._left, end - pos)
                out.append(data[pos : pos + take])
                pos += take
                self._left -= take
                if not self._left:
                    state, self._cr = _DATA_END, False
            elif state == _SIZE and not self._line:
                # The common case, a whole chunk in this read, in one step.
                newline = data.find(b"\n", pos)
                if newline < 0:
                    self._keep(data[pos:])
                    break
                size = _chunk_size(data[pos:newline])
                start = newline + 1
                stop = start + size
                if size and data[stop : stop + 2] == b"\r\n":
                    out.append(data[start:stop])
                    pos = stop + 2
                elif size:
                    state, self._left, pos = _DATA, size, start
                else:
                    state, pos = _TRAILER, start
            elif state == _DATA_END:
                byte = data[pos]
                pos += 1
                if byte == 0x0A:
                    state = _SIZE
                elif byte == 0x0D and not self._cr:
                    self._cr = True
                else:
                    raise ChunkedError("a chunk's data is not followed by CRLF")
            elif state in (_SIZE, _TRAILER):
                newline = data.find(b"\n", pos)
                if newline < 0:
                    self._keep(data[pos:])
                    break
                line = bytes(self._line) + data[pos:newline]
                self._line.clear()
                pos = newline + 1
                if state == _SIZE:
                    size = _chunk_size(line)
                    state, self._left = (_DATA, size) if size else (_TRAILER, 0)
                elif line in (b"", b"\r"):
                    state = _DONE  # the blank line ending the trailer section
            else:  # _DONE
                self.extra += data[pos:]
                break
        self._state = state
        return b"".join(out) if len(out) != 1 else out[0]

    def _keep(self, part: bytes) -> None:
        self._line += part
        if len(self._line) > MAX_LINE_BYTES:
            raise ChunkedError(f"a chunk size or trailer line exceeds {MAX_LINE_BYTES} bytes")


def _chunk_size(line: bytes) -> int:
    match = _SIZE_LINE.fullmatch(line)
    if match is None:
        shown = line[:40].decode("ascii", "replace")
        raise ChunkedError(f"illegal chunk size line {shown!r}")
    return int(match.group(1), 16)
