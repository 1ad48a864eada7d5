"""document.py: the server's copy of a document agrees with a plain string edited by offsets.

The reference model here is deliberately different from the implementation: a single string, LSP
positions turned into offsets by walking the string one character at a time.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastedit_lsp.core.document import (
    Document,
    Encoding,
    Point,
    PositionError,
    advance,
    col_from_units,
    content_of,
    split_lines,
    units,
)

ENCODINGS: tuple[Encoding, ...] = ("utf-8", "utf-16", "utf-32")
_BREAK = re.compile(r"\r\n|\r|\n")

# Line breaks of every kind, and characters of 1, 2, 3 and 4 UTF-8 bytes (😀 is 2 UTF-16 units).
PIECES = ["a", "b", " ", "\n", "\r\n", "\r", "é", "😀", "中", "\t"]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
encodings = st.sampled_from(ENCODINGS)


def ref_units(text: str, encoding: Encoding) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def ref_lines(text: str) -> list[tuple[int, int]]:
    """(start offset, end of content offset) of every line."""
    spans = []
    start = 0
    for m in _BREAK.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def ref_offset(text: str, line: int, character: int, encoding: Encoding) -> int:
    """LSP's clamping rules, by walking the string: past the last line is the end of the text."""
    spans = ref_lines(text)
    if line < 0:
        return 0
    if line >= len(spans):
        return len(text)
    start, end = spans[line]
    offset = start
    used = 0
    while offset < end:
        step = ref_units(text[offset], encoding)
        if used + step > max(character, 0):
            break
        used += step
        offset += 1
    return offset


@st.composite
def changes(draw: st.DrawFn) -> tuple[int, int, int, int, str]:
    """A client change: positions may lie past the end of a line or of the document."""
    line = st.integers(min_value=-1, max_value=8)
    character = st.integers(min_value=-1, max_value=12)
    return (draw(line), draw(character), draw(line), draw(character), draw(texts))


# -- split_lines / advance -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        pytest.param("", [""], id="empty"),
        pytest.param("a", ["a"], id="no-break"),
        pytest.param("a\n", ["a\n", ""], id="trailing-lf"),
        pytest.param("a\r\nb", ["a\r\n", "b"], id="crlf"),
        pytest.param("a\rb", ["a\r", "b"], id="lone-cr"),
        pytest.param("\r\r\n\n", ["\r", "\r\n", "\n", ""], id="cr-then-crlf-then-lf"),
        pytest.param("a\u2028b\x0cc", ["a\u2028b\x0cc"], id="only-lsp-breaks-count"),
    ],
)
def test_split_lines_keeps_terminators_and_knows_only_lsp_breaks(
    text: str, lines: list[str]
) -> None:
    assert split_lines(text) == lines


@given(texts)
def test_split_lines_round_trips_and_each_line_holds_one_terminator(text: str) -> None:
    lines = split_lines(text)
    assert "".join(lines) == text
    for line in lines[:-1]:
        assert content_of(line) != line
        assert not _BREAK.search(content_of(line))
    assert not _BREAK.search(lines[-1])


@given(texts, st.integers(0, 5), st.integers(0, 5))
def test_advance_agrees_with_split_lines(text: str, line: int, col: int) -> None:
    lines = split_lines(text)
    expected = (
        Point(line, col + len(text))
        if len(lines) == 1
        else Point(line + len(lines) - 1, len(lines[-1]))
    )
    assert advance(Point(line, col), text) == expected


@given(texts, texts, texts)
def test_inserted_text_ends_at_advance_unless_a_cr_and_lf_join(
    before: str, inserted: str, after: str
) -> None:
    document = Document("file:///t", before + after)
    start = document.end if not after else _point_of(document, len(before))
    if start is None:
        return  # ``before`` ends between "\r" and "\n": not a position
    document.replace(start, start, inserted)
    end = advance(start, inserted)
    # A "\r" and a "\n" that meet become one line break, so points after it move up a line.
    joined = (inserted.endswith("\r") and after.startswith("\n")) or (
        inserted.startswith("\n") and before.endswith("\r")
    )
    if not joined:
        assert document.get_text(start, end) == inserted
    assert document.text == before + inserted + after


def _point_of(document: Document, offset: int) -> Point | None:
    """The point at a code-point offset, or None inside a "\r\n"."""
    for line in range(document.line_count):
        start = document.offset_of(Point(line, 0))
        length = len(document.line(line))
        if start <= offset <= start + length:
            return Point(line, offset - start)
    return None


# -- units and columns -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "encoding", "count"),
    [
        pytest.param("abc", "utf-8", 3, id="ascii-utf8"),
        pytest.param("é", "utf-8", 2, id="e-acute-utf8"),
        pytest.param("é", "utf-16", 1, id="e-acute-utf16"),
        pytest.param("中", "utf-8", 3, id="cjk-utf8"),
        pytest.param("中", "utf-16", 1, id="cjk-utf16"),
        pytest.param("😀", "utf-8", 4, id="emoji-utf8"),
        pytest.param("😀", "utf-16", 2, id="emoji-utf16"),
        pytest.param("😀", "utf-32", 1, id="emoji-utf32"),
        pytest.param("a😀é中", "utf-16", 5, id="mixed-utf16"),
    ],
)
def test_units_count_the_clients_code_units(text: str, encoding: Encoding, count: int) -> None:
    assert units(text, encoding) == count


