"""The stub's fill-in-the-middle endpoints (legacy completions, llama.cpp /infill, Mistral FIM),
driven over loopback by httpx as the providers' clients would, then by the real backend.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from fastedit_lsp.backends.base import BackendError, StreamInfo
from fastedit_lsp.backends.fim import FIM_KINDS, FimKind, FimRequest, fim_endpoint
from fastedit_lsp.backends.network import new_client
from fastedit_lsp.backends.openai import OpenAICompatibleBackend
from fastedit_lsp.backends.ratelimit import RateLimits
from fastedit_lsp.tools.stub import (
    CHAT_PATH,
    COMPLETIONS_PATH,
    FIM_PATH,
    INFILL_PATH,
    MODEL_PATHS,
    Answer,
    StubModelServer,
    split_tokens,
)

FIM_BODIES: dict[str, dict[str, Any]] = {
    COMPLETIONS_PATH: {"model": "stub-fast", "prompt": "def f():\n    return ", "suffix": "\n",
                       "stream": True},
    INFILL_PATH: {"input_prefix": "def f():\n    return ", "input_suffix": "\n", "stream": True},
    FIM_PATH: {"model": "codestral-latest", "prompt": "def f():\n    return ", "suffix": "\n",
               "stream": True},
}  # fmt: skip
FIM_PATHS = tuple(FIM_BODIES)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, connect=2.0)) as http_client:
        yield http_client


@pytest.fixture
async def wire() -> AsyncIterator[httpx.AsyncClient]:
    """The server's model client (backends/network.py)."""
    async with new_client() as opened:
        yield opened


def url(stub: StubModelServer, path: str) -> str:
    return stub.base_url.removesuffix("/v1") + path


def events(raw: bytes) -> list[str]:
    """The ``data:`` payloads of a well-formed SSE body, in order."""
    *parts, rest = raw.decode().split("\n\n")
    assert rest == ""
    assert all(part.startswith("data: ") for part in parts), parts
    return [part.removeprefix("data: ") for part in parts]


def objects(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(data) for data in events(raw) if data != "[DONE]"]


def texts(path: str, raw: bytes) -> list[str]:
    """The token texts of a stream in ``path``'s dialect (no role chunk, no empty finish text)."""
    out: list[str] = []
    for obj in objects(raw):
        if path == INFILL_PATH:
            out.extend([obj["content"]] if not obj["stop"] else [])
        for choice in obj.get("choices", []):
            text = choice["text"] if path == COMPLETIONS_PATH else choice["delta"].get("content")
            if text and "role" not in choice.get("delta", {}):
                out.append(text)
    return out


async def post(
    client: httpx.AsyncClient, stub: StubModelServer, path: str, **body: Any
) -> tuple[httpx.Response, bytes]:
    async with client.stream("POST", url(stub, path), json={**FIM_BODIES[path], **body}) as r:
        return r, await r.aread()


# --- POST /v1/completions -------------------------------------------------------------------------


async def test_completions_stream_text_chunks_then_finish_then_done(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    text = "a + b\r\n  # é👩‍💻\n"
    stub.script(Answer(text=text, tps=1000))

    response, raw = await post(client, stub, COMPLETIONS_PATH, model="instruct-1")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert "".join(texts(COMPLETIONS_PATH, raw)) == text
    chunks = objects(raw)
    assert {c["object"] for c in chunks} == {"text_completion"}
    assert {c["model"] for c in chunks} == {"instruct-1"}
    assert chunks[0]["choices"][0]["text"] == split_tokens(text)[0]  # no role chunk first
    assert [c["choices"][0]["finish_reason"] for c in chunks][-1] == "stop"
    assert events(raw)[-1] == "[DONE]"
    (record,) = await stub.wait_for_requests(1, path=COMPLETIONS_PATH)
    assert record.completed
    assert record.tokens_sent == len(split_tokens(text))
    assert record.body["suffix"] == "\n"


async def test_completions_usage_chunk_and_token_limit(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["x", "y", "z"]), Answer(tokens=["a", "b", "c", "d"]))

    _, with_usage = await post(
        client, stub, COMPLETIONS_PATH, stream_options={"include_usage": True}
    )
    _, truncated = await post(client, stub, COMPLETIONS_PATH, max_tokens=2)

    *content_chunks, usage_chunk = objects(with_usage)
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["completion_tokens"] == 3
    assert usage_chunk["usage"]["prompt_tokens"] > 0
    assert all(chunk["usage"] is None for chunk in content_chunks)
    assert texts(COMPLETIONS_PATH, truncated) == ["a", "b"]
    assert objects(truncated)[-1]["choices"][0]["finish_reason"] == "length"
    assert all("usage" not in chunk for chunk in objects(truncated))


