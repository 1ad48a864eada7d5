"""Every event and error body the stub's Responses and Messages APIs send, validated against the
providers' official SDK types (``openai`` and ``anthropic``, test extras only): an event the SDK
would reject fails here, so the backends are tested against what the providers really send.

The SDKs are imported by the :func:`sdk` fixture, not at collection: importing them costs a few
seconds of CPU, which every pytest-xdist worker would pay on collecting this module."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any, get_args

import httpx
import pytest
from pydantic import TypeAdapter

from fastedit_lsp.backends.sse import SSEParser
from fastedit_lsp.tools.stub import Answer, StubModelServer


def _by_type(union: Any) -> dict[str, Any]:
    """The SDK's event classes of a (possibly annotated) union, by their ``type`` literal."""
    members = get_args(union)
    if members and not isinstance(members[0], type):  # Annotated[Union[...], ...]
        members = get_args(members[0])
    return {get_args(m.model_fields["type"].annotation)[0]: m for m in members}


@pytest.fixture(scope="module")
def sdk() -> SimpleNamespace:
    """The SDKs' type modules (``responses``, ``openai``, ``anthropic``) and their stream events
    by type (``response_events``, ``message_events``)."""
    responses = pytest.importorskip("openai.types.responses")
    anthropic = pytest.importorskip("anthropic.types")
    return SimpleNamespace(
        responses=responses,
        openai=pytest.importorskip("openai.types"),
        anthropic=anthropic,
        response_events=_by_type(responses.ResponseStreamEvent),
        message_events=_by_type(anthropic.RawMessageStreamEvent),
    )


def _validate(classes: dict[str, Any], obj: dict[str, Any]) -> None:
    assert obj["type"] in classes, f"the SDK has no event {obj['type']!r}"
    TypeAdapter(classes[obj["type"]]).validate_python(obj)


ANSWERS = [
    Answer(tokens=["def", " f", "()"]),
    Answer(tokens=["a", "b"], reasoning="I think"),
    Answer(tokens=["x"] * 10),  # cut by the request's cap: incomplete / max_tokens
    Answer(text="no", finish_reason="refusal"),
    Answer(text="ok", finish_reason="content_filter"),
    Answer(text="ok", tier_served="standard"),
    Answer(tokens=["a", "b"], malformed="error_event", malformed_after=1),
]


@pytest.fixture
async def stub() -> AsyncIterator[StubModelServer]:
    async with await StubModelServer.start() as server:
        yield server


def _body(api: str, stream: bool = True) -> dict[str, Any]:
    turns = [{"role": "user", "content": "hi"}]
    if api == "responses":
        return {
            "model": "m",
            "input": turns,
            "stream": stream,
            "max_output_tokens": 5,
            "service_tier": "priority",
        }
    return {"model": "m", "messages": turns, "stream": stream, "max_tokens": 5, "speed": "fast"}


async def _events(stub: StubModelServer, api: str, answer: Answer) -> list[tuple[str, Any]]:
    stub.script(answer)
    async with httpx.AsyncClient(trust_env=False) as http:
        response = await http.post(f"{stub.base_url}/{api}", json=_body(api))
    parser = SSEParser()
    events = parser.feed(response.content) + parser.finish()
    assert events, "the stub sent no event"
    return [(event.event, json.loads(event.data)) for event in events]


@pytest.mark.parametrize("answer", ANSWERS, ids=range(len(ANSWERS)))
async def test_every_responses_event_the_stub_sends_is_an_openai_sdk_event(
    stub: StubModelServer, sdk: SimpleNamespace, answer: Answer
) -> None:
    for _, obj in await _events(stub, "responses", answer):
        _validate(sdk.response_events, obj)


@pytest.mark.parametrize("answer", ANSWERS, ids=range(len(ANSWERS)))
async def test_every_messages_event_the_stub_sends_is_an_anthropic_sdk_event(
    stub: StubModelServer, sdk: SimpleNamespace, answer: Answer
) -> None:
    for name, obj in await _events(stub, "messages", answer):
        assert name == obj["type"]  # Anthropic names each event by its type
        if name == "ping":
            assert obj == {"type": "ping"}
        elif name == "error":
            sdk.anthropic.ErrorResponse.model_validate(obj)
        else:
            _validate(sdk.message_events, obj)


@pytest.mark.parametrize("status", [400, 401, 404, 429, 500, 529])
async def test_every_error_body_the_stub_sends_is_the_providers_error_type(
    stub: StubModelServer, sdk: SimpleNamespace, status: int
) -> None:
    async with httpx.AsyncClient(trust_env=False) as http:
        for api in ("responses", "messages"):
            stub.script(Answer(status=status))
            response = await http.post(f"{stub.base_url}/{api}", json=_body(api))
            assert response.status_code == status
            if api == "messages":
                sdk.anthropic.ErrorResponse.model_validate(response.json())
            else:
                sdk.openai.ErrorObject.model_validate(response.json()["error"])


async def test_a_refused_tier_is_a_providers_error_naming_the_field(
    stub: StubModelServer, sdk: SimpleNamespace
) -> None:
    async with httpx.AsyncClient(trust_env=False) as http:
        for api, field in (("responses", "service_tier"), ("messages", "speed")):
            stub.script(Answer(refuse_tier=True))
            response = await http.post(f"{stub.base_url}/{api}", json=_body(api))
            assert response.status_code == 400 and field in response.text
            if api == "messages":
                sdk.anthropic.ErrorResponse.model_validate(response.json())
            else:
                sdk.openai.ErrorObject.model_validate(response.json()["error"])


async def test_the_whole_answers_are_the_sdks_response_and_message(
    stub: StubModelServer, sdk: SimpleNamespace
) -> None:
    async with httpx.AsyncClient(trust_env=False) as http:
        stub.script(Answer(text="ok"), Answer(text="ok"))
        response = await http.post(f"{stub.base_url}/responses", json=_body("responses", False))
        assert sdk.responses.Response.model_validate(response.json()).output_text == "ok"
        message = await http.post(f"{stub.base_url}/messages", json=_body("messages", False))
        assert sdk.anthropic.Message.model_validate(message.json()).content[0].text == "ok"
