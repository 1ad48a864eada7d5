"""Fill-in-the-middle on the wire: bodies (golden), URLs, chunks, and ``fim_stream`` through
a scripted server (``httpx.MockTransport``) for each dialect, plus the chat FIM prompt
(golden).

Regenerate the goldens after an intended change with
``FASTEDIT_UPDATE_GOLDEN=1 pytest tests/unit/test_fim_wire.py`` and read the diff.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from fastedit_lsp.backends.base import BackendError, StreamInfo
from fastedit_lsp.backends.fim import (
    FIM_KINDS,
    FimKind,
    FimRequest,
    build_fim_body,
    fim_endpoint,
    line_comment,
    parse_fim_chunk,
)
from fastedit_lsp.backends.openai import OpenAICompatibleBackend
from fastedit_lsp.backends.presets import PRESETS, Preset
from fastedit_lsp.backends.ratelimit import RateLimits
from fastedit_lsp.backends.sse import ChatChunk
from fastedit_lsp.prompting import prompts

from .test_backend_openai import TrackedStream

DATA = Path(__file__).parent.parent / "data"
FAKE_KEY = "sk-FAKE-do-not-leak-fim-41c7"
BASE = "http://llm.example.test:8080/v1"
SSE = {"content-type": "text/event-stream"}
REQUEST = FimRequest(
    prefix="def area(radius: float) -> float:\n    return ",
    suffix="\n\n\ndef total(radii: list[float]) -> float:\n    return sum(map(area, radii))\n",
    max_tokens=128,
    temperature=0.1,
    stop=("\n\n\n",),
    snippets=(
        ("geometry/constants.py", "PI = 3.141592653589793\n\nTAU = 2 * PI\n"),
        ("geometry/units.py", "def to_metres(feet: float) -> float:\n    return feet * 0.3048\n"),
    ),
    path="geometry/shapes.py",
    language_id="python",
)


def _golden(path: Path, text: str) -> None:
    if os.environ.get("FASTEDIT_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden {path.name}: run with FASTEDIT_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


# --- bodies ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", FIM_KINDS)
def test_the_body_sent_for_each_kind_is_pinned(kind: FimKind) -> None:
    body = build_fim_body(kind, REQUEST, model="stub-fast", preset=PRESETS["openai-compatible"])
    _golden(DATA / "fim" / f"{kind}.json", json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    assert body["stream"] is True


@pytest.mark.parametrize("kind", ["completions", "mistral"])
def test_without_snippets_the_prompt_is_exactly_the_prefix(kind: FimKind) -> None:
    request = FimRequest(prefix="x = ", suffix="\n", max_tokens=8, path="a.py")
    body = build_fim_body(kind, request, model="m", preset=PRESETS["vllm"])
    assert body["prompt"] == "x = "
    assert body["suffix"] == "\n"
    assert "stop" not in body


@pytest.mark.parametrize(
    ("language_id", "marker"),
    [("python", "#"), ("shellscript", "#"), ("typescript", "//"), ("go", "//"), ("lua", "--"),
     ("", "//"), ("some-new-language", "//")],
)  # fmt: skip
def test_snippets_go_before_the_prefix_in_the_languages_comment_syntax(
    language_id: str, marker: str
) -> None:
    request = FimRequest(
        prefix="value = ",
        suffix="",
        max_tokens=8,
        snippets=(("lib/a.txt", "first\n\nthird"),),
        path="main.x",
        language_id=language_id,
    )
    body = build_fim_body("completions", request, model="m", preset=PRESETS["vllm"])
    assert line_comment(language_id) == marker
    assert body["prompt"] == (
        f"{marker} Path: lib/a.txt\n{marker} first\n{marker}\n{marker} third\n"
        f"{marker} Path: main.x\nvalue = "
    )


def test_without_a_path_a_blank_line_separates_the_snippets_from_the_file() -> None:
    request = FimRequest("value = ", "", 8, snippets=(("a.py", "A = 1"),), language_id="python")
    body = build_fim_body("mistral", request, model="codestral-latest", preset=PRESETS["vllm"])
    assert body["prompt"] == "# Path: a.py\n# A = 1\n\nvalue = "


def test_completions_send_max_tokens_whatever_the_presets_field() -> None:
    # The legacy endpoint predates max_completion_tokens, which Cerebras' chat preset asks for.
    body = build_fim_body("completions", REQUEST, model="m", preset=PRESETS["cerebras"])
    assert body["max_tokens"] == 128
    assert "max_completion_tokens" not in body


def test_usage_is_asked_for_only_where_the_preset_supports_it() -> None:
    with_usage = build_fim_body("completions", REQUEST, model="m", preset=PRESETS["ollama"])
    no_usage = Preset(None, None, False, usage_in_stream=False)
    without = build_fim_body("completions", REQUEST, model="m", preset=no_usage)
    assert with_usage["stream_options"] == {"include_usage": True}
    assert "stream_options" not in without
    for kind in ("infill", "mistral"):
        body = build_fim_body(kind, REQUEST, model="m", preset=PRESETS["ollama"])
        assert "stream_options" not in body, kind


def test_infill_names_the_model_only_when_there_is_one() -> None:
    request = FimRequest(prefix="a", suffix="b", max_tokens=4)
    named = build_fim_body("infill", request, model="qwen-coder", preset=PRESETS["llamacpp"])
    anonymous = build_fim_body("infill", request, model="", preset=PRESETS["llamacpp"])
    assert named["model"] == "qwen-coder"
    assert "model" not in anonymous
    assert anonymous["input_extra"] == []
    assert anonymous["n_predict"] == 4
    assert anonymous["cache_prompt"] is True
    assert "stop" not in anonymous


# --- endpoints ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "base_url", "url"),
    [
        ("completions", "https://api.openai.com/v1", "https://api.openai.com/v1/completions"),
        ("completions", "https://api.deepseek.com/beta/", "https://api.deepseek.com/beta/completions"),
        ("infill", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/infill"),
        ("infill", "http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/infill"),
        ("infill", "http://127.0.0.1:8080", "http://127.0.0.1:8080/infill"),
        ("infill", "http://gpu.lan/llama/v1", "http://gpu.lan/llama/infill"),
        ("infill", "http://gpu.lan/v1beta", "http://gpu.lan/v1beta/infill"),
        ("mistral", "https://codestral.mistral.ai/v1", "https://codestral.mistral.ai/v1/fim/completions"),
    ],
)  # fmt: skip
def test_each_kind_posts_to_its_endpoint(kind: FimKind, base_url: str, url: str) -> None:
    assert fim_endpoint(kind, base_url) == url


# --- chunks ---------------------------------------------------------------------------------------


def _completion_chunk(text: str, finish: str | None = None) -> str:
    choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
    return json.dumps({"object": "text_completion", "model": "served", "choices": [choice]})


def _chat_chunk(text: str | None, finish: str | None = None, **extra: Any) -> str:
    delta = {} if text is None else {"content": text}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return json.dumps({"object": "chat.completion.chunk", "model": "codestral-2501",
                       "choices": [choice], **extra})  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "data", "chunk"),
    [
        ("completions", _completion_chunk("    return"), ChatChunk("    return", model="served")),
        ("completions", _completion_chunk("", "length"), ChatChunk("", "length", model="served")),
        ("completions", json.dumps({"choices": [], "usage": {"completion_tokens": 7}}),
         ChatChunk(completion_tokens=7)),
        ("completions", "[DONE]", ChatChunk(done=True)),
        ("mistral", _chat_chunk("x"), ChatChunk("x", model="codestral-2501")),
        ("mistral", _chat_chunk(None, "stop", usage={"completion_tokens": 3}),
         ChatChunk("", "stop", 3, "codestral-2501")),
        ("mistral", "[DONE]", ChatChunk(done=True)),
        ("infill", json.dumps({"content": "rad", "stop": False}), ChatChunk("rad")),
        ("infill", json.dumps({"content": "", "stop": True, "tokens_predicted": 9,
                               "stop_type": "eos", "model": "qwen.gguf"}),
         ChatChunk("", "stop", 9, "qwen.gguf", done=True)),
        ("infill", json.dumps({"content": "ius", "stop": True, "tokens_predicted": 4,
                               "stop_type": "limit"}),
         ChatChunk("ius", "length", 4, done=True)),
        ("infill", json.dumps({"content": "", "stop": True, "stopped_limit": True}),
         ChatChunk("", "length", done=True)),
        ("infill", json.dumps({"content": "", "stop": True, "stopped_word": True}),
         ChatChunk("", "stop", done=True)),
    ],
)  # fmt: skip
def test_chunks_are_read_in_each_dialect(kind: FimKind, data: str, chunk: ChatChunk) -> None:
    assert parse_fim_chunk(kind, data) == chunk


@pytest.mark.parametrize("kind", FIM_KINDS)
def test_an_error_inside_a_200_stream_is_an_error_chunk(kind: FimKind) -> None:
    data = json.dumps({"error": {"message": "model overloaded", "type": "server_error"}})
    chunk = parse_fim_chunk(kind, data)
    assert chunk.error == "model overloaded (server_error)"
    assert chunk.text == ""
    assert not chunk.done


@pytest.mark.parametrize("kind", FIM_KINDS)
@pytest.mark.parametrize("data", ['{"content": "a", "sto', "[1, 2]", "not json"])
def test_malformed_events_are_protocol_errors(kind: FimKind, data: str) -> None:
    with pytest.raises(BackendError) as caught:
        parse_fim_chunk(kind, data)
    assert caught.value.kind == "protocol"
    assert "event is not" in caught.value.message


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (_chat_chunk("x"), "not a llama.cpp infill chunk"),
        (json.dumps({"content": 5, "stop": False}), "content is not a string"),
    ],
)
def test_infill_refuses_chunks_that_are_not_llama_cpps(data: str, problem: str) -> None:
    with pytest.raises(BackendError, match=problem) as caught:
        parse_fim_chunk("infill", data)
    assert caught.value.kind == "protocol"


# --- the chat prompt (fim: chat) ------------------------------------------------------------------


def test_the_chat_fim_prompt_is_pinned() -> None:
    messages = prompts.fim_chat_messages(
        REQUEST.prefix,
        REQUEST.suffix,
        path=REQUEST.path,
        language_id=REQUEST.language_id,
        snippets=REQUEST.snippets,
    )
    rendered = "\n".join(f"--- {m.role}\n{m.content}" for m in messages) + "\n"
    _golden(DATA / "prompts" / "fimChat.txt", rendered)
    assert [m.role for m in messages] == ["system", "user"]
    assert messages[0].content == prompts.FIM_SYSTEM
    user = messages[1].content
    assert user.count(prompts.CURSOR) == 2  # in the file, and in the instruction
    assert f"{REQUEST.prefix}{prompts.CURSOR}{REQUEST.suffix}" in user
    assert user.index("geometry/constants.py") < user.index("geometry/units.py")
    assert user.index("geometry/units.py") < user.index("File: geometry/shapes.py")
    assert len(rendered) < 2000


def test_the_chat_fim_prompt_without_snippets_shows_only_the_file() -> None:
    system, user = prompts.fim_chat_messages("a = ", "\n", path="", language_id="")
    assert system.content == prompts.FIM_SYSTEM
    assert user.content == (
        f"File: untitled (language: text)\n```text\na = {prompts.CURSOR}\n\n```\n"
        f"Reply with only the text that goes at {prompts.CURSOR}."
    )


# --- fim_stream to a scripted server (httpx.MockTransport) ---------------------------------------


def event(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def text_event(kind: FimKind, text: str) -> bytes:
    """One event carrying ``text`` in ``kind``'s dialect."""
    if kind == "infill":
        return event({"content": text, "stop": False})
    if kind in ("completions", "inception"):  # Inception's FIM chunks have the completions shape
        return event(_completion_chunk(text))
    return event(_chat_chunk(text))