@pytest.mark.parametrize(
    ("content", "count", "encoding", "col"),
    [
        pytest.param("a😀b", 1, "utf-16", 1, id="before-emoji"),
        pytest.param("a😀b", 2, "utf-16", 1, id="inside-surrogate-pair-stays-before"),
        pytest.param("a😀b", 3, "utf-16", 2, id="after-emoji"),
        pytest.param("é", 1, "utf-8", 0, id="inside-two-byte-sequence-stays-before"),
        pytest.param("é", 2, "utf-8", 1, id="after-two-byte-sequence"),
        pytest.param("中x", 3, "utf-8", 1, id="after-three-byte-sequence"),
        pytest.param("abc", 99, "utf-16", 3, id="past-the-end-clamps"),
        pytest.param("a😀", 99, "utf-8", 2, id="past-the-end-clamps-non-ascii"),
    ],
)
def test_col_from_units_converts_and_clamps(
    content: str, count: int, encoding: Encoding, col: int
) -> None:
    assert col_from_units(content, count, encoding) == col


# -- Document against a plain string ------------------------------------------------------------


@settings(max_examples=300)
@given(texts, st.lists(changes(), max_size=8), encodings)
def test_document_equals_a_plain_string_under_random_changes(
    text: str, edits: list[tuple[int, int, int, int, str]], encoding: Encoding
) -> None:
    document = Document("file:///t", text, encoding=encoding)
    reference = text
    for l1, c1, l2, c2, new in edits:
        start, end = document.to_point(l1, c1), document.to_point(l2, c2)
        o1, o2 = ref_offset(reference, l1, c1, encoding), ref_offset(reference, l2, c2, encoding)
        assert document.offset_of(start) == o1
        assert document.offset_of(end) == o2
        change = document.replace(start, end, new)
        assert (change.start, change.end) == (min(start, end), max(start, end))
        o1, o2 = min(o1, o2), max(o1, o2)
        reference = reference[:o1] + new + reference[o2:]
        assert document.text == reference
    spans = ref_lines(reference)
    assert document.line_count == len(spans)
    assert [document.line(i) for i in range(document.line_count)] == [
        reference[s:e] for s, e in spans
    ]
    assert document.offset_of(document.end) == len(reference)


@given(texts, encodings)
def test_set_text_replaces_the_whole_document(text: str, encoding: Encoding) -> None:
    document = Document("file:///t", "old\r\ntext\r", encoding=encoding)
    document.set_text(text)
    assert document.text == text


@given(texts, encodings, st.data())
def test_client_positions_round_trip_through_points(
    text: str, encoding: Encoding, data: st.DataObject
) -> None:
    document = Document("file:///t", text, encoding=encoding)
    line = data.draw(st.integers(0, document.line_count - 1))
    col = data.draw(st.integers(0, len(document.line(line))))
    point = Point(line, col)
    client = document.to_client(point)
    assert client == (line, ref_units(document.line(line)[:col], encoding))
    assert document.to_point(*client) == point
    assert document.to_point(*client, strict=True) == point


@given(texts, encodings, st.integers(-3, 10), st.integers(-3, 40))
def test_strict_positions_raise_exactly_where_lenient_ones_clamp(
    text: str, encoding: Encoding, line: int, character: int
) -> None:
    document = Document("file:///t", text, encoding=encoding)
    lenient = document.to_point(line, character)
    exists = (
        line >= 0
        and character >= 0
        and line < document.line_count
        and character <= ref_units(document.line(line), encoding)
    )
    if exists:
        assert document.to_point(line, character, strict=True) == lenient
    else:
        with pytest.raises(PositionError):
            document.to_point(line, character, strict=True)


@pytest.mark.parametrize(
    ("line", "character", "message"),
    [
        pytest.param(-1, 0, "negative", id="negative-line"),
        pytest.param(0, -1, "negative", id="negative-character"),
        pytest.param(2, 0, "past the end of the document", id="line-past-the-end"),
        pytest.param(0, 4, "past the end of line 0", id="character-past-the-line"),
    ],
)
def test_strict_position_errors_say_what_is_wrong(line: int, character: int, message: str) -> None:
    document = Document("file:///t", "a😀\nb")  # line 0 is 3 UTF-16 units
    with pytest.raises(PositionError, match=message):
        document.to_point(line, character, strict=True)


@pytest.mark.parametrize(
    ("line", "character", "point"),
    [
        pytest.param(-5, 3, Point(0, 0), id="negative-line-is-the-start"),
        pytest.param(9, 0, Point(1, 1), id="line-past-the-end-is-the-end"),
        pytest.param(0, 99, Point(0, 2), id="character-past-the-line-is-its-end"),
        pytest.param(0, -4, Point(0, 0), id="negative-character-is-the-line-start"),
    ],
)
def test_lenient_positions_clamp_like_lsp(line: int, character: int, point: Point) -> None:
    assert Document("file:///t", "a😀\r\nb").to_point(line, character) == point


def test_inserting_lf_after_a_lone_cr_makes_one_crlf_line_break() -> None:
    document = Document("file:///t", "a\rb")
    document.replace(Point(1, 0), Point(1, 0), "\nx")
    assert document.text == "a\r\nxb"
    assert document.line_count == 2
    assert document.line(0) == "a"


def test_deleting_between_cr_and_lf_joins_them_into_one_line_break() -> None:
    document = Document("file:///t", "a\rx\nb")
    document.replace(Point(1, 0), Point(1, 1), "")
    assert document.text == "a\r\nb"
    assert [document.line(i) for i in range(document.line_count)] == ["a", "b"]


def test_reversed_range_is_replaced_like_a_forward_one() -> None:
    document = Document("file:///t", "hello world")
    change = document.replace(Point(0, 11), Point(0, 6), "there")
    assert document.text == "hello there"
    assert (change.start, change.end) == (Point(0, 6), Point(0, 11))
