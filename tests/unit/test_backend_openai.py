"""The OpenAI-compatible backend against a scripted server: bytes on the wire, streamed deltas,
every failure kind and its message, rate limits, retries and closing.

The scripted server answers through ``httpx.MockTransport``; what only a socket shows (a refused
or never-completing connection) goes to loopback ports through the server's own client
(:func:`fastedit_lsp.backends.network.new_client`). Real servers misbehaving on the wire (a
reset, TLS, proxies) are in ``test_network.py``.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from fastedit_lsp.backends.base import (
    BackendError,
    ChatMessage,
    ChatRequest,
    StreamInfo,
    stop_reason,
)
from fastedit_lsp.backends.network import new_client
from fastedit_lsp.backends.openai import (
    OpenAICompatibleBackend,
    build_chat_body,
    is_reasoning_model,
    json_body,
    list_models,
)
from fastedit_lsp.backends.presets import PRESETS, Preset, Provider
from fastedit_lsp.backends.ratelimit import RateLimits

FAKE_KEY = "sk-FAKE-do-not-leak-7f3a9c"
BASE = "https://api.example.test/v1"
REQUEST = ChatRequest(
    messages=(ChatMessage("system", "Complete the code."), ChatMessage("user", "def add(a, b):")),
    max_tokens=64,
    temperature=0.1,
    stop=("\n\n\n",),
)
SSE = {"content-type": "text/event-stream"}

Handler = Callable[[httpx.Request], httpx.Response]


def event(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def delta(text: str | None = None, finish: str | None = None, model: str = "served-model") -> bytes:
    body: dict[str, Any] = {"index": 0, "delta": {}, "finish_reason": finish}
    if text is not None:
        body["delta"] = {"content": text}
    return event({"object": "chat.completion.chunk", "model": model, "choices": [body]})


USAGE = event({"object": "chat.completion.chunk", "choices": [], "usage": {"completion_tokens": 3}})
DONE = event("[DONE]")
GOOD_STREAM = [
    event({"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}),
    delta("    return"),
    delta(" a + b"),
    delta(finish="stop"),
    USAGE,
    DONE,
]


def sse_response(parts: Iterable[bytes], status: int = 200) -> httpx.Response:
    return httpx.Response(status, headers=SSE, content=b"".join(parts))


class _Reads(httpx.AsyncByteStream):
    """A body handed over in the given reads, one per part."""

    def __init__(self, parts: Iterable[bytes]) -> None:
        self._parts = list(parts)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self._parts:
            yield part


def sse_reads(parts: Iterable[bytes]) -> Handler:
    """An event stream handed over in the given reads (a new body per request)."""
    reads = list(parts)
    return lambda request: httpx.Response(200, headers=SSE, stream=_Reads(reads))


def error_response(status: int, body: Any = None, **headers: str) -> httpx.Response:
    if body is None:
        return httpx.Response(status, headers=headers)
    if isinstance(body, str):
        return httpx.Response(status, headers=headers, text=body)
    return httpx.Response(status, headers=headers, json=body)


@dataclass
class FakeClock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Server:
    """A scripted endpoint: answers each request with the next handler, records the requests."""

    handlers: list[Handler]
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        handler = self.handlers[min(len(self.requests), len(self.handlers)) - 1]
        return handler(request)

    def body(self, index: int = -1) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.requests[index].content)
        return result


@dataclass
class Harness:
    server: Server
    client: httpx.AsyncClient
    limits: RateLimits
    clock: FakeClock
    backoffs: list[int]

    def backend(self, **overrides: Any) -> OpenAICompatibleBackend:
        options: dict[str, Any] = {
            "provider": "cerebras",
            "base_url": BASE,
            "model": "gpt-oss-120b",
            "api_key": SecretStr(FAKE_KEY),
            "timeout_ms": 30_000,
            "rate_limits": self.limits,
            "key_hint": "CEREBRAS_API_KEY",
            "backoff": self._backoff,
            "clock": self.clock,
            "wall_clock": lambda: 1_704_067_200.0,
        }
        options.update(overrides)
        return OpenAICompatibleBackend(options.pop("client", self.client), **options)

    def _backoff(self, attempt: int) -> float:
        self.backoffs.append(attempt)
        return 0.0


@pytest.fixture
async def make() -> AsyncIterator[Callable[..., Harness]]:
    clients: list[httpx.AsyncClient] = []

    def factory(*handlers: Handler | httpx.Response) -> Harness:
        server = Server([h if callable(h) else _constant(h) for h in handlers])
        client = httpx.AsyncClient(transport=httpx.MockTransport(server))
        clients.append(client)
        return Harness(server, client, RateLimits(), FakeClock(), [])

    yield factory
    for client in clients:
        await client.aclose()


def _constant(response: httpx.Response) -> Handler:
    # A fresh response per request: a response body can be read only once.
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            response.status_code, headers=response.headers, content=response.content
        )

    return handler


async def collect(
    backend: OpenAICompatibleBackend, request: ChatRequest = REQUEST
) -> tuple[list[str], StreamInfo]:
    info = StreamInfo()
    texts = [text async for text in backend.stream(request, info)]
    return texts, info


async def failure(backend: OpenAICompatibleBackend, texts: list[str] | None = None) -> BackendError:
    """The error the stream ends with; the texts yielded before it go into ``texts``."""
    with pytest.raises(BackendError) as caught:
        async for text in backend.stream(REQUEST, StreamInfo()):
            if texts is not None:
                texts.append(text)
    error = caught.value
    assert FAKE_KEY not in error.message
    assert FAKE_KEY not in str(error)
    return error


# --- streaming ------------------------------------------------------------------------------------


async def test_each_reads_deltas_are_one_piece_and_reads_stay_apart(
    make: Callable[..., Harness],
) -> None:
    """A fast model's read holds dozens of deltas: they go up as one piece (each piece costs
    every layer above a step), and ``info.deltas`` still counts them; a read's text is never
    held for the next one."""
    first, *rest = GOOD_STREAM
    h = make(
        sse_reads([first + delta("a") + delta("b"), delta("c"), b"".join([delta("d"), *rest])])
    )
    texts, info = await collect(h.backend())
    assert texts == ["ab", "c", "d    return a + b"]
    assert info.deltas == 6


async def test_text_before_a_bad_event_in_the_same_read_goes_up_first(
    make: Callable[..., Harness],
) -> None:
    h = make(sse_reads([delta("a") + delta("b") + b"data: {not json\n\n" + delta("c")]))
    texts: list[str] = []
    error = await failure(h.backend(), texts)
    assert texts == ["ab"]
    assert error.kind == "protocol" and "not JSON" in error.message


async def test_deltas_stream_in_order_and_fill_stream_info(make: Callable[..., Harness]) -> None:
    h = make(sse_response(GOOD_STREAM))
    texts, info = await collect(h.backend())
    assert texts == ["    return a + b"]  # one read: its deltas as one piece
    assert info.deltas == 2
    assert info.finish_reason == "stop"
    assert info.completion_tokens == 3
    assert info.model == "served-model"
    assert info.first_delta_at == h.clock.now


async def test_reads_split_at_every_byte_still_stream_the_text(
    make: Callable[..., Harness],
) -> None:
    wire = b"".join([delta("héllo 漢字 "), delta("🙂"), delta(finish="stop"), DONE])

    async def one_byte_at_a_time() -> AsyncIterator[bytes]:
        for i in range(len(wire)):
            yield wire[i : i + 1]

    h = make(lambda request: httpx.Response(200, headers=SSE, content=one_byte_at_a_time()))
    texts, _ = await collect(h.backend())
    assert "".join(texts) == "héllo 漢字 🙂"


async def test_crlf_line_endings_are_understood(make: Callable[..., Harness]) -> None:
    wire = b"".join(GOOD_STREAM).replace(b"\n", b"\r\n")
    h = make(httpx.Response(200, headers=SSE, content=wire))
    texts, info = await collect(h.backend())
    assert texts == ["    return a + b"]  # one read: its deltas as one piece
    assert info.completion_tokens == 3


async def test_comments_and_keepalives_are_ignored(make: Callable[..., Harness]) -> None:
    wire = [b": OPENROUTER PROCESSING\n\n", delta("x"), b":\n\n", delta(finish="stop"), DONE]
    h = make(sse_response(wire))
    texts, _ = await collect(h.backend())
    assert texts == ["x"]


async def test_reading_stops_at_done(make: Callable[..., Harness]) -> None:
    h = make(sse_response([delta("a"), DONE, b"data: {not json\n\n"]))
    texts, _ = await collect(h.backend())
    assert texts == ["a"]


async def test_a_stream_without_done_but_with_a_finish_reason_is_complete(
    make: Callable[..., Harness],
) -> None:
    h = make(sse_response([delta("a"), delta(finish="length")]))
    texts, info = await collect(h.backend())
    assert texts == ["a"]
    assert info.finish_reason == "length"
    assert (info.stop_reason, info.stop_detail) == ("length", "length")


@pytest.mark.parametrize(
    ("word", "normalised"),
    [("stop", "stop"), ("length", "length"), ("content_filter", "content_filter")],
)
async def test_the_stop_reason_is_normalised_from_finish_reason(
    make: Callable[..., Harness], word: str, normalised: str
) -> None:
    h = make(sse_response([delta("a"), delta(finish=word)]))
    _, info = await collect(h.backend())
    assert (info.stop_reason, info.stop_detail) == (normalised, word)


def test_provider_words_for_a_stop_map_to_the_normalised_reasons() -> None:
    words = {"end_turn": "stop", "max_tokens": "max_tokens", "SAFETY": "content_filter"}
    assert {word: stop_reason(word) for word in words} == words
    assert stop_reason("refusal") == "refusal" and stop_reason("something new") == "stop"


# --- the request on the wire ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "field"),
    [
        ("cerebras", "max_completion_tokens"),
        ("groq", "max_completion_tokens"),
        ("openai", "max_completion_tokens"),
        ("openrouter", "max_tokens"),
        ("ollama", "max_tokens"),
        ("vllm", "max_tokens"),
        ("openai-compatible", "max_tokens"),
    ],
)
async def test_the_request_body_uses_the_presets_max_tokens_field(
    make: Callable[..., Harness], provider: Provider, field: str
) -> None:
    h = make(sse_response(GOOD_STREAM))
    await collect(h.backend(provider=provider, model="llama-3.3-70b"))
    request = h.server.requests[0]
    assert request.method == "POST"
    assert str(request.url) == f"{BASE}/chat/completions"
    body = h.server.body()
    assert body[field] == 64
    other = {"max_tokens", "max_completion_tokens"} - {field}
    assert not other & body.keys()
    assert body["model"] == "llama-3.3-70b"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.1
    assert body["stop"] == ["\n\n\n"]
    assert body["messages"] == [
        {"role": "system", "content": "Complete the code."},
        {"role": "user", "content": "def add(a, b):"},
    ]
    assert "reasoning_effort" not in body


def test_stream_options_are_left_out_when_the_preset_lacks_them() -> None:
    preset = Preset("http://h/v1", None, False, usage_in_stream=False)
    body = build_chat_body(REQUEST, model="m", preset=preset, reasoning_effort=None)
    assert "stream_options" not in body


async def test_gpt_oss_gets_the_lowest_reasoning_effort(make: Callable[..., Harness]) -> None:
    h = make(sse_response(GOOD_STREAM))
    await collect(h.backend(model="gpt-oss-120b"))
    assert h.server.body()["reasoning_effort"] == "low"
    assert h.server.body()["temperature"] == 0.1


async def test_the_profiles_reasoning_effort_is_sent_for_any_model(
    make: Callable[..., Harness],
) -> None:
    h = make(sse_response(GOOD_STREAM))
    await collect(h.backend(model="llama-3.3-70b", reasoning_effort="medium"))
    assert h.server.body()["reasoning_effort"] == "medium"


def test_openai_reasoning_models_omit_temperature_and_stop() -> None:
    body = build_chat_body(
        REQUEST, model="o3-mini", preset=PRESETS["openai"], reasoning_effort=None
    )
    assert body["reasoning_effort"] == "low"
    assert "temperature" not in body
    assert "stop" not in body


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [
        ("gpt-oss-120b", True),
        ("openai/gpt-oss-20b", True),
        ("o1", True),
        ("o3-mini", True),
        ("o4-mini-2025-04-16", True),
        ("gpt-5-nano", True),
        ("gpt-4o", False),
        ("gpt-4o-mini", False),
        ("llama3.1-8b", False),
        ("qwen-3-coder-480b", False),
    ],
)
def test_reasoning_models_are_recognised(model: str, reasoning: bool) -> None:
    assert is_reasoning_model(model) is reasoning


async def test_authorization_header_is_sent_only_with_a_key(make: Callable[..., Harness]) -> None:
    h = make(sse_response(GOOD_STREAM))
    await collect(h.backend())
    await collect(h.backend(api_key=None))
    await collect(h.backend(api_key=SecretStr("  ")))
    with_key, without_key, blank_key = h.server.requests
    assert with_key.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert "authorization" not in without_key.headers
    assert "authorization" not in blank_key.headers


async def test_repr_never_shows_the_key(make: Callable[..., Harness]) -> None:
    backend = make().backend()
    assert FAKE_KEY not in repr(backend)
    assert "gpt-oss-120b" in repr(backend)


async def test_a_key_that_cannot_be_sent_fails_without_echoing_it(
    make: Callable[..., Harness],
) -> None:
    h = make(sse_response(GOOD_STREAM))
    error = await failure(h.backend(api_key=SecretStr(FAKE_KEY + "\u2019x")))
    assert error.kind == "auth"
    assert "CEREBRAS_API_KEY" in error.message
    assert h.server.requests == []


async def test_lone_surrogates_are_sent_as_replacement_characters(
    make: Callable[..., Harness],
) -> None:
    # An editor can send JSON "\\ud800", which no UTF-8 body can carry; a pair split across two
    # edits is one character again.
    request = ChatRequest(
        messages=(
            ChatMessage("system", "s\ud800"),
            ChatMessage("user", "t = '\udc00'; \ud83d\ude00"),
        ),
        max_tokens=64,
        stop=("\ud800\n",),
    )
    h = make(sse_response(GOOD_STREAM))
    texts, _ = await collect(h.backend(model="llama-3.3-70b"), request)
    assert texts == ["    return a + b"]  # one read: its deltas as one piece
    (sent,) = h.server.requests
    assert "t = '\ufffd'; \U0001f600".encode() in sent.content
    body = h.server.body()
    assert [m["content"] for m in body["messages"]] == ["s\ufffd", "t = '\ufffd'; \U0001f600"]
    assert body["stop"] == ["\ufffd\n"]


# --- HTTP errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "kind", "fragments"),
    [
        pytest.param(
            error_response(401, {"error": {"message": "Wrong API Key", "code": "wrong_api_key"}}),
            "auth",
            ["HTTP 401", "Wrong API Key", "CEREBRAS_API_KEY", "gpt-oss-120b", "cerebras"],
            id="401",
        ),
        pytest.param(
            error_response(403, "Forbidden"),
            "auth",
            ["HTTP 403", "CEREBRAS_API_KEY"],
            id="403-text",
        ),
        pytest.param(
            error_response(404, {"message": "Model x does not exist", "code": "model_not_found"}),
            "not_found",
            ["HTTP 404", "does not exist", f"{BASE}/models", "model id"],
            id="404",
        ),
        pytest.param(
            error_response(400, {"error": {"message": "Unsupported parameter: logit_bias"}}),
            "bad_request",
            ["HTTP 400", "Unsupported parameter: logit_bias"],
            id="400",
        ),
        pytest.param(
            error_response(422, "messages: field required"),
            "bad_request",
            ["HTTP 422", "messages: field required"],
            id="422-text",
        ),
        pytest.param(
            error_response(
                429,
                {"error": {"message": "You exceeded your quota", "type": "insufficient_quota"}},
            ),
            "quota",
            ["HTTP 429", "exceeded your quota", "billing", "cerebras"],
            id="429-insufficient-quota",
        ),
        pytest.param(
            error_response(402, {"error": {"message": "Insufficient credits", "code": 402}}),
            "quota",
            ["HTTP 402", "Insufficient credits"],
            id="402",
        ),
        pytest.param(
            error_response(502, "<html><body><h1>502 Bad Gateway</h1></body></html>"),
            "server",
            ["HTTP 502", "after 3 attempts"],
            id="502-html",
        ),
        pytest.param(error_response(503), "server", ["HTTP 503"], id="503-empty"),
    ],
)
async def test_http_errors_map_to_kinds_with_actionable_messages(
    make: Callable[..., Harness], response: httpx.Response, kind: str, fragments: list[str]
) -> None:
    h = make(response)
    error = await failure(h.backend())
    assert error.kind == kind
    assert error.status == response.status_code
    for fragment in fragments:
        assert fragment in error.message
    assert "<html>" not in error.message


async def test_a_401_without_a_key_says_no_key_is_set(make: Callable[..., Harness]) -> None:
    h = make(error_response(401, {"error": {"message": "Missing API key"}}))
    error = await failure(h.backend(api_key=None))
    assert error.kind == "auth"
    assert "No API key is set" in error.message
    assert "CEREBRAS_API_KEY" in error.message


async def test_a_provider_echoing_the_key_is_scrubbed(make: Callable[..., Harness]) -> None:
    h = make(error_response(401, {"error": {"message": f"Incorrect API key provided: {FAKE_KEY}"}}))
    error = await failure(h.backend())
    assert "Incorrect API key provided" in error.message
    assert FAKE_KEY not in error.message


async def test_error_bodies_are_read_only_up_to_a_few_kb(make: Callable[..., Harness]) -> None:
    served: list[int] = []

    async def endless_body() -> AsyncIterator[bytes]:
        while True:
            served.append(1024)
            yield b"x" * 1024

    h = make(lambda request: httpx.Response(400, content=endless_body()))
    error = await failure(h.backend())
    assert error.kind == "bad_request"
    assert len(error.message) < 600
    assert sum(served) <= 8 * 1024  # the client stopped reading


# --- rate limits ----------------------------------------------------------------------------------


async def test_a_429_records_retry_after_and_then_blocks_without_sending(
    make: Callable[..., Harness],
) -> None:
    rate_limited = error_response(
        429, {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}
    )
    rate_limited.headers["retry-after"] = "20"
    h = make(rate_limited, sse_response(GOOD_STREAM))
    backend = h.backend()

    error = await failure(backend)
    assert error.kind == "rate_limit"
    assert error.retry_after == 20.0
    assert "20 s" in error.message

    h.clock.now += 5
    blocked = await failure(backend)
    assert blocked.kind == "blocked"
    assert blocked.retry_after == 15.0
    assert len(h.server.requests) == 1  # nothing was sent

    # Another model on the same host is not blocked.
    await collect(h.backend(model="llama-3.3-70b"))
    assert len(h.server.requests) == 2

    h.clock.now += 15
    texts, _ = await collect(backend)
    assert texts == ["    return a + b"]  # one read: its deltas as one piece


async def test_provider_reset_headers_set_the_block(make: Callable[..., Harness]) -> None:
    # Cerebras: per-minute limits are reported as "quota" codes but are plain rate limits.
    body = {
        "message": "Tokens per minute limit exceeded - too many tokens processed.",
        "type": "too_many_tokens_error",
        "param": "quota",
        "code": "token_quota_exceeded",
    }
    response = error_response(
        429,
        body,
        **{
            "x-ratelimit-remaining-tokens-minute": "0",
            "x-ratelimit-reset-tokens-minute": "42.5",
        },
    )
    h = make(response)
    error = await failure(h.backend())
    assert error.kind == "rate_limit"
    assert error.retry_after == 42.5
    assert h.limits.blocked_for((BASE, "gpt-oss-120b"), h.clock.now) == 42.5


async def test_a_429_without_reset_information_blocks_briefly(make: Callable[..., Harness]) -> None:
    h = make(error_response(429))
    backend = h.backend()
    first = await failure(backend)
    assert first.kind == "rate_limit"
    assert first.retry_after == 1.0
    h.clock.now += 1
    second = await failure(backend)
    assert second.retry_after == 2.0


async def test_quota_errors_neither_retry_nor_block(make: Callable[..., Harness]) -> None:
    quota = error_response(429, {"error": {"message": "No credits", "code": "insufficient_quota"}})
    h = make(quota, quota)
    backend = h.backend()
    assert (await failure(backend)).kind == "quota"
    assert len(h.server.requests) == 1
    assert (await failure(backend)).kind == "quota"
    assert len(h.server.requests) == 2


# --- retries --------------------------------------------------------------------------------------


async def test_a_5xx_is_retried_and_then_succeeds(make: Callable[..., Harness]) -> None:
    h = make(error_response(500), error_response(503), sse_response(GOOD_STREAM))
    texts, _ = await collect(h.backend())
    assert texts == ["    return a + b"]  # one read: its deltas as one piece
    assert len(h.server.requests) == 3
    assert h.backoffs == [1, 2]


async def test_the_consumer_hears_once_that_the_request_went_out(
    make: Callable[..., Harness],
) -> None:
    """``StreamInfo.sent``: called when the first request is written, before its answer (the
    server has it, the head not read yet), and not again for the retries."""
    h = make(error_response(503), sse_response(GOOD_STREAM))
    heard: list[int] = []
    info = StreamInfo(sent=lambda: heard.append(len(h.server.requests)))
    texts = [text async for text in h.backend().stream(REQUEST, info)]
    assert texts == ["    return a + b"]  # one read: its deltas as one piece
    assert len(heard) == 1 and len(h.server.requests) == 2


async def test_a_request_that_never_went_out_is_never_heard_of(
    make: Callable[..., Harness],
) -> None:
    h = make(sse_response(GOOD_STREAM))
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    heard: list[bool] = []
    async with new_client() as client:
        with pytest.raises(BackendError):
            async for _ in h.backend(client=client, base_url=f"http://127.0.0.1:{port}/v1").stream(
                REQUEST, StreamInfo(sent=lambda: heard.append(True))
            ):
                pass
    assert heard == []


async def test_a_5xx_fails_after_the_retry_bound(make: Callable[..., Harness]) -> None:
    h = make(error_response(500, {"error": {"message": "Internal error"}}))
    error = await failure(h.backend(retries=2))
    assert error.kind == "server"
    assert "after 3 attempts" in error.message
    assert "Internal error" in error.message
    assert len(h.server.requests) == 3


async def test_client_errors_are_not_retried(make: Callable[..., Harness]) -> None:
    h = make(error_response(400, "bad"))
    await failure(h.backend())
    assert len(h.server.requests) == 1


# --- transport failures ---------------------------------------------------------------------------


def raising(exc: Exception) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("exc", "kind", "fragment"),
    [
        # The server goes silent: no answer within the read timeout.
        (httpx.ReadTimeout("timed out"), "timeout", "no data for 0.3 s"),
        # The server closes the connection without answering.
        (httpx.RemoteProtocolError("Server disconnected"), "dropped", "before an answer"),
    ],
)
async def test_transport_failures_map_to_kinds(
    make: Callable[..., Harness], exc: Exception, kind: str, fragment: str
) -> None:
    h = make(raising(exc))
    error = await failure(h.backend(timeout_ms=300))
    assert error.kind == kind
    assert fragment in error.message
    assert len(h.server.requests) == 1  # only 5xx statuses are retried


async def test_a_refused_connection_is_a_connect_error(make: Callable[..., Harness]) -> None:
    h = make(sse_response(GOOD_STREAM))
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    async with new_client() as client:
        error = await failure(h.backend(client=client, base_url=f"http://127.0.0.1:{port}/v1"))
    assert error.kind == "connect"
    assert "Cannot connect to" in error.message
    assert h.server.requests == []


def fill_the_queue(address: tuple[str, int]) -> list[socket.socket]:
    """Connections to ``address`` until one no longer completes (its listener's queue is full)."""
    fillers: list[socket.socket] = []
    for _ in range(8):
        try:
            fillers.append(socket.create_connection(address, timeout=0.5))
        except TimeoutError:
            return fillers
    for filler in fillers:
        filler.close()
    pytest.fail("the listener's queue never filled")


async def test_a_connection_that_never_completes_is_a_connect_timeout(
    make: Callable[..., Harness],
) -> None:
    h = make(sse_response(GOOD_STREAM))
    with socket.socket() as full:
        # A listener that accepts nothing, its queue filled: further handshakes get no answer.
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        address = full.getsockname()
        fillers = fill_the_queue(address)
        base_url = f"http://{address[0]}:{address[1]}/v1"
        try:
            async with new_client() as client:
                error = await failure(h.backend(client=client, base_url=base_url, timeout_ms=300))
        finally:
            for filler in fillers:
                filler.close()
    assert error.kind == "timeout"
    assert "within 0.3 s" in error.message


async def test_an_invalid_base_url_is_a_clear_connect_error(make: Callable[..., Harness]) -> None:
    h = make(sse_response(GOOD_STREAM))
    error = await failure(h.backend(base_url="api.example.test/v1"))
    assert error.kind == "connect"
    assert "baseUrl" in error.message


def breaking_stream(exc: Exception) -> Handler:
    async def body() -> AsyncIterator[bytes]:
        yield delta("first")
        yield delta(" second")
        raise exc

    return lambda request: httpx.Response(200, headers=SSE, content=body())


async def test_a_connection_dropped_mid_stream_says_text_arrived(
    make: Callable[..., Harness],
) -> None:
    h = make(breaking_stream(httpx.RemoteProtocolError("peer closed connection")))
    texts: list[str] = []
    error = await failure(h.backend(), texts)
    assert texts == ["first", " second"]
    assert error.kind == "dropped"
    assert "after 2 text deltas" in error.message
    assert "incomplete" in error.message


async def test_a_read_timeout_mid_stream_is_a_timeout(make: Callable[..., Harness]) -> None:
    h = make(breaking_stream(httpx.ReadTimeout("")))
    error = await failure(h.backend(timeout_ms=300), [])
    assert error.kind == "timeout"
    assert "no data for 0.3 s" in error.message
    assert "after 2 text deltas" in error.message


async def test_a_stream_ending_before_the_model_finished_is_dropped(
    make: Callable[..., Harness],
) -> None:
    h = make(sse_response([delta("a")]))
    error = await failure(h.backend())
    assert error.kind == "dropped"


# --- malformed 200 answers ------------------------------------------------------------------------


async def test_a_json_answer_instead_of_a_stream_is_a_protocol_error(
    make: Callable[..., Harness],
) -> None:
    h = make(httpx.Response(200, json={"error": {"message": "streaming disabled"}}))
    error = await failure(h.backend())
    assert error.kind == "protocol"
    assert "application/json" in error.message
    assert "streaming disabled" in error.message


async def test_an_error_event_inside_a_200_stream_is_reported(
    make: Callable[..., Harness],
) -> None:
    error_event = event({"error": {"message": "Provider disconnected", "code": "server_error"}})
    h = make(sse_response([delta("partial"), error_event, delta("never")]))
    texts: list[str] = []
    error = await failure(h.backend(), texts)
    assert texts == ["partial"]
    assert error.kind == "protocol"
    assert "Provider disconnected" in error.message
    assert "gpt-oss-120b" in error.message


async def test_a_named_error_event_is_reported(make: Callable[..., Harness]) -> None:
    h = make(sse_response([b'event: error\ndata: {"message": "overloaded"}\n\n']))
    error = await failure(h.backend())
    assert error.kind == "protocol"
    assert "overloaded" in error.message


@pytest.mark.parametrize(
    "wire",
    [b'data: {"choices": [\n\n', b"data: \xff\xfe\x00garbage\n\n", b"\x00\x01\x02\xff" * 10],
    ids=["bad-json", "bad-utf8", "binary"],
)
async def test_a_malformed_event_ends_the_stream_with_a_protocol_error(
    make: Callable[..., Harness], wire: bytes
) -> None:
    h = make(sse_response([delta("ok"), wire, delta("never"), DONE]))
    texts: list[str] = []
    error = await failure(h.backend(), texts)
    assert texts == ["ok"]
    assert error.kind == "protocol"
    assert "malformed" in error.message


async def test_a_200_with_no_events_is_a_protocol_error(make: Callable[..., Harness]) -> None:
    h = make(sse_response([b"hello, this is not an event stream\n"]))
    error = await failure(h.backend())
    assert error.kind == "protocol"


async def test_a_bare_json_error_on_a_200_event_stream_gives_the_providers_message(
    make: Callable[..., Harness],
) -> None:
    """Some gateways answer 200 ``text/event-stream`` with a JSON error and no ``data:`` line."""
    body = {"error": {"message": "Model gpt-x is overloaded", "type": "server_error"}}
    h = make(httpx.Response(200, headers=SSE, content=json.dumps(body).encode()))
    error = await failure(h.backend())
    assert error.kind == "protocol"
    assert "Model gpt-x is overloaded" in error.message
    assert "instead of an event stream" in error.message


async def test_a_pretty_printed_json_error_on_a_200_event_stream_is_read_too(
    make: Callable[..., Harness],
) -> None:
    body = json.dumps(
        {"error": {"message": "No credit left", "code": "insufficient_quota"}}, indent=2
    )
    h = make(httpx.Response(200, headers=SSE, content=body.encode()))
    error = await failure(h.backend())
    assert error.kind == "quota"
    assert "No credit left" in error.message


async def test_a_surrogate_pair_split_over_two_events_arrives_joined(
    make: Callable[..., Harness],
) -> None:
    """An emoji streamed as its two UTF-16 halves in two events (JSON escapes): the edit session
    gets the whole character, never half of one."""
    halves = [event('{"choices":[{"index":0,"delta":{"content":"a \\ud83c"}}]}'),
              event('{"choices":[{"index":0,"delta":{"content":"\\udf89 b"}}]}')]  # fmt: skip
    h = make(sse_response([*halves, delta(finish="stop"), DONE]))
    texts, _ = await collect(h.backend())
    assert "".join(texts) == "a 🎉 b"
    for text in texts:
        text.encode("utf-8")  # no lone surrogate in any delta


async def test_a_high_surrogate_that_ends_the_stream_becomes_a_replacement_character(
    make: Callable[..., Harness],
) -> None:
    half = event('{"choices":[{"index":0,"delta":{"content":"x\\ud83c"}}]}')
    h = make(sse_response([half, delta(finish="stop"), DONE]))
    texts, _ = await collect(h.backend())
    assert "".join(texts) == "x\ufffd"


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "content_filter"),
        ("tool_calls", "stop"),
        ("eos", "stop"),
        ("something_new", "stop"),
    ],
)
async def test_the_finish_reason_is_normalised_and_kept(
    make: Callable[..., Harness], finish: str, reason: str
) -> None:
    h = make(sse_response([delta("x"), delta(finish=finish), DONE]))
    _, info = await collect(h.backend())
    assert info.stop_reason == reason
    assert info.stop_detail == finish
    assert info.finish_reason == finish