def good_stream(kind: FimKind, texts: list[str]) -> list[bytes]:
    """A whole, well-formed answer as each provider sends it (usage included)."""
    parts = [text_event(kind, text) for text in texts]
    if kind == "infill":
        last = {"content": "", "stop": True, "tokens_predicted": len(texts), "stop_type": "eos",
                "model": "served"}  # fmt: skip
        return [*parts, event(last)]
    if kind in ("completions", "inception"):
        usage = {"choices": [], "usage": {"completion_tokens": len(texts)}}
        return [*parts, event(_completion_chunk("", "stop")), event(usage), event("[DONE]")]
    finish = _chat_chunk(None, "stop", usage={"completion_tokens": len(texts)})
    return [*parts, event(finish), event("[DONE]")]


@dataclass
class FakeClock:
    now: float = 500.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Endpoint:
    """A scripted server: each request gets the next response (the last one repeats)."""

    responses: list[Callable[[], httpx.Response]]
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.responses[min(len(self.requests), len(self.responses)) - 1]()

    def body(self, index: int = -1) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.requests[index].content)
        return result


@dataclass
class Harness:
    endpoint: Endpoint
    client: httpx.AsyncClient
    limits: RateLimits = field(default_factory=RateLimits)
    clock: FakeClock = field(default_factory=FakeClock)
    backoffs: list[int] = field(default_factory=list)

    def backend(self, **overrides: Any) -> OpenAICompatibleBackend:
        options: dict[str, Any] = {
            "provider": "openai-compatible",
            "base_url": BASE,
            "model": "coder-1",
            "api_key": SecretStr(FAKE_KEY),
            "timeout_ms": 30_000,
            "rate_limits": self.limits,
            "key_hint": "FASTEDIT_FAST_API_KEY",
            "backoff": self._backoff,
            "clock": self.clock,
            "profile": "fast",
        }
        options.update(overrides)
        return OpenAICompatibleBackend(self.client, **options)

    def _backoff(self, attempt: int) -> float:
        self.backoffs.append(attempt)
        return 0.0