async def test_completions_without_streaming_answer_one_text_completion(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(text="a + b", finish_reason="length"))

    response = await client.post(
        url(stub, COMPLETIONS_PATH), json={**FIM_BODIES[COMPLETIONS_PATH], "stream": False}
    )

    completion = response.json()
    assert response.headers["content-type"] == "application/json"
    assert completion["object"] == "text_completion"
    assert completion["id"].startswith("cmpl-")
    assert completion["choices"][0]["text"] == "a + b"
    assert completion["choices"][0]["finish_reason"] == "length"
    assert completion["usage"]["completion_tokens"] == len(split_tokens("a + b"))


# --- POST /infill ---------------------------------------------------------------------------------


async def test_infill_streams_content_events_then_a_stop_event_and_no_done(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["ret", "urn", " 1"]))

    response, raw = await post(client, stub, INFILL_PATH, model="qwen-coder")

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    *tokens, last = objects(raw)
    assert tokens == [{"content": t, "stop": False} for t in ["ret", "urn", " 1"]]
    assert last["stop"] is True
    assert last["content"] == ""
    assert last["tokens_predicted"] == 3
    assert last["stop_type"] == "eos"
    assert last["model"] == "qwen-coder"
    assert "[DONE]" not in events(raw)
    (record,) = await stub.wait_for_requests(1, path=INFILL_PATH)
    assert record.path == "/infill"
    assert record.completed


@pytest.mark.parametrize(("n_predict", "sent", "stop_type"), [(2, 2, "limit"), (-1, 4, "eos")])
async def test_infill_honours_n_predict(
    stub: StubModelServer, client: httpx.AsyncClient, n_predict: int, sent: int, stop_type: str
) -> None:
    stub.script(Answer(tokens=["a", "b", "c", "d"]))

    _, raw = await post(client, stub, INFILL_PATH, n_predict=n_predict)

    assert texts(INFILL_PATH, raw) == ["a", "b", "c", "d"][:sent]
    assert objects(raw)[-1]["stop_type"] == stop_type
    assert objects(raw)[-1]["tokens_predicted"] == sent


async def test_infill_without_streaming_answers_the_final_object(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(text="return 1"))

    response = await client.post(
        url(stub, INFILL_PATH), json={**FIM_BODIES[INFILL_PATH], "stream": False}
    )

    result = response.json()
    assert result["content"] == "return 1"
    assert result["stop"] is True
    assert result["tokens_predicted"] == len(split_tokens("return 1"))