# --- closing --------------------------------------------------------------------------------------


class TrackedStream(httpx.AsyncByteStream):
    """A response body that sends ``parts`` and then stalls, recording how it was closed."""

    def __init__(self, parts: list[bytes]) -> None:
        self._parts = parts
        self._gen = self._produce()
        self.closed = False
        self.generator_exit = False
        self.cancelled = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._gen

    async def _produce(self) -> AsyncIterator[bytes]:
        try:
            for part in self._parts:
                yield part
            await asyncio.Event().wait()  # the model stalls
        except GeneratorExit:
            self.generator_exit = True
            raise
        except asyncio.CancelledError:
            self.cancelled = True
            raise

    async def aclose(self) -> None:
        # What a real transport does: closing the response closes the connection.
        self.closed = True
        await self._gen.aclose()  # type: ignore[attr-defined]


async def test_aclose_on_the_stream_closes_the_http_response_at_once(
    make: Callable[..., Harness],
) -> None:
    body = TrackedStream([delta("first"), delta(" second")])
    h = make(lambda request: httpx.Response(200, headers=SSE, stream=body))
    stream = h.backend().stream(REQUEST, StreamInfo())
    assert await anext(stream) == "first"
    await stream.aclose()
    assert body.closed
    assert body.generator_exit


async def test_cancelling_the_consumer_closes_the_http_response(
    make: Callable[..., Harness],
) -> None:
    body = TrackedStream([delta("first")])
    h = make(lambda request: httpx.Response(200, headers=SSE, stream=body))
    received: list[str] = []
    got_first = asyncio.Event()

    async def consume() -> None:
        async for text in h.backend().stream(REQUEST, StreamInfo()):
            received.append(text)
            got_first.set()

    task = asyncio.create_task(consume())
    await got_first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert received == ["first"]
    assert body.cancelled
    assert body.closed


