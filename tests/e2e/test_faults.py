"""Backend faults, one by one, against the real server: clear end, exact buffer, nothing leaked.

Each case scripts the loopback stub model (or points the fast profile at a port that misbehaves
below HTTP) and runs ``fastedit.completeRest``. After every case: the job ended in the expected
state with a message naming the problem, the buffer holds exactly the text the editor
acknowledged, a following job is served, and the server's counts at rest (tasks, file
descriptors, HTTP connections, progress tokens, pending requests, jobs) are back where they were.
test_backend_errors.py pins the wording of the individual messages; this file sweeps the faults.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from fastedit_lsp.pipeline.stream import OUTPUT_CHARS_PER_TOKEN
from fastedit_lsp.tools.stub import Answer, StubModelServer, split_tokens
from tests.support.errors import (
    CURSOR,
    GOOD,
    OTHER_URI,
    TEXT,
    URI,
    chat_requests,
    closed_port,
    complete,
)
from tests.support.harness import Editor
from tests.support.leaks import assert_no_leaks, at_rest, raw_http_server, read_request
from tests.support.reliability import Recorder

from .conftest import MakeEditor

TOKENS = split_tokens(GOOD)
#: Every byte of this answer arrives in its own HTTP chunk: multi-byte characters included.
WIDE = "a + b  # é, ü, 中, 😀 and e\u0301"
MAX_TOKENS = 64  # the fast profile's maxTokens in these tests


async def _garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"SSH-2.0-OpenSSH_9.6 this is not HTTP\r\n\r\n")
    await writer.drain()


async def _half_head(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-")
    await writer.drain()


RawServer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class Fault:
    id: str
    #: The case as the document shows it.
    what: str
    answers: list[Answer] = field(default_factory=list)
    #: Point the fast profile at a URL instead of the stub ("raw" servers are started per case).
    base_url: str | None = None
    raw: RawServer | None = None
    #: The fast profile's settings for the case.
    profile: dict[str, Any] = field(default_factory=dict)
    state: str = "failed"
    #: Words the job's error must contain.
    says: tuple[str, ...] = ()
    #: What the buffer keeps at the cursor.
    kept: str = ""
    #: Chat requests the fault takes (None: not checked).
    requests: int | None = 1


FAULTS = [
    Fault(
        "refused",
        "connection refused (nothing listens on the port)",
        base_url=f"http://127.0.0.1:{closed_port()}/v1",
        says=("Cannot connect to", "Is the server up"),
        requests=0,
    ),
    Fault(
        "dns",
        "name resolution failure (a host name no resolver can answer)",
        base_url="http://-no-such-host-.invalid/v1",
        says=("Cannot connect to http://-no-such-host-.invalid/v1",),
        requests=0,
    ),
    Fault(
        "not-http",
        "protocol error: the port answers bytes that are not HTTP",
        raw=_garbage,
        says=("closed before an answer",),
        requests=0,
    ),
    Fault(
        "half-head",
        "protocol error: the response head stops halfway and the connection closes",
        raw=_half_head,
        says=("closed before an answer",),
        requests=0,
    ),
    Fault(
        "slow-headers",
        "slow headers: none within timeoutMs (0.3 s)",
        answers=[Answer(text=GOOD, header_delay=1.5)],
        profile={"timeoutMs": 300},
        says=("sent no data for 0.3 s", "timeoutMs"),
    ),
    Fault(
        "slow-headers-ok",
        "slow headers: 0.2 s, within timeoutMs (2 s)",
        answers=[Answer(text=GOOD, header_delay=0.2)],
        profile={"timeoutMs": 2000},
        state="done",
        kept=GOOD,
    ),
    Fault(
        "slow-first-token",
        "headers at once, then no event within timeoutMs (0.3 s)",
        answers=[Answer(text=GOOD, ttft=1.5)],
        profile={"timeoutMs": 300},
        says=("sent no data for 0.3 s",),
    ),
    Fault(
        "stall",
        # The silence allowed bounds the wait for the first two tokens too: 0.3 s would time out
        # before them on a loaded machine (the stub runs in the test's process), as the stalled
        # stream of test_backend_errors did at 0.5 s (load 5.3).
        "stalled stream: 2 tokens, then silence longer than timeoutMs (2 s)",
        answers=[Answer(text=GOOD, stall_after=2)],
        profile={"timeoutMs": 2000},
        says=("sent no data for 2 s", "after 2 text deltas"),
        kept="".join(TOKENS[:2]),
    ),
    Fault(
        "drop-0",
        "disconnect after the headers, before any token",
        answers=[Answer(text=GOOD, drop_after=0)],
        says=("closed before an answer",),
    ),
    Fault(
        "drop-3",
        "disconnect after 3 tokens",
        answers=[Answer(text=GOOD, drop_after=3)],
        says=("dropped after 3 text deltas", "incomplete"),
        kept="".join(TOKENS[:3]),
    ),
    Fault(
        "drop-before-finish",
        "disconnect after the last token, before the finish chunk",
        answers=[Answer(text=GOOD, drop_after=len(TOKENS))],
        says=("dropped after",),
        kept=GOOD,
    ),
    Fault(
        "bad-json",
        "malformed SSE: an event whose JSON is cut off",
        answers=[Answer(text=GOOD, malformed="bad_json", malformed_after=1)],
        says=("malformed stream", "not JSON"),
        kept=TOKENS[0],
    ),
    Fault(
        "no-data-prefix",
        "malformed SSE: a line without `data:` (ignored, as the SSE spec says), then the end",
        answers=[Answer(text=GOOD, malformed="no_data_prefix", malformed_after=1)],
        says=("ended before the model finished",),
        kept=TOKENS[0],
    ),
    Fault(
        "no-event",
        "malformed SSE: a 200 event stream without a single event",
        answers=[Answer(text=GOOD, malformed="no_data_prefix", role_chunk=False)],
        says=("without sending any event",),
    ),
    Fault(
        "binary",
        "malformed SSE: binary garbage (not UTF-8)",
        answers=[Answer(text=GOOD, malformed="binary", malformed_after=2)],
        says=("not UTF-8",),
        kept="".join(TOKENS[:2]),
    ),
    Fault(
        "split-bytes",
        "every byte its own HTTP chunk: events and UTF-8 characters split at every position",
        answers=[Answer(text=WIDE, token_size=2, split_bytes=True)],
        state="done",
        kept=WIDE,
    ),
    Fault(
        "error-event",
        "a 200 stream carrying an error event after 2 tokens",
        answers=[
            Answer(text=GOOD, malformed="error_event", malformed_after=2, error_message="overload")
        ],
        says=("reported an error mid-stream: overload",),
        kept="".join(TOKENS[:2]),
    ),
    Fault(
        "huge-tokens",
        f"huge output: a model ignoring maxTokens ({MAX_TOKENS}) sends 200 tokens of 1 KB",
        answers=[Answer(tokens=["x" * 1024] * 200)],
        says=(f"more than its maxTokens ({MAX_TOKENS})", "cut off"),
        kept="x" * 1024 * (MAX_TOKENS * OUTPUT_CHARS_PER_TOKEN // 1024),
    ),
    Fault(
        "many-tokens",
        f"huge output: 5,000 tokens asked with maxTokens {MAX_TOKENS} (the model honours it)",
        answers=[Answer(tokens=["1"] * 5000)],  # a number: no name to resolve
        state="done",
        kept="1" * MAX_TOKENS,
    ),
    Fault(
        "429-retry-after",
        "429 with retry-after: 30",
        answers=[Answer(status=429, headers={"retry-after": "30"})],
        says=("HTTP 429", "rate-limited", "paused for 30 s"),
    ),
    Fault(
        "429-bare",
        "429 without retry-after",
        answers=[Answer(status=429)],
        says=("HTTP 429", "rate-limited"),
    ),
    Fault(
        "5xx",
        "500, then 502, then 503: bounded retries with jitter",
        answers=[Answer(status=500), Answer(status=502), Answer(status=503), Answer(status=503)],
        says=("HTTP 503", "server error", "after 3 attempts"),
        requests=3,
    ),
    Fault(
        "503-then-ok",
        "503 once, then a good answer",
        answers=[Answer(status=503), Answer(text=GOOD)],
        state="done",
        kept=GOOD,
        requests=2,
    ),
    Fault(
        "wrong-content-type",
        "a 200 with content type application/json instead of an event stream",
        answers=[Answer(text=GOOD, content_type="application/json")],
        says=("application/json instead of an event stream",),
    ),
]


@pytest.fixture
async def raw_url(request: pytest.FixtureRequest) -> AsyncIterator[str | None]:
    fault: Fault = request.param
    if fault.raw is None:
        yield fault.base_url
        return
    async with raw_http_server(fault.raw) as url:
        yield url


def _outcome(fault: Fault, record: dict[str, Any]) -> str:
    kept = "nothing" if not fault.kept else f"{len(fault.kept)} characters"
    said = f": {record['error']}" if record.get("error") else ""
    return (
        f"{record['state']}{said} — buffer = acknowledged text ({kept} kept); next job served; "
        "nothing leaked"
    )


@pytest.mark.parametrize("raw_url", FAULTS, ids=[f.id for f in FAULTS], indirect=True)
async def test_backend_fault_ends_cleanly_and_leaks_nothing(
    make_editor: MakeEditor,
    stub: StubModelServer,
    raw_url: str | None,
    request: pytest.FixtureRequest,
    reliability: Recorder,
) -> None:
    fault: Fault = request.node.callspec.params["raw_url"]
    env = {"FASTEDIT_FAST_BASE_URL": raw_url} if raw_url else {}
    editor: Editor = await make_editor(
        env=env,
        init_options={
            "failover": [],
            "profiles": {"fast": {"maxTokens": MAX_TOKENS, **fault.profile}},
        },
    )
    # A good job first (standard profile, another document): imports, the HTTP pool and the
    # thread pool are warm, so that what is counted at rest is the steady state.
    editor.open(OTHER_URI, TEXT)
    editor.open(URI, TEXT)
    assert await editor.command("fastedit.setMode", {"mode": "standard"}) == {"mode": "standard"}
    stub.script(Answer(text=GOOD))
    assert (await complete(editor, OTHER_URI))["state"] == "done"
    before = await at_rest(editor)

    await editor.command("fastedit.setMode", {"mode": "fast"})
    requests = len(chat_requests(stub))
    stub.script(*fault.answers)
    record = await complete(editor)
    assert record["state"] == fault.state, record
    for words in fault.says:
        assert words in record["error"], record
    assert editor.text(URI) == TEXT[:CURSOR] + fault.kept + TEXT[CURSOR:]
    assert record["metrics"]["edits"] >= (1 if fault.kept else 0), record
    sent = chat_requests(stub)[requests:]
    if fault.requests is not None:
        assert len(sent) == fault.requests, [r.status for r in sent]
    for chat in sent:
        await stub.wait_closed(chat)

    # The server serves the next job (standard profile: the fast one may now be rate-limited).
    stub.reset()
    await editor.command("fastedit.setMode", {"mode": "standard"})
    after_text = editor.text(OTHER_URI)
    stub.script(Answer(text="  # ok"))
    end_of_print = after_text.index("2))") + 3
    again = await complete(editor, OTHER_URI, end_of_print)
    assert again["state"] == "done", again
    assert (
        editor.text(OTHER_URI) == after_text[:end_of_print] + "  # ok" + after_text[end_of_print:]
    )
    await assert_no_leaks(editor, before)
    reliability("backend", fault.what, _outcome(fault, record))


async def test_answers_read_to_their_end_leave_the_connection_for_the_next_job(
    editor: Editor, stub: StubModelServer
) -> None:
    # The body's end follows [DONE]; reading it returns the connection to the pool, so a hosted
    # provider is not asked for a new TCP and TLS handshake on every job.
    editor.open(URI, TEXT)
    stub.script(Answer(text=GOOD), Answer(text="  # again"))
    first = await complete(editor)
    second = await complete(editor, URI, CURSOR + len(GOOD))
    assert (first["state"], second["state"]) == ("done", "done")
    a, b = chat_requests(stub)
    assert a.completed and b.completed
    assert a.connection == b.connection
    stats = await at_rest(editor)
    assert stats["http"] == {"open": 1, "idle": 1}, stats
