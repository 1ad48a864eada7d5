"""The Responses and Messages API backends: request mapping, events, stop reasons, tiers, errors.

Pure mapping tests, then the backends over the server's client (the one the chat backend streams
over, :func:`~fastedit_lsp.backends.post.open_stream`) against the loopback stub (its
``/v1/responses`` and ``/v1/messages``) and scripted answers (``httpx.MockTransport``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
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
from fastedit_lsp.backends.formats import StopScanner, build_messages_body, build_responses_body
from fastedit_lsp.backends.network import new_client
from fastedit_lsp.backends.ratelimit import RateLimits
from fastedit_lsp.backends.streams import ApiBackend, ResponsesFallback
from fastedit_lsp.backends.tiers import (
    ANTHROPIC_FAST_BETA,
    SessionMemory,
    default_api,
    served_tier,
    tier_fields,
)
from fastedit_lsp.tools.stub import MESSAGES_PATH, RESPONSES_PATH, Answer, StubModelServer

KEY = "sk-test-key-0123456789"
REQUEST = ChatRequest(
    (ChatMessage("system", "You edit code."), ChatMessage("user", "Complete: def add(")),
    max_tokens=64,
    temperature=1.5,
    stop=("\n\n\n",),
)


def _backend(
    client: httpx.AsyncClient,
    api: str,
    base_url: str,
    *,
    model: str = "stub-fast",
    tier: str | None = None,
    memory: SessionMemory | None = None,
    provider: str | None = None,
) -> ApiBackend:
    return ApiBackend(
        client,
        api="responses" if api == "responses" else "messages",
        provider=provider or ("openai" if api == "responses" else "anthropic"),
        base_url=base_url,
        model=model,
        api_key=SecretStr(KEY),
        timeout_ms=5000,
        rate_limits=RateLimits(),
        memory=memory or SessionMemory(),
        speed_tier=tier,
        backoff=lambda _attempt: 0.0,
    )


async def _collect(stream: AsyncIterator[str]) -> list[str]:
    return [text async for text in stream]


@pytest.fixture
async def stub() -> AsyncIterator[StubModelServer]:
    async with await StubModelServer.start() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with new_client() as http:
        yield http


@asynccontextmanager
async def _scripted(
    handler: Callable[[httpx.Request], httpx.Response],
) -> AsyncIterator[httpx.AsyncClient]:
    """A client whose every request reaches ``handler``."""
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        yield http


# -- the mapping -------------------------------------------------------------------------------


def test_responses_body_puts_the_system_prompt_in_instructions_and_caps_the_output() -> None:
    body = build_responses_body(REQUEST, model="gpt-4.1", reasoning_effort=None, tier={})
    assert body["instructions"] == "You edit code."
    assert body["input"] == [{"role": "user", "content": "Complete: def add("}]
    assert body["max_output_tokens"] == 64
    assert body["stream"] is True and body["store"] is False
    assert body["temperature"] == 1.5
    assert "stop" not in body and "prediction" not in body and "reasoning" not in body


def test_responses_body_of_a_codex_model_sends_reasoning_effort_and_no_temperature() -> None:
    body = build_responses_body(
        REQUEST, model="gpt-5.3-codex", reasoning_effort=None, tier={"service_tier": "priority"}
    )
    assert body["reasoning"] == {"effort": "low"}
    assert "temperature" not in body
    assert body["service_tier"] == "priority"


def test_messages_body_has_system_max_tokens_a_clamped_temperature_and_no_thinking() -> None:
    request = ChatRequest(REQUEST.messages, max_tokens=64, temperature=1.5, stop=("END", "\n\n"))
    body = build_messages_body(request, model="claude-opus-4-6", reasoning_effort=None, tier={})
    assert body["system"] == "You edit code."
    assert body["messages"] == [{"role": "user", "content": "Complete: def add("}]
    assert body["max_tokens"] == 64
    assert body["temperature"] == 1.0
    # Anthropic refuses whitespace-only stop sequences: the backend cuts those itself.
    assert body["stop_sequences"] == ["END"]
    assert "thinking" not in body


def test_messages_body_thinks_adaptively_only_when_reasoning_effort_is_set() -> None:
    body = build_messages_body(REQUEST, model="claude-opus-4-6", reasoning_effort="high", tier={})
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}
    assert "temperature" not in body


@pytest.mark.parametrize(
    ("api", "word", "normal"),
    [
        ("responses", "completed", "stop"),
        ("responses", "max_output_tokens", "max_tokens"),
        ("responses", "content_filter", "content_filter"),
        ("messages", "end_turn", "stop"),
        ("messages", "stop_sequence", "stop"),
        ("messages", "max_tokens", "max_tokens"),
        ("messages", "refusal", "refusal"),
        ("messages", "model_context_window_exceeded", "length"),
        ("chat", "length", "length"),
        ("chat", "content_filter", "content_filter"),
    ],
)
def test_every_format_normalises_its_stop_reason(api: Any, word: str, normal: str) -> None:
    assert stop_reason(word) == normal


def test_speed_tiers_are_sent_the_way_each_provider_names_them() -> None:
    assert tier_fields("openai", "responses", "fast").body == {"service_tier": "priority"}
    assert tier_fields("openai", "chat", "ultrafast").body == {"service_tier": "ultrafast"}
    assert tier_fields("groq", "chat", "fast").body == {"service_tier": "performance"}
    anthropic = tier_fields("anthropic", "messages", "fast")
    assert anthropic.body == {"speed": "fast"}
    assert anthropic.headers == {"anthropic-beta": ANTHROPIC_FAST_BETA}
    assert tier_fields("openai", "responses", None).body == {}


def test_the_tier_served_is_told_in_the_users_words() -> None:
    sent = tier_fields("openai", "responses", "fast")
    assert served_tier("fast", sent, "priority") == "fast"
    assert served_tier("fast", sent, "fast") == "fast"
    assert served_tier("fast", sent, "default") == "standard"


def test_codex_models_start_on_the_responses_api_and_anthropic_on_messages() -> None:
    assert default_api("openai", "gpt-5.3-codex") == "responses"
    assert default_api("openai", "gpt-5.3-codex-spark") == "responses"
    assert default_api("openai", "gpt-4.1") == "chat"
    assert default_api("anthropic", "claude-opus-4-6") == "messages"
    assert default_api("cerebras", "gpt-oss-120b") == "chat"


def test_a_stop_sequence_split_across_deltas_cuts_the_text_before_it() -> None:
    scanner = StopScanner(("<END>",))
    out = [scanner.feed(t) for t in ("ab<E", "N", "D>tail")]
    assert "".join(out) == "ab" and scanner.stopped
    scanner = StopScanner(("<END>",))
    assert scanner.feed("ab<E") == "ab"
    assert scanner.feed("x") == "<Ex"
    assert scanner.finish() == ""


# -- over the stub -----------------------------------------------------------------------------


async def test_responses_tokens_stream_one_by_one_with_usage_and_the_stop_reason(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["def", " add", "(a, b)"], reasoning="thinking it over"))
    info = StreamInfo()
    deltas = await _collect(_backend(client, "responses", stub.base_url).stream(REQUEST, info))
    assert deltas == ["def", " add", "(a, b)"]  # the reasoning summary skipped
    assert (info.deltas, info.completion_tokens) == (3, 3)
    assert (info.stop_reason, info.stop_detail) == ("stop", "completed")
    assert info.first_delta_at is not None
    [request] = stub.requests
    assert request.path == RESPONSES_PATH
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["instructions"] == "You edit code."


async def test_a_responses_answer_cut_by_max_output_tokens_says_max_tokens(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["x"] * 100))
    info = StreamInfo()
    deltas = await _collect(_backend(client, "responses", stub.base_url).stream(REQUEST, info))
    assert len(deltas) == 64
    assert (info.stop_reason, info.stop_detail) == ("max_tokens", "max_output_tokens")


async def test_messages_stream_skips_thinking_and_pings_and_reports_max_tokens(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["x"] * 70, reasoning="hmm"))
    info = StreamInfo()
    deltas = await _collect(_backend(client, "messages", stub.base_url).stream(REQUEST, info))
    assert deltas == ["x"] * 64
    assert (info.stop_reason, info.stop_detail) == ("max_tokens", "max_tokens")
    assert info.completion_tokens == 64
    [request] = stub.requests
    assert request.path == MESSAGES_PATH
    assert request.headers["x-api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.headers["anthropic-version"] == "2023-06-01"


async def test_a_messages_refusal_is_reported_as_refusal(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(text="I can't", finish_reason="refusal"))
    info = StreamInfo()
    await _collect(_backend(client, "messages", stub.base_url).stream(REQUEST, info))
    assert (info.stop_reason, info.stop_detail) == ("refusal", "refusal")


async def test_an_overloaded_error_event_carries_anthropics_message(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", "b"], malformed="error_event", malformed_after=1))
    with pytest.raises(BackendError) as caught:
        await _collect(_backend(client, "messages", stub.base_url).stream(REQUEST, StreamInfo()))
    assert "Overloaded (overloaded_error)" in str(caught.value)
    assert str(caught.value).endswith(".")


async def test_a_529_with_retry_after_is_retried_and_then_answers(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(status=529, headers={"retry-after": "0"}), Answer(text="ok"))
    info = StreamInfo()
    deltas = await _collect(_backend(client, "messages", stub.base_url).stream(REQUEST, info))
    assert "".join(deltas) == "ok"
    assert [r.status for r in stub.requests] == [529, 200]


async def test_a_responses_error_status_says_the_providers_message(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(status=400, error_message="Unknown parameter: 'foo'."))
    with pytest.raises(BackendError) as caught:
        await _collect(_backend(client, "responses", stub.base_url).stream(REQUEST, StreamInfo()))
    assert caught.value.kind == "bad_request"
    assert "Unknown parameter: 'foo'." in str(caught.value)


@pytest.mark.parametrize("api", ["responses", "messages"])
async def test_the_tier_asked_and_the_tier_served_are_recorded(
    api: str, stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(text="ok"), Answer(text="ok", tier_served="standard"))
    backend = _backend(client, api, stub.base_url, tier="fast")
    info = StreamInfo()
    await _collect(backend.stream(REQUEST, info))
    assert (info.tier_asked, info.tier_served) == ("fast", "fast")
    fallback = StreamInfo()
    await _collect(backend.stream(REQUEST, fallback))
    assert (fallback.tier_asked, fallback.tier_served) == ("fast", "standard")
    first = stub.requests[0]
    if api == "messages":
        assert first.body["speed"] == "fast"
        assert first.headers["anthropic-beta"] == ANTHROPIC_FAST_BETA
    else:
        assert first.body["service_tier"] == "priority"


@pytest.mark.parametrize("api", ["responses", "messages"])
async def test_a_refused_tier_is_sent_again_without_it_once_and_remembered(
    api: str, stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(refuse_tier=True))
    memory = SessionMemory()
    info = StreamInfo()
    backend = _backend(client, api, stub.base_url, tier="fast", memory=memory)
    assert "".join(await _collect(backend.stream(REQUEST, info)))
    field = "speed" if api == "messages" else "service_tier"
    assert [field in r.body for r in stub.requests] == [True, False]
    assert info.tier_served == "standard"
    assert any("refused speedTier fast" in note for note in info.notes)
    again = StreamInfo()
    await _collect(
        _backend(client, api, stub.base_url, tier="fast", memory=memory).stream(REQUEST, again)
    )
    assert field not in stub.requests[-1].body and len(stub.requests) == 3
    assert (again.tier_asked, again.tier_served) == ("fast", "standard")


async def test_a_stop_sequence_the_responses_api_cannot_carry_is_cut_by_the_backend(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", "\n\n", "\nb"]))
    info = StreamInfo()
    deltas = await _collect(_backend(client, "responses", stub.base_url).stream(REQUEST, info))
    assert "".join(deltas) == "a"
    assert (info.stop_reason, info.stop_detail) == ("stop", "stop_sequence")


# -- with scripted answers -------------------------------------------------------------------------


def _sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


async def test_a_json_error_on_a_200_is_read_for_the_providers_message() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"type": "error", "error": {"type": "api_error", "message": "Boom"}}
        return httpx.Response(200, json=body)

    async with _scripted(handler) as http:
        backend = _backend(http, "messages", "https://api.anthropic.com/v1")
        with pytest.raises(BackendError) as caught:
            await _collect(backend.stream(REQUEST, StreamInfo()))
    assert "Boom" in str(caught.value)


async def test_a_response_incomplete_for_content_filter_is_normalised() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        events = _sse(
            {"type": "response.output_text.delta", "delta": "x"},
            {
                "type": "response.incomplete",
                "response": {"incomplete_details": {"reason": "content_filter"}},
            },
        )
        return httpx.Response(200, content=events, headers={"content-type": "text/event-stream"})

    async with _scripted(handler) as http:
        info = StreamInfo()
        deltas = await _collect(
            _backend(http, "responses", "https://x.test/v1").stream(REQUEST, info)
        )
    assert deltas == ["x"]
    assert (info.stop_reason, info.stop_detail) == ("content_filter", "content_filter")


class _ResponsesOnlyChat:
    provider = "openai"
    model = "gpt-9-codexless"
    base_url = "https://api.openai.com/v1"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
        self.calls += 1
        raise BackendError(
            "bad_request",
            "openai model 'gpt-9' refused the request (HTTP 400: This model is only supported "
            "in v1/responses and not in v1/chat/completions.).",
            status=400,
        )
        yield ""  # pragma: no cover


async def test_a_model_only_served_by_the_responses_api_switches_once_and_says_so(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    memory = SessionMemory()
    chat = _ResponsesOnlyChat()
    logged: list[str] = []
    fallback = ResponsesFallback(
        chat,  # type: ignore[arg-type]
        lambda: _backend(client, "responses", stub.base_url, memory=memory),
        memory,
        profile="standard",
        log=logged.append,
    )
    info = StreamInfo()
    assert "".join(await _collect(fallback.stream(REQUEST, info)))
    assert any("Responses API only" in note for note in info.notes) and logged
    second = StreamInfo()
    assert "".join(await _collect(fallback.stream(REQUEST, second)))
    assert chat.calls == 1 and not second.notes
    assert [r.path for r in stub.requests] == [RESPONSES_PATH, RESPONSES_PATH]


async def test_anthropics_model_list_is_asked_with_its_own_key_header() -> None:
    from fastedit_lsp.backends.openai import list_models

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"data": [{"id": "claude-opus-4-6", "type": "model"}]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        models = await list_models(
            http, "https://api.anthropic.com/v1", SecretStr(KEY), provider="anthropic"
        )
    assert models == ["claude-opus-4-6"]
    [request] = seen
    assert request.headers["x-api-key"] == KEY and "authorization" not in request.headers
    assert request.headers["anthropic-version"] == "2023-06-01"


async def test_chat_completions_report_the_normalised_stop_reason(
    stub: StubModelServer,
) -> None:
    from fastedit_lsp.backends.openai import OpenAICompatibleBackend

    http = new_client()
    backend = OpenAICompatibleBackend(
        http,
        provider="openai-compatible",
        base_url=stub.base_url,
        model="stub-fast",
        api_key=None,
        timeout_ms=5000,
        rate_limits=RateLimits(),
    )
    try:
        for finish, normal in (("stop", "stop"), ("content_filter", "content_filter")):
            stub.script(Answer(text="ok", finish_reason=finish))
            info = StreamInfo()
            await _collect(backend.stream(REQUEST, info))
            assert (info.stop_reason, info.stop_detail) == (normal, finish)
        stub.script(Answer(tokens=["x"] * 100))
        info = StreamInfo()
        await _collect(backend.stream(REQUEST, info))
        assert (info.stop_reason, info.stop_detail) == ("length", "length")
    finally:
        await http.aclose()


@pytest.mark.parametrize(
    ("provider", "base_url", "key_env", "fim"),
    [
        ("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", None),
        ("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", "mistral"),
        ("inception", "https://api.inceptionlabs.ai/v1", "INCEPTION_API_KEY", "inception"),
        (
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            "GEMINI_API_KEY",
            None,
        ),
        ("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "completions"),
        ("llamacpp", "http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY", "infill"),
    ],
)
def test_each_preset_has_its_providers_url_key_variable_and_fim_dialect(
    provider: str, base_url: str, key_env: str, fim: str | None
) -> None:
    from fastedit_lsp.backends.presets import PRESETS

    preset = PRESETS[provider]  # type: ignore[index]
    assert (preset.base_url, preset.key_env, preset.fim) == (base_url, key_env, fim)


def test_deepseeks_fim_goes_to_its_beta_api_unless_base_url_was_set() -> None:
    from fastedit_lsp.backends.fim import fim_base_url, fim_endpoint
    from fastedit_lsp.backends.presets import PRESETS

    deepseek = PRESETS["deepseek"]
    at_preset = fim_endpoint("completions", fim_base_url(deepseek, "https://api.deepseek.com/v1"))
    assert at_preset == "https://api.deepseek.com/beta/completions"
    own = fim_endpoint("completions", fim_base_url(deepseek, "http://127.0.0.1:9/v1"))
    assert own == "http://127.0.0.1:9/v1/completions"
