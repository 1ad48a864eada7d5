"""How the stub model server frames an answer in each endpoint's dialect.

OpenAI chat, legacy completions, llama.cpp's infill and Mistral's FIM: what a model request asks
for, read the way its dialect names it (:class:`_Params`); the events of a stream and the
``stream: false`` object (:class:`_Wire`); and the sending of both, paced, with the scripted
interruptions (:func:`_stream`, :func:`_complete`). The endpoints and the knobs are described in
:mod:`fastedit_lsp.tools.stub`. Stdlib asyncio only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Final, Literal

from .stub_answers import Answer, RecordedRequest, _default_error, _error_json, _is_int
from .stub_apis import ApiWire
from .stub_http import _Exchange, _json_bytes

#: How an endpoint frames an answer: OpenAI chat, legacy completions, llama.cpp, Mistral FIM.
Dialect = Literal["chat", "completions", "infill", "fim"]

#: llama.cpp's ``stop_type`` for an OpenAI ``finish_reason``.
_STOP_TYPES: Final = {"stop": "eos", "length": "limit"}

# Not valid UTF-8 (lone continuation bytes, an overlong lead, NUL): breaks any text decoder.
_BINARY_EVENT: Final = b"data: \xff\xfe\x00\x80\xc3\x28\n\n"


def _sse(obj: object) -> bytes:
    return b"data: " + _json_bytes(obj) + b"\n\n"


@dataclass(frozen=True)
class _Params:
    """What a model request asks for, read the way its dialect names it."""

    model: str
    stream: bool
    include_usage: bool
    max_tokens: int | None
    prompt_tokens: int
    #: The request's predicted output (``prediction: {type: "content", content}``), if any.
    prediction: str | None = None
    #: Emulated ``completion_tokens_details``: (accepted, rejected) prediction tokens.
    prediction_tokens: tuple[int, int] | None = None
    #: The ``service_tier`` asked, and the one the usage chunk says served it (chat).
    service_tier: str | None = None
    tier_served: str | None = None

    @classmethod
    def parse(cls, dialect: Dialect, body: dict[str, Any], default_model: str) -> _Params:
        model = body.get("model")
        options = body.get("stream_options")
        if dialect == "infill":
            limit = body.get("n_predict")  # -1, llama.cpp's default, means no limit
        else:
            limit = body.get("max_completion_tokens") if dialect == "chat" else None
            if limit is None:
                limit = body.get("max_tokens")
        return cls(
            model=model if isinstance(model, str) and model else default_model,
            stream=body.get("stream") is True,
            include_usage=isinstance(options, dict) and options.get("include_usage") is True,
            max_tokens=limit if _is_int(limit) and limit >= 0 else None,
            prompt_tokens=(_prompt_chars(dialect, body) + 3) // 4,
            prediction=_prediction(body),
            service_tier=tier if isinstance(tier := body.get("service_tier"), str) else None,
        )


def _prediction(body: dict[str, Any]) -> str | None:
    prediction = body.get("prediction")
    if isinstance(prediction, dict) and prediction.get("type") == "content":
        content = prediction.get("content")
        return content if isinstance(content, str) else None
    return None


def prediction_tokens(prediction: str, tokens: list[str], token_size: int) -> tuple[int, int]:
    """An emulation of a provider's accepted and rejected prediction tokens: answer tokens found
    in the prediction are accepted; the prediction's other tokens are rejected."""
    accepted = sum(1 for token in tokens if token and token in prediction)
    predicted = -(-len(prediction) // max(1, token_size))
    return accepted, max(0, predicted - accepted)


def _prompt_chars(dialect: Dialect, body: dict[str, Any]) -> int:
    """Characters of prompt text (/ 4 gives a stand-in for the provider's token count)."""
    texts: list[object]
    if dialect == "chat":
        texts = []
        for message in _list(body.get("messages")):
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
                texts.extend(part.get("text") for part in content if isinstance(part, dict))
            else:
                texts.append(content)
    elif dialect == "infill":
        texts = [body.get("input_prefix"), body.get("input_suffix"), body.get("prompt")]
        texts.extend(e.get("text") for e in _list(body.get("input_extra")) if isinstance(e, dict))
    else:
        texts = [body.get("prompt"), body.get("suffix")]
    return sum(len(text) for text in texts if isinstance(text, str))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


async def _send_error(ex: _Exchange, status: int, message: str) -> bool:
    error_type, code, _ = _default_error(status)
    return await ex.send_json(status, _error_json(error_type, code, message))


def _usage(params: _Params, completion_tokens: int) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": params.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": params.prompt_tokens + completion_tokens,
    }
    if params.prediction_tokens is not None:
        accepted, rejected = params.prediction_tokens
        usage["completion_tokens_details"] = {
            "accepted_prediction_tokens": accepted,
            "rejected_prediction_tokens": rejected,
        }
    return usage