def sse(parts: list[bytes]) -> Callable[[], httpx.Response]:
    # A fresh response per request: a response body can be read only once.
    return lambda: httpx.Response(200, headers=SSE, content=b"".join(parts))


def status(code: int, body: Any = None) -> Callable[[], httpx.Response]:
    return lambda: httpx.Response(code, json=body) if body is not None else httpx.Response(code)


@pytest.fixture
async def make() -> AsyncIterator[Callable[..., Harness]]:
    clients: list[httpx.AsyncClient] = []

    def factory(*responses: Callable[[], httpx.Response]) -> Harness:
        endpoint = Endpoint(list(responses))
        clients.append(httpx.AsyncClient(transport=httpx.MockTransport(endpoint)))
        return Harness(endpoint, clients[-1])

    yield factory
    for client in clients:
        await client.aclose()


async def collect(
    backend: OpenAICompatibleBackend, kind: FimKind, request: FimRequest = REQUEST
) -> tuple[list[str], StreamInfo]:
    info = StreamInfo()
    texts = [text async for text in backend.fim_stream(request, kind, info)]
    return texts, info


async def failure(backend: OpenAICompatibleBackend, kind: FimKind) -> BackendError:
    with pytest.raises(BackendError) as caught:
        async for _ in backend.fim_stream(REQUEST, kind, StreamInfo()):
            pass
    assert FAKE_KEY not in str(caught.value)
    return caught.value


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_fim_deltas_stream_in_order_and_fill_stream_info(
    make: Callable[..., Harness], kind: FimKind
) -> None:
    h = make(sse(good_stream(kind, ["math.pi", " * radius", "**2"])))
    texts, info = await collect(h.backend(), kind)
    assert texts == ["math.pi * radius**2"]  # one read: its deltas as one piece
    assert info.deltas == 3
    assert info.finish_reason == "stop"
    assert info.completion_tokens == 3
    assert info.model == ("codestral-2501" if kind == "mistral" else "served")
    assert info.first_delta_at == h.clock.now
    (request,) = h.endpoint.requests
    assert str(request.url) == fim_endpoint(kind, BASE)
    assert request.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert request.headers["accept"] == "text/event-stream"
    assert h.endpoint.body() == build_fim_body(
        kind, REQUEST, model="coder-1", preset=PRESETS["openai-compatible"]
    )


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_lone_surrogates_are_sent_as_replacement_characters(
    make: Callable[..., Harness], kind: FimKind
) -> None:
    # An editor can send JSON "\\ud800", which no UTF-8 body can carry.
    request = FimRequest(
        prefix="s = '\ud800'\nx = ",
        suffix="\nt = '\udc00'\n",
        max_tokens=16,
        stop=("\n",),
        snippets=(("odd\ud800.py", "u = '\udfff'\n"),),
        path="main\udc00.py",
        language_id="python",
    )
    h = make(sse(good_stream(kind, ["1"])))
    texts, _ = await collect(h.backend(), kind, request)
    assert texts == ["1"]
    (sent,) = h.endpoint.requests
    wire = sent.content.decode("utf-8")
    assert not any("\ud800" <= char <= "\udfff" for char in wire)
    for text in ("s = '\ufffd'", "t = '\ufffd'", "odd\ufffd.py", "u = '\ufffd'"):
        assert text in wire
    if kind != "infill":
        assert "main\ufffd.py" in wire  # the file's path labels where the snippets end


