"""The stub's OpenAI Responses API and Anthropic Messages API: each event and error, byte-exact.

``POST /v1/responses`` (``stream: true``) sends ``response.created``, ``response.in_progress``,
a reasoning item with its summary when ``Answer.reasoning`` is set, the message item's
``response.output_item.added`` and ``response.content_part.added``, one
``response.output_text.delta`` per token, then the text's and item's ``done`` events and
``response.completed`` (usage, ``service_tier``) or ``response.incomplete`` (finish
``length``: ``max_output_tokens``; ``content_filter``). ``POST /v1/messages`` sends
``message_start`` (``usage.speed`` when a speed was asked), a ``thinking`` block when
``Answer.reasoning`` is set, the text block's ``content_block_start``, a ``ping``, one
``content_block_delta`` / ``text_delta`` per token, ``content_block_stop``, ``message_delta``
(``stop_reason``: ``end_turn``, ``max_tokens`` for a ``length`` finish, or the finish as given:
``refusal``, ``stop_sequence``) and ``message_stop``. Each event is framed with its ``event:``
line as Anthropic does; the Responses API's carry ``sequence_number``.

Errors: a non-200 status answers the API's own error object (Anthropic's
``{"type": "error", "error": {"type", "message"}}``, with ``overloaded_error`` for 529), the
``error_event`` malformation sends the API's ``error`` event mid-stream. Tiers:
``Answer.tier_served`` is what the response says served it (default: the tier asked), and
``Answer.refuse_tier`` answers 400 naming the field when the request carries one; both work on
chat completions too (``service_tier``, echoed in the usage chunk). The shapes are
checked against the providers' SDK types in the tests. Stdlib only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

from .stub_answers import Answer
from .stub_http import _json_bytes

ApiDialect = Literal["responses", "messages"]

#: Anthropic's error type per status.
_ANTHROPIC_ERRORS: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

#: A chat-style finish as Anthropic's stop reason (it has no content filter: it refuses).
_MESSAGES_STOPS: Final = {"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal"}


def _event(name: str, obj: dict[str, Any], *, named: bool) -> bytes:
    head = f"event: {name}\n".encode() if named else b""
    return head + b"data: " + _json_bytes(obj) + b"\n\n"


def tier_field(dialect: ApiDialect, body: dict[str, Any]) -> tuple[str, str] | None:
    """The tier field a request carries, (name, value), if any."""
    name = "speed" if dialect == "messages" else "service_tier"
    value = body.get(name)
    return (name, value) if isinstance(value, str) else None


def error_body(dialect: ApiDialect, answer: Answer, status: int) -> dict[str, Any]:
    """The API's error object for a non-200 answer."""
    if answer.error_body is not None:
        return answer.error_body
    if dialect == "responses":
        return answer.error_json()
    kind = answer.error_type or _ANTHROPIC_ERRORS.get(status, "api_error")
    message = answer.error_message or {
        "overloaded_error": "Overloaded",
        "rate_limit_error": "Number of requests has exceeded your rate limit.",
        "authentication_error": "invalid x-api-key",
        "not_found_error": "model: not found",
    }.get(kind, "Internal server error")
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": None}


def refusal_body(dialect: ApiDialect, name: str, value: str) -> dict[str, Any]:
    """A 400 naming the tier field, as a provider without it answers."""
    message = f"Unsupported parameter: '{name}' ({value!r} is not available for this model)."
    if dialect == "messages":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": name,
            "code": "unsupported_parameter",
        }
    }