async def test_infill_lives_at_the_root_not_under_v1(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    under_v1 = await client.post(f"{stub.base_url}/infill", json=FIM_BODIES[INFILL_PATH])
    at_root = await client.post(url(stub, INFILL_PATH), json=FIM_BODIES[INFILL_PATH])

    assert under_v1.status_code == 404
    assert at_root.status_code == 200
    assert fim_endpoint("infill", stub.base_url) == url(stub, INFILL_PATH)


# --- POST /v1/fim/completions ---------------------------------------------------------------------


async def test_mistral_fim_streams_chat_chunks_with_usage_in_the_finish_chunk(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a", " +", " b"]), Answer(tokens=["a", "b", "c"]))

    response, raw = await post(client, stub, FIM_PATH)
    _, truncated = await post(client, stub, FIM_PATH, max_tokens=1)

    assert response.status_code == 200
    chunks = objects(raw)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert texts(FIM_PATH, raw) == ["a", " +", " b"]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert {c["model"] for c in chunks} == {"codestral-latest"}
    finish = chunks[-1]
    assert finish["choices"][0]["finish_reason"] == "stop"
    assert finish["usage"]["completion_tokens"] == 3
    assert events(raw)[-1] == "[DONE]"
    assert texts(FIM_PATH, truncated) == ["a"]
    assert objects(truncated)[-1]["choices"][0]["finish_reason"] == "length"
    assert [r.path for r in stub.requests] == [FIM_PATH, FIM_PATH]


async def test_mistral_fim_without_streaming_answers_a_chat_completion(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.script(Answer(text="a + b"))

    response = await client.post(
        url(stub, FIM_PATH), json={**FIM_BODIES[FIM_PATH], "stream": False}
    )

    completion = response.json()
    assert completion["object"] == "chat.completion"
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "a + b"}


# --- the knobs, on every FIM endpoint -------------------------------------------------------------


async def test_every_model_endpoint_pops_the_same_script_in_order(
    stub: StubModelServer, client: httpx.AsyncClient
) -> None:
    stub.default = Answer(text="default")
    stub.script(Answer(text="one"), Answer(text="two"), Answer(text="three"))

    one = await post(client, stub, COMPLETIONS_PATH)
    chat = await client.post(
        url(stub, CHAT_PATH), json={"messages": [{"role": "user", "content": "hi"}]}
    )
    three = await post(client, stub, INFILL_PATH)
    default = await post(client, stub, FIM_PATH)

    assert "".join(texts(COMPLETIONS_PATH, one[1])) == "one"
    assert chat.json()["choices"][0]["message"]["content"] == "two"
    assert "".join(texts(INFILL_PATH, three[1])) == "three"
    assert "".join(texts(FIM_PATH, default[1])) == "default"
    recorded = await stub.wait_for_requests(4, path=MODEL_PATHS)
    assert [r.path for r in recorded] == [COMPLETIONS_PATH, CHAT_PATH, INFILL_PATH, FIM_PATH]
    assert [r.answer.text for r in recorded if r.answer] == ["one", "two", "three", "default"]
    assert len(await stub.wait_for_requests(1, path=INFILL_PATH)) == 1


@pytest.mark.parametrize("path", FIM_PATHS)
async def test_error_statuses_answer_with_the_scripted_error(
    stub: StubModelServer, client: httpx.AsyncClient, path: str
) -> None:
    stub.script(Answer(status=429, headers={"retry-after": "2"}), Answer(status=404))

    rate_limited, _ = await post(client, stub, path)
    missing, _ = await post(client, stub, path)

    assert rate_limited.status_code == 429
    assert rate_limited.headers["retry-after"] == "2"
    assert rate_limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert missing.status_code == 404
    assert [r.status for r in stub.requests] == [429, 404]


@pytest.mark.parametrize("path", FIM_PATHS)
async def test_drop_after_closes_the_socket_mid_stream(
    stub: StubModelServer, client: httpx.AsyncClient, path: str
) -> None:
    stub.script(Answer(tokens=["a", "b", "c", "d"], drop_after=2))
    lines: list[str] = []

    with pytest.raises(httpx.RemoteProtocolError):
        async with client.stream("POST", url(stub, path), json=FIM_BODIES[path]) as response:
            async for line in response.aiter_lines():
                lines.append(line)

    (record,) = await stub.wait_for_requests(1, path=path)
    await stub.wait_closed(record)
    assert record.tokens_sent == 2
    assert not record.completed
    assert not any('"stop":true' in line or "[DONE]" in line for line in lines)


@pytest.mark.parametrize("path", FIM_PATHS)
async def test_a_client_leaving_a_stalled_stream_is_recorded(
    stub: StubModelServer, client: httpx.AsyncClient, path: str
) -> None:
    stub.script(Answer(tokens=["a", "b", "c"], stall_after=1, ttft=0.0))

    async with client.stream("POST", url(stub, path), json=FIM_BODIES[path]) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and texts(path, f"{line}\n\n".encode()):
                break

    (record,) = await stub.wait_for_requests(1, path=path)
    await stub.wait_closed(record)
    assert record.client_closed
    assert record.tokens_sent == 1
    assert not record.completed


@pytest.mark.parametrize("path", FIM_PATHS)
@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("bad_json", b'\n\ndata: {"'),
        ("no_data_prefix", b'\n\n{"'),
        ("binary", b"\n\ndata: \xff\xfe"),
        ("error_event", b'\n\ndata: {"error":{"message":'),
    ],
)
async def test_malformed_kinds_appear_on_every_fim_wire(
    stub: StubModelServer, client: httpx.AsyncClient, path: str, kind: str, expected: bytes
) -> None:
    stub.script(Answer(tokens=["a", "b"], malformed=kind, malformed_after=1))  # type: ignore[arg-type]

    response, raw = await post(client, stub, path)

    assert response.status_code == 200
    assert expected in raw
    assert b"[DONE]" not in raw
    assert b'"stop":true' not in raw
    last = raw.removesuffix(b"\n\n").rsplit(b"\n\n", 1)[-1]
    if kind == "no_data_prefix":
        assert json.loads(last)  # a whole event, but without its field name
    elif kind == "error_event":
        assert "error" in json.loads(last.removeprefix(b"data: "))
    else:
        with pytest.raises(ValueError):  # cut JSON, or bytes that are not UTF-8
            json.loads(last.removeprefix(b"data: "))