async def test_infill_stops_at_its_last_chunk_and_keeps_its_text(
    make: Callable[..., Harness],
) -> None:
    last = {"content": "2", "stop": True, "tokens_predicted": 128, "stop_type": "limit"}
    trailing = b"data: {not json\n\n"  # never read: the stop chunk ends the answer
    h = make(sse([text_event("infill", "radius**"), event(last), trailing]))
    texts, info = await collect(h.backend(), "infill")
    assert texts == ["radius**2"]
    assert info.finish_reason == "length"
    assert info.completion_tokens == 128


async def test_an_infill_stream_cut_before_its_stop_chunk_is_dropped(
    make: Callable[..., Harness],
) -> None:
    h = make(sse([text_event("infill", "radius")]))
    error = await failure(h.backend(), "infill")
    assert error.kind == "dropped"
    assert "ended before the model finished" in error.message


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_a_404_says_the_provider_may_not_support_this_fim_kind(
    make: Callable[..., Harness], kind: FimKind
) -> None:
    h = make(status(404, {"error": {"message": "Not Found", "type": "not_found_error"}}))
    error = await failure(h.backend(), kind)
    assert error.kind == "not_found"
    assert error.status == 404
    assert f'fim "{kind}"' in error.message
    assert 'Set profiles.fast.fim to "chat"' in error.message
    assert fim_endpoint(kind, BASE) in error.message
    assert "Not Found" in error.message
    assert len(h.endpoint.requests) == 1