# --- list_models ----------------------------------------------------------------------------------


async def test_list_models_returns_the_ids(make: Callable[..., Harness]) -> None:
    models = {"object": "list", "data": [{"id": "gpt-oss-120b"}, {"id": "qwen-3-coder"}]}
    h = make(httpx.Response(200, json=models))
    ids = await list_models(h.client, BASE + "/", SecretStr(FAKE_KEY), provider="cerebras")
    assert ids == ["gpt-oss-120b", "qwen-3-coder"]
    request = h.server.requests[0]
    assert request.method == "GET"
    assert str(request.url) == f"{BASE}/models"
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"


async def test_list_models_without_a_key_sends_no_authorization(
    make: Callable[..., Harness],
) -> None:
    h = make(httpx.Response(200, json={"models": [{"name": "qwen2.5-coder:7b"}]}))
    assert await list_models(h.client, BASE, None, provider="ollama") == ["qwen2.5-coder:7b"]
    assert "authorization" not in h.server.requests[0].headers


@pytest.mark.parametrize(
    ("response", "kind"),
    [
        (error_response(401, {"error": {"message": "bad key"}}), "auth"),
        (error_response(404, "Not Found"), "not_found"),
        (httpx.Response(200, text="<html>hello</html>"), "protocol"),
    ],
)
async def test_list_models_maps_errors(
    make: Callable[..., Harness], response: httpx.Response, kind: str
) -> None:
    h = make(response)
    with pytest.raises(BackendError) as caught:
        await list_models(h.client, BASE, SecretStr(FAKE_KEY), key_hint="CEREBRAS_API_KEY")
    assert caught.value.kind == kind
    assert FAKE_KEY not in caught.value.message