@pytest.mark.parametrize("path", FIM_PATHS)
async def test_split_bytes_sends_one_byte_per_chunk_on_every_fim_wire(
    stub: StubModelServer, client: httpx.AsyncClient, path: str
) -> None:
    text = "é\r\n👩‍💻 ok"
    stub.script(Answer(text=text, split_bytes=True))

    async with client.stream("POST", url(stub, path), json=FIM_BODIES[path]) as response:
        pieces = [piece async for piece in response.aiter_raw()]

    assert {len(piece) for piece in pieces} == {1}
    assert "".join(texts(path, b"".join(pieces))) == text


# --- the real backend against the stub ------------------------------------------------------------

KIND_PATHS: dict[FimKind, str] = {
    "completions": COMPLETIONS_PATH,
    "infill": INFILL_PATH,
    "mistral": FIM_PATH,
    "inception": FIM_PATH,
}
REQUEST = FimRequest(
    prefix="def area(r):\n    return ",
    suffix="\n",
    max_tokens=64,
    snippets=(("consts.py", "PI = 3.14159\n"),),
    path="shapes.py",
    language_id="python",
)


def backend(wire: httpx.AsyncClient, stub: StubModelServer) -> OpenAICompatibleBackend:
    return OpenAICompatibleBackend(
        wire,
        provider="llamacpp",
        base_url=stub.base_url,
        model="stub-fast",
        api_key=None,
        timeout_ms=10_000,
        rate_limits=RateLimits(),
        profile="fast",
        backoff=lambda attempt: 0.0,
    )


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_fim_stream_reads_each_stub_endpoint(
    stub: StubModelServer, wire: httpx.AsyncClient, kind: FimKind
) -> None:
    text = "PI * r ** 2  # é👩‍💻"
    dialect = "inception" if kind == "inception" else "mistral"
    stub.script(
        Answer(status=503),
        Answer(text=text, tps=2000, split_bytes=True, fim_dialect=dialect),
    )
    info = StreamInfo()

    deltas = [delta async for delta in backend(wire, stub).fim_stream(REQUEST, kind, info)]

    assert "".join(deltas) == text
    assert info.deltas == len(split_tokens(text))
    assert info.finish_reason == "stop"
    # Inception's documentation shows no usage in a FIM stream, and none is asked for.
    usage = None if kind == "inception" else len(split_tokens(text))
    assert info.completion_tokens == usage
    assert info.first_delta_at is not None
    failed, served = await stub.wait_for_requests(2, path=KIND_PATHS[kind])
    assert (failed.status, served.status) == (503, 200)
    assert served.completed


async def test_fim_stream_gets_a_length_finish_when_the_limit_cuts_it(
    stub: StubModelServer, wire: httpx.AsyncClient
) -> None:
    stub.script(Answer(tokens=["a"] * 10))
    info = StreamInfo()
    request = FimRequest(prefix="", suffix="", max_tokens=4)

    deltas = [d async for d in backend(wire, stub).fim_stream(request, "infill", info)]

    assert "".join(deltas) == "a" * 4  # one read's deltas may come as one piece
    assert info.finish_reason == "length"
    assert info.completion_tokens == 4


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_a_404_from_a_fim_endpoint_names_the_setting_to_change(
    stub: StubModelServer, wire: httpx.AsyncClient, kind: FimKind
) -> None:
    stub.script(Answer(status=404, error_message="Not Found"))

    with pytest.raises(BackendError) as caught:
        async for _ in backend(wire, stub).fim_stream(REQUEST, kind, StreamInfo()):
            pass

    assert caught.value.kind == "not_found"
    assert 'Set profiles.fast.fim to "chat"' in caught.value.message
    assert url(stub, KIND_PATHS[kind]) in caught.value.message


@pytest.mark.parametrize("kind", FIM_KINDS)
async def test_closing_fim_stream_closes_the_connection_to_the_stub(
    stub: StubModelServer, wire: httpx.AsyncClient, kind: FimKind
) -> None:
    stub.script(Answer(tokens=["first", "second"], stall_after=1))
    stream = backend(wire, stub).fim_stream(REQUEST, kind, StreamInfo())

    assert await anext(stream) == "first"
    await stream.aclose()

    (record,) = await stub.wait_for_requests(1, path=KIND_PATHS[kind])
    await stub.wait_closed(record)
    assert record.client_closed
    assert record.tokens_sent == 1