async def test_the_404_message_without_a_profile_name_still_says_what_to_set(
    make: Callable[..., Harness],
) -> None:
    h = make(status(404))
    error = await failure(h.backend(profile=None), "completions")
    assert 'Set the profile\'s fim setting to "chat"' in error.message
    assert "(HTTP 404)" in error.message


async def test_the_provider_echoing_the_key_in_a_404_is_scrubbed(
    make: Callable[..., Harness],
) -> None:
    h = make(status(404, {"error": {"message": f"no route for key {FAKE_KEY}"}}))
    error = await failure(h.backend(), "mistral")
    assert "<api key>" in error.message


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_a_5xx_before_any_text_is_retried(
    make: Callable[..., Harness], kind: FimKind
) -> None:
    h = make(status(503), status(500), sse(good_stream(kind, ["a", "b"])))
    texts, _ = await collect(h.backend(), kind)
    assert texts == ["ab"]
    assert len(h.endpoint.requests) == 3
    assert h.backoffs == [1, 2]
    assert {str(r.url) for r in h.endpoint.requests} == {fim_endpoint(kind, BASE)}


async def test_a_5xx_fails_after_the_retry_bound_with_the_usual_message(
    make: Callable[..., Harness],
) -> None:
    h = make(status(500, {"error": {"message": "Internal error"}}))
    error = await failure(h.backend(retries=1), "infill")
    assert error.kind == "server"
    assert "after 2 attempts" in error.message
    assert len(h.endpoint.requests) == 2