@dataclass
class ApiWire:
    """How the Responses or Messages API frames one answer (same methods as the chat wire)."""

    dialect: ApiDialect
    model: str
    response_id: str
    created: int
    answer: Answer
    prompt_tokens: int
    #: The tier the request asked (its field's value), if any.
    tier_asked: str | None = None
    #: The whole answer's text (the Responses API repeats it in its ``done`` events).
    text: str = ""
    _seq: int = 0

    @property
    def _named(self) -> bool:
        return self.dialect == "messages"

    def _next(self, name: str, obj: dict[str, Any]) -> bytes:
        if self.dialect == "responses":
            obj = {"type": name, **obj, "sequence_number": self._seq}
            self._seq += 1
        else:
            obj = {"type": name, **obj}
        return _event(name, obj, named=self._named)

    @property
    def _served(self) -> str | None:
        served = self.answer.tier_served
        if served is not None:
            # The knob's "standard" is each API's own word for it.
            return "default" if served == "standard" and self.dialect == "responses" else served
        if self.dialect == "messages":
            return self.tier_asked
        return self.tier_asked or "default"

    @property
    def _item(self) -> str:
        return f"msg_{self.response_id}"

    def _response(self, status: str, output: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": f"resp_{self.response_id}",
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "service_tier": self._served,
            **extra,
        }

    def _message(self, n_tokens: int, **extra: Any) -> dict[str, Any]:
        usage: dict[str, Any] = {"input_tokens": self.prompt_tokens, "output_tokens": n_tokens}
        if self._served is not None:
            usage["speed"] = self._served
        return {
            "id": f"msg_{self.response_id}",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": self.model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
            **extra,
        }

    def opening(self) -> bytes:
        """Everything before the first token."""
        out = b""
        reasoning = self.answer.reasoning
        if self.dialect == "responses":
            out += self._next("response.created", {"response": self._response("in_progress", [])})
            out += self._next(
                "response.in_progress", {"response": self._response("in_progress", [])}
            )
            index = 0
            if reasoning is not None:
                item = {"id": f"rs_{self.response_id}", "type": "reasoning", "summary": []}
                out += self._next("response.output_item.added", {"output_index": 0, "item": item})
                part = {"type": "summary_text", "text": reasoning}
                common = {"item_id": item["id"], "output_index": 0, "summary_index": 0}
                out += self._next(
                    "response.reasoning_summary_text.delta", {**common, "delta": reasoning}
                )
                out += self._next("response.reasoning_summary_part.done", {**common, "part": part})
                done = {**item, "summary": [part]}
                out += self._next("response.output_item.done", {"output_index": 0, "item": done})
                index = 1
            message = {
                "id": self._item,
                "type": "message",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            out += self._next(
                "response.output_item.added", {"output_index": index, "item": message}
            )
            out += self._next(
                "response.content_part.added",
                {
                    "item_id": self._item,
                    "output_index": index,
                    "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                },
            )
            return out
        out += self._next("message_start", {"message": self._message(1)})
        index = 0
        if reasoning is not None:
            block = {"type": "thinking", "thinking": "", "signature": ""}
            out += self._next("content_block_start", {"index": 0, "content_block": block})
            delta = {"type": "thinking_delta", "thinking": reasoning}
            out += self._next("content_block_delta", {"index": 0, "delta": delta})
            signature = {"type": "signature_delta", "signature": "c3R1Yg=="}
            out += self._next("content_block_delta", {"index": 0, "delta": signature})
            out += self._next("content_block_stop", {"index": 0})
            index = 1
        text_block = {"type": "text", "text": ""}
        out += self._next("content_block_start", {"index": index, "content_block": text_block})
        return out + self._next("ping", {})

    @property
    def _index(self) -> int:
        return 1 if self.answer.reasoning is not None else 0

    def token(self, text: str) -> bytes:
        """One token's event."""
        if self.dialect == "responses":
            return self._next(
                "response.output_text.delta",
                {
                    "item_id": self._item,
                    "output_index": self._index,
                    "content_index": 0,
                    "delta": text,
                    "logprobs": [],
                },
            )
        delta = {"type": "text_delta", "text": text}
        return self._next("content_block_delta", {"index": self._index, "delta": delta})

    def ending(self, finish: str, n_tokens: int) -> bytes:
        """Everything after the last token of a complete stream."""
        text = self.text
        if self.dialect == "messages":
            stop = _MESSAGES_STOPS.get(finish, finish)
            out = self._next("content_block_stop", {"index": self._index})
            usage: dict[str, Any] = {"output_tokens": n_tokens}
            delta = {"stop_reason": stop, "stop_sequence": None}
            out += self._next("message_delta", {"delta": delta, "usage": usage})
            return out + self._next("message_stop", {})
        where = {"item_id": self._item, "output_index": self._index, "content_index": 0}
        part = {"type": "output_text", "text": text, "annotations": []}
        out = self._next("response.output_text.done", {**where, "text": text, "logprobs": []})
        out += self._next("response.content_part.done", {**where, "part": part})
        incomplete = {"length": "max_output_tokens", "content_filter": "content_filter"}
        status = "incomplete" if finish in incomplete else "completed"
        message = {
            "id": self._item,
            "type": "message",
            "role": "assistant",
            "status": status,
            "content": [part],
        }
        out += self._next(
            "response.output_item.done", {"output_index": self._index, "item": message}
        )
        usage = {
            "input_tokens": self.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": n_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": self.prompt_tokens + n_tokens,
        }
        details = {"reason": incomplete[finish]} if status == "incomplete" else None
        response = self._response(status, [message], usage=usage, incomplete_details=details)
        return self._next(f"response.{status}", {"response": response})

    def error_event(self) -> bytes:
        """The API's mid-stream ``error`` event."""
        answer = self.answer
        if self.dialect == "responses":
            return self._next(
                "error",
                {
                    "code": answer.error_code or "server_error",
                    "message": answer.error_message or "The server had an error.",
                    "param": None,
                },
            )
        body = error_body("messages", answer, 529 if answer.status == 200 else answer.status)
        return _event("error", body, named=True)

    def bad_json(self) -> bytes:
        name = (
            "response.output_text.delta" if self.dialect == "responses" else "content_block_delta"
        )
        head = f"event: {name}\n" if self._named else ""
        return f'{head}data: {{"type":"{name}","delta":{{"te\n\n'.encode()

    def completion(self, text: str, finish: str, n_tokens: int) -> dict[str, Any]:
        """The ``stream: false`` answer."""
        if self.dialect == "messages":
            stop = _MESSAGES_STOPS.get(finish, finish)
            message = self._message(n_tokens, stop_reason=stop)
            message["content"] = [{"type": "text", "text": text}]
            return message
        part = {"type": "output_text", "text": text, "annotations": []}
        item = {
            "id": self._item,
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
        return self._response("completed", [item])


def prompt_chars(dialect: ApiDialect, body: dict[str, Any]) -> int:
    """Characters of prompt text (/ 4 gives a stand-in for a token count)."""
    texts: list[Any] = [body.get("instructions"), body.get("system")]
    turns = body.get("input") if dialect == "responses" else body.get("messages")
    for turn in turns if isinstance(turns, list) else []:
        content = turn.get("content") if isinstance(turn, dict) else turn
        texts.append(content if isinstance(content, str) else json.dumps(content))
    return sum(len(t) for t in texts if isinstance(t, str))