@dataclass(frozen=True)
class _Wire:
    """How one dialect frames an answer: its events and its ``stream: false`` object."""

    dialect: Dialect
    params: _Params
    response_id: str
    created: int

    def opening(self) -> bytes:
        """The role chunk that chat-shaped streams start with; nothing for the others."""
        if self.dialect in ("chat", "fim"):
            return self._chat_chunk({"role": "assistant", "content": ""}, None)
        return b""

    def token(self, text: str) -> bytes:
        """One token's event."""
        if self.dialect == "infill":
            return _sse({"content": text, "stop": False})
        if self.dialect == "completions":
            return self._text_chunk(text, None)
        return self._chat_chunk({"content": text}, None)

    def ending(self, finish: str, n_tokens: int) -> bytes:
        """Everything after the last token of a complete stream."""
        if self.dialect == "infill":
            # llama.cpp's last event says it all, and no [DONE] follows.
            return _sse(self._infill_final("", finish, n_tokens))
        if self.dialect == "fim":
            # Mistral puts the usage in the finish chunk, unasked.
            out = self._chat_chunk({}, finish, usage=_usage(self.params, n_tokens))
        elif self.dialect == "completions":
            out = self._text_chunk("", finish)
        else:
            out = self._chat_chunk({}, finish)
        if self.params.include_usage and self.dialect != "fim":
            extra: dict[str, Any] = {"usage": _usage(self.params, n_tokens)}
            if self.params.service_tier is not None:
                extra["service_tier"] = self.params.tier_served or self.params.service_tier
            out += _sse(self._envelope([], **extra))
        return out + b"data: [DONE]\n\n"

    def bad_json(self) -> bytes:
        """An event whose JSON breaks off in the middle."""
        if self.dialect == "infill":
            return b'data: {"content":"?","sto\n\n'
        if self.dialect == "completions":
            return b'data: {"object":"text_completion","choices":[{"index":0,"te\n\n'
        return b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"con\n\n'

    def completion(self, text: str, finish: str, n_tokens: int) -> dict[str, Any]:
        """The ``stream: false`` answer."""
        if self.dialect == "infill":
            return self._infill_final(text, finish, n_tokens)
        usage = _usage(self.params, n_tokens)
        if self.dialect == "completions":
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
            return self._envelope([choice], usage=usage)
        # Mistral's FIM answers with a chat completion too.
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return {**self._envelope([choice], usage=usage), "object": "chat.completion"}

    def _infill_final(self, text: str, finish: str, n_tokens: int) -> dict[str, Any]:
        return {
            "content": text,
            "stop": True,
            "model": self.params.model,
            "tokens_predicted": n_tokens,
            "tokens_evaluated": self.params.prompt_tokens,
            "stop_type": _STOP_TYPES.get(finish, finish),
        }

    def _envelope(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        kind = "text_completion" if self.dialect == "completions" else "chat.completion.chunk"
        return {
            "id": self.response_id,
            "object": kind,
            "created": self.created,
            "model": self.params.model,
            "choices": choices,
            **extra,
        }

    def _with_usage_slot(self, event: dict[str, Any]) -> dict[str, Any]:
        # OpenAI sends "usage": null on every chunk but the usage-only one.
        return {**event, "usage": None} if self.params.include_usage else event

    def _chat_chunk(self, delta: dict[str, str], finish_reason: str | None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        event = self._envelope([choice])
        return _sse({**self._with_usage_slot(event), **extra})

    def _text_chunk(self, text: str, finish_reason: str | None) -> bytes:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
        return _sse(self._with_usage_slot(self._envelope([choice])))


async def _complete(
    ex: _Exchange,
    record: RecordedRequest,
    answer: Answer,
    wire: _Wire | ApiWire,
    tokens: list[str],
    finish: str,
) -> bool:
    """A ``stream: false`` answer: one JSON object after the generation time."""
    await ex.pause(answer.ttft + (len(tokens) / answer.tps if answer.tps > 0 else 0.0))
    payload = _json_bytes(wire.completion("".join(tokens), finish, len(tokens)))
    if answer.malformed == "bad_json":
        payload = payload[: len(payload) // 2]
    elif answer.malformed == "binary":
        payload = _BINARY_EVENT
    elif answer.malformed == "error_event":
        payload = _json_bytes(answer.error_json())
    content_type = answer.content_type or "application/json"
    await ex.send_head(200, content_type, content_length=len(payload), headers=answer.headers)
    if answer.drop_after is not None:
        await ex.send_body(payload[: len(payload) // 2])
        ex.abort()
        return False
    if answer.stall_after is not None:
        await ex.wait_client_close()
    await ex.send_body(payload)
    record.tokens_sent = len(tokens)
    record.finish_reason = finish
    return True


def _stream_actions(answer: Answer, n_tokens: int) -> dict[int, list[str]]:
    """Interruptions keyed by the token count after which they happen, in order."""
    actions: dict[int, list[str]] = {}
    holds = answer.hold_after if isinstance(answer.hold_after, list) else [answer.hold_after]
    points = (
        ("malformed", answer.malformed_after if answer.malformed is not None else None),
        ("drop", answer.drop_after),
        ("stall", answer.stall_after),
        *(("hold", after) for after in sorted({h for h in holds if h is not None})),
    )
    for action, after in points:
        if after is not None and after <= n_tokens:
            actions.setdefault(after, []).append(action)
    return actions


def _malformed_event(answer: Answer, wire: _Wire | ApiWire) -> bytes:
    if answer.malformed == "error_event" and isinstance(wire, ApiWire):
        return wire.error_event()
    if answer.malformed == "bad_json":
        return wire.bad_json()
    if answer.malformed == "no_data_prefix":
        return wire.token("?").removeprefix(b"data: ")
    if answer.malformed == "binary":
        return _BINARY_EVENT
    return _sse(answer.error_json())


async def _stream(
    ex: _Exchange,
    record: RecordedRequest,
    answer: Answer,
    wire: _Wire | ApiWire,
    tokens: list[str],
    finish: str,
) -> bool:
    """A ``stream: true`` answer: paced SSE events, with the scripted interruptions."""
    out: list[bytes] = []
    sent = 0

    async def flush(*, last: bool = False) -> None:
        if answer.chunk_per_event:
            await ex.send_events(out, last=last)
        else:
            await ex.send_body(b"".join(out), last=last)
        out.clear()
        if sent > record.tokens_sent:
            # The stub's own send time, the bench's yardstick for the server's stream overhead.
            record.last_token_at = time.monotonic()
            if record.first_token_at is None:
                record.first_token_at = record.last_token_at
            record.token_writes.append((sent, record.last_token_at))
        record.tokens_sent = sent

    # Encoded before the first byte goes out, so that a fast paced stream costs the stub (which
    # shares the machine with the client it measures) only its writes.
    events = [wire.token(token) for token in tokens]
    headers = {"cache-control": "no-cache", **answer.headers}
    content_type = answer.content_type or "text/event-stream"
    await ex.send_head(200, content_type, content_length=None, headers=headers)
    await ex.pause(answer.ttft)
    if answer.role_chunk:
        out.append(wire.opening())
    actions = _stream_actions(answer, len(tokens))
    t0 = time.monotonic()
    while True:
        for action in actions.pop(sent, ()):
            if action == "malformed":
                out.append(_malformed_event(answer, wire))
                if not answer.malformed_continue:
                    await flush(last=True)
                    return True
            elif action == "drop":
                await flush()
                ex.abort()
                return False
            elif action == "hold":
                await flush()
                held = time.monotonic()
                await ex.wait_event(record.release)
                record.release.clear()  # the next hold waits for the next release
                t0 += time.monotonic() - held  # the schedule goes on from the release
            else:
                await flush()
                await ex.wait_client_close()
        if sent == len(tokens):
            break
        stop = min([p for p in actions if p > sent] + [len(tokens)])
        due = stop
        if answer.tps > 0:
            due = max(sent, min(stop, int((time.monotonic() - t0) * answer.tps) + 1))
        out.extend(events[sent:due])
        sent = due
        if sent < stop:
            await flush()
            await ex.pause(t0 + sent / answer.tps - time.monotonic())
    out.append(wire.ending(finish, len(tokens)))
    await flush(last=True)
    record.finish_reason = finish
    return True