async def test_an_error_after_text_is_not_retried(make: Callable[..., Harness]) -> None:
    error_event = event({"error": {"message": "slot unavailable", "type": "server_error"}})
    h = make(sse([text_event("infill", "x"), error_event]))
    texts: list[str] = []
    with pytest.raises(BackendError) as caught:
        async for text in h.backend().fim_stream(REQUEST, "infill", StreamInfo()):
            texts.append(text)
    assert texts == ["x"]
    assert caught.value.kind == "protocol"
    assert "reported an error mid-stream: slot unavailable" in caught.value.message
    assert len(h.endpoint.requests) == 1


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_a_malformed_fim_stream_is_a_protocol_error(
    make: Callable[..., Harness], kind: FimKind
) -> None:
    h = make(sse([text_event(kind, "ok"), b'data: {"content": "br\n\n']))
    error = await failure(h.backend(), kind)
    assert error.kind == "protocol"
    assert "malformed stream" in error.message
    assert "after 1 text deltas" in error.message


async def test_a_429_on_chat_blocks_fim_on_the_same_model_without_sending(
    make: Callable[..., Harness],
) -> None:
    h = make(lambda: httpx.Response(429, headers={"retry-after": "30"}))
    backend = h.backend()
    first = await failure(backend, "completions")
    assert first.kind == "rate_limit"
    blocked = await failure(backend, "mistral")
    assert blocked.kind == "blocked"
    assert len(h.endpoint.requests) == 1
    other_model = await failure(h.backend(model="coder-2"), "completions")
    assert other_model.kind == "rate_limit"  # another model on the same host was not blocked
    assert len(h.endpoint.requests) == 2


async def test_an_unusable_base_url_is_a_connect_error_before_sending(
    make: Callable[..., Harness],
) -> None:
    h = make(sse(good_stream("infill", ["x"])))
    error = await failure(h.backend(base_url="localhost:8080/v1"), "infill")
    assert error.kind == "connect"
    assert "not a usable URL" in error.message
    assert h.endpoint.requests == []


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_closing_the_fim_stream_closes_the_http_response_at_once(
    make: Callable[..., Harness], kind: FimKind
) -> None:
    body = TrackedStream([text_event(kind, "first"), text_event(kind, " second")])
    h = make(lambda: httpx.Response(200, headers=SSE, stream=body))
    stream = h.backend().fim_stream(REQUEST, kind, StreamInfo())
    assert await anext(stream) == "first"
    await stream.aclose()
    assert body.closed  # the response closed: the server stops sending
    assert body.generator_exit


async def test_cancelling_the_fim_consumer_closes_the_http_response(
    make: Callable[..., Harness],
) -> None:
    body = TrackedStream([text_event("infill", "first")])
    h = make(lambda: httpx.Response(200, headers=SSE, stream=body))
    got_first = asyncio.Event()

    async def consume() -> None:
        async for _ in h.backend().fim_stream(REQUEST, "infill", StreamInfo()):
            got_first.set()

    task = asyncio.create_task(consume())
    await got_first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert body.closed
    assert body.cancelled
