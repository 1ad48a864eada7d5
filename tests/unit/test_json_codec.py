"""core/json_codec.py reads every text as the standard library reads it, and writes what a
client reads back to the same values."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastedit_lsp.core import json_codec

#: Texts where orjson alone would read something else or refuse what json reads.
EDGES = [
    b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"x"}',
    b'{"id":-9223372036854775809}',
    b'{"id":9223372036854775808}',
    b'{"id":18446744073709551616}',
    b'{"a":1e400}',
    b'{"a":NaN,"b":-Infinity}',
    b'{"a":"\\ud800"}',
    b'\xef\xbb\xbf{"a":1}',
    b'{"a":1,"a":2}',
    b' [1, {"b": [true, false, null]}] ',
    b'"text"',
    b"12",
    '{"a": "caf\u00e9 \u2603"}'.encode(),
]


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_every_edge_is_read_as_the_standard_library_reads_it(text: bytes) -> None:
    # repr: NaN compares unequal to itself, and 1 == 1.0 would hide an integer read as a float.
    assert repr(json_codec.loads(text)) == repr(json.loads(text))
    decoded = text.decode("utf-8-sig")  # the same text as str (SSE events arrive decoded)
    assert repr(json_codec.loads(decoded)) == repr(json.loads(decoded))


@pytest.mark.parametrize("text", [b'{"a":', b'{"a":"\x01"}', b"\xff\xfe", b"", b"[1,]"])
def test_what_neither_reads_fails_with_the_standard_librarys_error(text: bytes) -> None:
    with pytest.raises(ValueError) as theirs:
        json.loads(text)
    with pytest.raises(ValueError) as ours:
        json_codec.loads(text)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_a_long_integer_inside_a_string_still_reads_the_same() -> None:
    text = b'{"text":"id 12345678901234567890123 here","n":7}'
    assert json_codec.loads(text) == {"text": "id 12345678901234567890123 here", "n": 7}


@pytest.mark.parametrize(
    "value",
    [
        {"id": 2**70, "method": "x"},
        {1: "a"},
        {"text": "\ud800 lone"},
        {"nested": [{"k": -(2**64)}]},
    ],
    ids=["big-int", "int-key", "surrogate", "nested-big-int"],
)
def test_what_orjson_refuses_to_write_is_written_by_the_standard_library(value: Any) -> None:
    written = json_codec.dumps(value)
    assert json.loads(written) == json.loads(json.dumps(value))


def test_default_turns_unknown_objects_into_json() -> None:
    class Point:
        def __init__(self, line: int) -> None:
            self.line = line

    written = json_codec.dumps({"at": Point(3)}, default=lambda o: {"line": o.line})
    assert json.loads(written) == {"at": {"line": 3}}


def test_writing_is_compact_ascii() -> None:
    # Raw UTF-8 lost lsp-mode 8 a message now and then: text beyond ASCII is escaped.
    assert json_codec.dumps({"a": [1, "x"]}) == b'{"a":[1,"x"]}'
    assert json_codec.dumps({"a": "é😀"}) == b'{"a":"\\u00e9\\ud83d\\ude00"}'


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_any_json_value_round_trips_as_the_standard_library_reads_it(value: Any) -> None:
    text = json.dumps(value).encode()
    assert repr(json_codec.loads(text)) == repr(json.loads(text))
    written = json_codec.dumps(value)
    assert written.isascii()
    assert repr(json.loads(written)) == repr(json.loads(text))


@given(st.dictionaries(st.text(max_size=8), st.text() | st.lists(st.text(), max_size=3)))
def test_text_is_escaped_exactly_as_the_standard_library_escapes_it(value: Any) -> None:
    assert json_codec.dumps(value) == json.dumps(value, separators=(",", ":")).encode()
