"""The pure event-stream parser and chat-chunk parser: any read split, any line end, bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.backends.base import BackendError
from fastedit_lsp.backends.sse import (
    MAX_LINE_BYTES,
    ChatChunk,
    SSEEvent,
    SSEParser,
    parse_chat_chunk,
)

# A small stream exercising everything at once: multi-byte UTF-8 (2, 3 and 4 bytes), all three
# line ends, comments, named events, ids, retry, multi-line data and an event without data.
MIXED = (
    ": keep-alive comment\r\n"
    "data: héllo\r\n"
    "\r\n"
    "event: note\rid: 7\rdata: 漢字\rdata:second line\r\r"
    "retry: 1500\n"
    "event: ping\n"
    "\n"
    "data: 🙂 end\n"
    "\n"
).encode()
MIXED_EVENTS = [
    SSEEvent("héllo"),
    SSEEvent("漢字\nsecond line", "note", "7"),
    SSEEvent("🙂 end", "message", "7"),
]


def parse_all(chunks: list[bytes]) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.finish()


def test_whole_stream_parses_to_its_events() -> None:
    assert parse_all([MIXED]) == MIXED_EVENTS


def test_retry_field_is_kept_on_the_parser() -> None:
    parser = SSEParser()
    parser.feed(MIXED)
    assert parser.retry_ms == 1500


@pytest.mark.parametrize("cut", range(len(MIXED) + 1))
def test_split_at_every_byte_position_gives_the_same_events(cut: int) -> None:
    assert parse_all([MIXED[:cut], MIXED[cut:]]) == MIXED_EVENTS


def test_split_at_every_pair_of_positions_gives_the_same_events() -> None:
    for first in range(len(MIXED) + 1):
        for second in range(first, len(MIXED) + 1):
            chunks = [MIXED[:first], MIXED[first:second], MIXED[second:]]
            assert parse_all(chunks) == MIXED_EVENTS, (first, second)


def test_one_byte_at_a_time_gives_the_same_events() -> None:
    assert parse_all([MIXED[i : i + 1] for i in range(len(MIXED))]) == MIXED_EVENTS


def test_events_arrive_as_soon_as_their_blank_line_does() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n") == []
    assert parser.feed(b"\n") == [SSEEvent("a")]
    assert parser.feed(b"data: b\r\n\r") == [SSEEvent("b")]
    # The LF completing that CRLF arrives in the next read and must not count as a blank line.
    assert parser.feed(b"\ndata: c\n\n") == [SSEEvent("c")]


def test_a_lone_cr_at_the_end_of_a_read_is_a_line_end() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\r") == [SSEEvent("a")]


def test_field_syntax_follows_the_spec() -> None:
    stream = (
        b"data:no space\n\n"
        b"data:  two spaces\n\n"
        b"data\n\n"  # a field name alone: data is the empty string, still an event
        b"event: only-a-type\n\n"  # no data line: nothing is dispatched
        b"unknown: field\ndata: x\n\n"
        b"id: a\0b\ndata: y\n\n"  # an id with NUL is ignored
    )
    assert parse_all([stream]) == [
        SSEEvent("no space"),
        SSEEvent(" two spaces"),
        SSEEvent(""),
        SSEEvent("x"),
        SSEEvent("y"),
    ]


def test_a_leading_bom_is_ignored_even_when_split() -> None:
    stream = b"\xef\xbb\xbfdata: x\n\n"
    assert parse_all([stream[:1], stream[1:2], stream[2:]]) == [SSEEvent("x")]


def test_finish_delivers_an_event_missing_its_final_newlines() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\n\ndata: [DONE]") == [SSEEvent("a")]
    assert parser.finish() == [SSEEvent("[DONE]")]


def test_finish_on_a_clean_end_delivers_nothing() -> None:
    parser = SSEParser()
    parser.feed(b"data: a\n\n")
    assert parser.finish() == []


@pytest.mark.parametrize(
    "garbage",
    [b"data: \xff\xfe\n\n", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xde\xad\xbe\xef\n\n"],
    ids=["invalid-utf8", "binary"],
)
def test_bytes_that_are_not_utf8_are_a_protocol_error(garbage: bytes) -> None:
    with pytest.raises(BackendError) as caught:
        parse_all([garbage])
    assert caught.value.kind == "protocol"
    assert "UTF-8" in caught.value.message


def test_a_multibyte_character_cut_off_at_the_end_is_a_protocol_error() -> None:
    with pytest.raises(BackendError) as caught:
        parse_all(["data: 漢".encode()[:-1]])
    assert caught.value.kind == "protocol"


def test_an_endless_line_is_a_protocol_error() -> None:
    parser = SSEParser()
    with pytest.raises(BackendError) as caught:
        for _ in range(MAX_LINE_BYTES // 4096 + 2):
            parser.feed(b"x" * 4096)
    assert caught.value.kind == "protocol"


# Event data: any text without line-end characters per line; several lines per event.
_line_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"),
    max_size=12,
)
_events = st.lists(st.lists(_line_text, min_size=1, max_size=3), min_size=1, max_size=6)


@given(
    events=_events,
    eol=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=8),
)
def test_any_chunking_of_any_stream_gives_the_sent_events(
    events: list[list[str]], eol: str, cuts: list[int]
) -> None:
    wire = "".join("".join(f"data: {line}{eol}" for line in lines) + eol for lines in events)
    raw = wire.encode()
    points = sorted({cut % (len(raw) + 1) for cut in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert parse_all(chunks) == [SSEEvent("\n".join(lines)) for lines in events]


@given(
    events=_events,
    ids=st.lists(st.sampled_from(["", "id: 3\n", "event: note\n", ": ping\n\n"]), max_size=6),
)
def test_whole_event_reads_give_what_the_line_by_line_path_gives(
    events: list[list[str]], ids: list[str]
) -> None:
    # Providers flush each event whole: those reads take the one-pass path (a read holding
    # anything else, and the first line, take the line-by-line one); both give the same events.
    reads = [b": first line\n\n"]
    for index, lines in enumerate(events):
        extra = ids[index] if index < len(ids) else ""
        reads.append((extra + "".join(f"data: {line}\n" for line in lines) + "\n").encode())
    whole = parse_all(reads)
    assert whole == parse_all([bytes([b]) for b in b"".join(reads)])
    assert [e.data for e in whole] == ["\n".join(lines) for lines in events]


@given(
    events=st.lists(_line_text, min_size=3, max_size=8),
    cut=st.integers(min_value=0, max_value=10_000),
)
def test_whole_events_around_an_event_cut_between_reads_take_the_one_pass_path(
    events: list[str], cut: int
) -> None:
    """A read that gathers several events often ends inside the next one (aiohttp hands over
    all that has arrived), and the next read begins with its rest: only that event (and the
    stream's first) is read line by line, and the events are a byte-at-a-time read's."""
    wire = [f"data: {text}\n\n".encode() for text in events]
    middle = 1 + cut % (len(events) - 1)  # the event cut between the two reads (not the first)
    inside = 1 + cut % (len(wire[middle]) - 1)
    raw = b"".join(wire)
    split = len(b"".join(wire[:middle])) + inside
    parser = SSEParser()
    lines: list[bytes] = []
    read_line = parser._line

    def counted(line: bytes, out: list[SSEEvent]) -> None:
        lines.append(line)
        read_line(line, out)

    parser._line = counted  # type: ignore[method-assign]
    got = parser.feed(raw[:split]) + parser.feed(raw[split:]) + parser.finish()
    assert got == parse_all([bytes([b]) for b in raw]) == [SSEEvent(text) for text in events]
    # Line by line: the stream's first event and the cut one, two lines each.
    assert len(lines) == 4


def test_an_event_cut_between_its_two_line_ends_is_read_line_by_line_alone() -> None:
    raw = b"".join(f"data: {n}\n\n".encode() for n in range(5))
    split = raw.index(b"data: 2") + len(b"data: 2\n")
    parser = SSEParser()
    lines: list[bytes] = []
    read_line = parser._line
    parser._line = lambda line, out: lines.append(line) or read_line(line, out)  # type: ignore[method-assign]
    got = parser.feed(raw[:split]) + parser.feed(raw[split:]) + parser.finish()
    assert got == [SSEEvent(str(n)) for n in range(5)]
    assert lines == [b"data: 0", b"", b"data: 2", b""]


def test_a_whole_event_read_with_bytes_that_are_not_utf8_is_a_protocol_error() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: one\n\n") == [SSEEvent("one")]
    with pytest.raises(BackendError) as caught:
        parser.feed(b"data: \xff\n\n")
    assert caught.value.kind == "protocol" and "line 3" in caught.value.message


def chat(**fields: object) -> str:
    return json.dumps({"object": "chat.completion.chunk", "model": "m1", **fields})


def test_content_delta_is_the_text() -> None:
    data = chat(choices=[{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}])
    assert parse_chat_chunk(data) == ChatChunk(text="Hi", model="m1")


def test_role_only_first_chunk_has_no_text() -> None:
    data = chat(choices=[{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}])
    assert parse_chat_chunk(data).text == ""


def test_final_chunk_carries_the_finish_reason() -> None:
    data = chat(choices=[{"index": 0, "delta": {}, "finish_reason": "length"}])
    assert parse_chat_chunk(data).finish_reason == "length"


def test_usage_only_chunk_with_empty_choices_gives_the_token_count() -> None:
    data = chat(choices=[], usage={"prompt_tokens": 9, "completion_tokens": 42})
    assert parse_chat_chunk(data) == ChatChunk(completion_tokens=42, model="m1")


def test_groq_usage_under_x_groq_is_read() -> None:
    data = chat(choices=[], x_groq={"usage": {"completion_tokens": 5}})
    assert parse_chat_chunk(data).completion_tokens == 5


def test_completions_style_text_is_the_text() -> None:
    data = chat(choices=[{"index": 0, "text": "def", "finish_reason": None}])
    assert parse_chat_chunk(data).text == "def"


def test_choice_with_index_zero_is_used_whatever_its_position() -> None:
    data = chat(
        choices=[{"index": 1, "delta": {"content": "b"}}, {"index": 0, "delta": {"content": "a"}}]
    )
    assert parse_chat_chunk(data).text == "a"


@pytest.mark.parametrize("data", ["[DONE]", " [DONE] "])
def test_done_sentinel(data: str) -> None:
    assert parse_chat_chunk(data) == ChatChunk(done=True)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            {"message": "Upstream overloaded", "code": "server_error"},
            "Upstream overloaded (server_error)",
        ),
        ("plain failure", "plain failure"),
    ],
)
def test_error_object_inside_a_200_stream_is_reported(error: object, expected: str) -> None:
    assert parse_chat_chunk(json.dumps({"error": error})).error == expected


@pytest.mark.parametrize(
    "data",
    [
        '{"choices": [{"delta": {"content": "x"',  # truncated
        "not json at all",
        "[1, 2]",
        '{"choices": {"0": {}}}',
        '{"choices": ["x"]}',
        '{"choices": [{"delta": {"content": 5}}]}',
    ],
)
def test_malformed_chunks_are_protocol_errors(data: str) -> None:
    with pytest.raises(BackendError) as caught:
        parse_chat_chunk(data)
    assert caught.value.kind == "protocol"


def test_events_before_bad_bytes_in_the_same_read_are_delivered_first() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: ok\n\ndata: \xff\n\n") == [SSEEvent("ok")]
    with pytest.raises(BackendError):
        parser.finish()
    with pytest.raises(BackendError):
        parser.feed(b"data: more\n\n")