async def test_list_models_connect_failure(make: Callable[..., Harness]) -> None:
    h = make(raising(httpx.ConnectError("Name or service not known")))
    with pytest.raises(BackendError) as caught:
        await list_models(h.client, BASE, None)
    assert caught.value.kind == "connect"
    assert BASE in caught.value.message


async def test_a_placeholder_key_does_not_mangle_messages(make: Callable[..., Harness]) -> None:
    # Local servers ignore the key, so users set placeholders that are also ordinary words.
    h = make(error_response(400, {"error": {"message": "ollama cannot load this model"}}))
    with pytest.raises(BackendError) as caught:
        await collect(h.backend(provider="ollama", api_key=SecretStr("ollama")))
    assert "ollama model 'gpt-oss-120b'" in caught.value.message
    assert "ollama cannot load this model" in caught.value.message


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "stream": True, "temperature": 0.2, "max_tokens": 512},
        {"model": "m", "messages": [{"role": "user", "content": "café 世界 😀 \u2028 \x00"}]},
        {"model": "m", "temperature": 1e-05, "stop": ["\n\n", "```"]},
    ],
    ids=["plain", "beyond-ascii", "small-float"],
)
def test_a_request_body_is_compact_utf8_json_of_the_same_values(body: dict[str, Any]) -> None:
    written = json_body(body)
    reference = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    assert json.loads(written) == body
    if body.get("temperature") != 1e-05:  # written 0.00001 (the same number)
        assert written == reference


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"model": "m", "temperature": float("nan")}, ValueError),
        ({"model": "m", "temperature": float("inf")}, ValueError),
        ({"model": "m", "messages": [{"content": "lone \ud800"}]}, UnicodeEncodeError),
    ],
    ids=["nan", "infinity", "lone-surrogate"],
)
def test_a_body_json_cannot_hold_fails_as_it_did(body: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        json_body(body)
