"""The chunked transfer decoder: the payload whatever the reads, and errors on broken framing."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.backends.chunked import MAX_LINE_BYTES, ChunkedDecoder, ChunkedError


def encode(chunks: list[bytes], *, ext: bool = False, trailer: bool = False) -> bytes:
    parts = [b"%x%s\r\n%s\r\n" % (len(c), b";name=value" if ext else b"", c) for c in chunks if c]
    end = b"0\r\nx-checksum: 1\r\n\r\n" if trailer else b"0\r\n\r\n"
    return b"".join(parts) + end


def decode(reads: list[bytes]) -> tuple[bytes, ChunkedDecoder]:
    decoder = ChunkedDecoder()
    return b"".join(decoder.feed(read) for read in reads), decoder


def cut(wire: bytes, points: list[int]) -> list[bytes]:
    bounds = [0, *sorted(p % (len(wire) + 1) for p in points), len(wire)]
    return [wire[a:b] for a, b in itertools.pairwise(bounds)]


chunk_lists = st.lists(st.binary(min_size=0, max_size=40), max_size=8)


@given(chunks=chunk_lists, points=st.lists(st.integers(min_value=0), max_size=6), ext=st.booleans())
def test_the_payload_comes_out_whatever_the_reads(
    chunks: list[bytes], points: list[int], ext: bool
) -> None:
    wire = encode(chunks, ext=ext, trailer=ext)
    payload, decoder = decode(cut(wire, points))
    assert payload == b"".join(chunks)
    assert decoder.done and decoder.extra == b""


def test_one_read_of_many_chunks_is_one_payload() -> None:
    wire = encode([b"data: %d\n\n" % i for i in range(100)])
    decoder = ChunkedDecoder()
    assert decoder.feed(wire) == b"".join(b"data: %d\n\n" % i for i in range(100))
    assert decoder.done


def test_bytes_after_the_end_are_kept_apart() -> None:
    payload, decoder = decode([encode([b"abc"]) + b"HTTP/1.1 200"])
    assert payload == b"abc" and decoder.done and decoder.extra == b"HTTP/1.1 200"


def test_bare_lf_line_ends_are_accepted() -> None:
    payload, decoder = decode([b"3\nabc\n0\n\n"])
    assert payload == b"abc" and decoder.done


@pytest.mark.parametrize(
    "wire",
    [
        b"zz\r\nabc\r\n",  # not hex
        b"0x3\r\nabc\r\n",  # int() would take it
        b"+3\r\nabc\r\n",
        b"1_0\r\n",
        b"3\r\nabcX\r\n",  # data longer than its size
        b"11111111111111111\r\n",  # 17 hex digits
    ],
)
def test_broken_framing_raises(wire: bytes) -> None:
    with pytest.raises(ChunkedError):
        decode(cut(wire, []))


def test_a_size_line_without_end_is_bounded() -> None:
    decoder = ChunkedDecoder()
    with pytest.raises(ChunkedError, match="exceeds"):
        for _ in range(MAX_LINE_BYTES // 100 + 2):
            decoder.feed(b"1" * 100)
