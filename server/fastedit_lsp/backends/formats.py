"""OpenAI's Responses API and Anthropic's Messages API: request bodies and stream events.

Pure: no httpx, no pygls. What the pipeline asks (:class:`~.base.ChatRequest`) is mapped field
by field; what a format cannot carry is said here and handled by the backend:

============== =========================== ============================= ==========================
field          chat completions            Responses (``/responses``)    Messages (``/messages``)
============== =========================== ============================= ==========================
system prompt  a ``system`` message        ``instructions``              ``system``
output cap     ``max(_completion)_tokens`` ``max_output_tokens``         ``max_tokens`` (required)
temperature    0-2                         0-2; not sent to reasoning    clamped to 0-1; not sent
                                           models (gpt-5, o-series)      with thinking
stop sequences ``stop``                    none: cut by the backend      ``stop_sequences``
                                           (:class:`StopScanner`)        (whitespace-only ones cut
                                                                         by the backend)
reasoning      ``reasoning_effort``        ``reasoning.effort``          none unless set: then
                                                                         adaptive ``thinking`` +
                                                                         ``output_config.effort``
prediction     ``prediction``              not sent (chat only)          not sent (chat only)
============== =========================== ============================= ==========================

Every format reports why the model stopped as one normalised word (:func:`~.base.stop_reason`)
and the provider's own (``StreamInfo.stop_detail``). Reasoning items and summaries, ``thinking``
blocks, ``ping`` and the other events a text answer does not need are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from .base import BackendError, ChatRequest, ErrorKind, sendable
from .sse import SSEEvent, _json_object, error_text

#: Anthropic's API version header (the one its SDKs send).
ANTHROPIC_VERSION: Final = "2023-06-01"
#: OpenAI's reasoning families answer 400 to ``temperature`` other than 1.
_FIXED_SAMPLING_MODEL = re.compile(r"(?:^|[/:])(?:gpt-5|o[134])(?:$|[-.:_/])", re.IGNORECASE)
_REASONING_MODEL = re.compile(r"(?:^|[/:])(?:gpt-oss|gpt-5|o[134])(?:$|[-.:_/])", re.IGNORECASE)

#: Error types that are the provider's capacity, retried like a 5xx before any text.
_SERVER_ERRORS: Final = frozenset(
    {"overloaded_error", "api_error", "server_error", "internal_error", "overloaded"}
)


def system_and_turns(request: ChatRequest) -> tuple[str, list[dict[str, str]]]:
    """The system prompt (system messages joined) and the other messages, made sendable."""
    system = "\n\n".join(sendable(m.content) for m in request.messages if m.role == "system")
    turns = [
        {"role": m.role, "content": sendable(m.content)}
        for m in request.messages
        if m.role != "system"
    ]
    return system, turns


def build_responses_body(
    request: ChatRequest, *, model: str, reasoning_effort: str | None, tier: dict[str, Any]
) -> dict[str, Any]:
    """The JSON body of a streamed ``POST /responses``."""
    system, turns = system_and_turns(request)
    body: dict[str, Any] = {"model": model, "input": turns, "stream": True}
    if system:
        body["instructions"] = system
    body["max_output_tokens"] = request.max_tokens
    # Nothing to keep: each job is one request, never continued by id.
    body["store"] = False
    if _FIXED_SAMPLING_MODEL.search(model) is None:
        body["temperature"] = request.temperature
    if reasoning_effort or _REASONING_MODEL.search(model) or "codex" in model.lower():
        body["reasoning"] = {"effort": reasoning_effort or "low"}
    body.update(tier)
    return body


def anthropic_stops(stops: tuple[str, ...]) -> tuple[list[str], tuple[str, ...]]:
    """(sent as ``stop_sequences``, cut by the backend): Anthropic refuses whitespace-only ones."""
    sent = [sendable(s) for s in stops if s.strip()]
    return sent, tuple(s for s in stops if not s.strip())


def build_messages_body(
    request: ChatRequest, *, model: str, reasoning_effort: str | None, tier: dict[str, Any]
) -> dict[str, Any]:
    """The JSON body of a streamed ``POST /messages``."""
    system, turns = system_and_turns(request)
    body: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens, "messages": turns}
    if system:
        body["system"] = system
    body["stream"] = True
    if reasoning_effort:
        # Adaptive thinking, at the effort asked ("minimal" is below Anthropic's lowest).
        effort = "low" if reasoning_effort == "minimal" else reasoning_effort
        body["thinking"] = {"type": "adaptive"}
        body["output_config"] = {"effort": effort}
    else:
        body["temperature"] = min(1.0, request.temperature)
    sent, _ = anthropic_stops(request.stop)
    if sent:
        body["stop_sequences"] = sent
    body.update(tier)
    return body


@dataclass(slots=True)
class Step:
    """What one event of a Responses or Messages stream carries for us."""

    text: str = ""
    #: The answer is over (``response.completed`` / ``incomplete``, ``message_stop``).
    done: bool = False
    #: The provider's word for why the model stopped.
    stop: str | None = None
    output_tokens: int | None = None
    #: The provider's word for the tier that served the request.
    tier: str | None = None
    model: str | None = None
    #: The provider's error message (an ``error`` event, a failed response), and its kind.
    error: str | None = None
    error_kind: ErrorKind = "protocol"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _error_kind(error: dict[str, Any]) -> ErrorKind:
    labels = {str(error.get(k) or "") for k in ("type", "code")}
    return "server" if labels & _SERVER_ERRORS else "protocol"


def responses_step(event: SSEEvent) -> Step:
    """One Responses API event (``response.*``, ``error``); others are skipped."""
    obj = _json_object(event.data)
    kind = _str(obj.get("type")) or event.event
    if kind == "response.output_text.delta":
        delta = obj.get("delta")
        if not isinstance(delta, str):
            raise BackendError("protocol", f"a text delta is not a string: {event.data[:80]!r}")
        return Step(text=delta)
    if kind == "error":
        return Step(error=error_text(obj.get("error") or obj), error_kind=_error_kind(obj))
    response = _dict(obj.get("response"))
    if kind in ("response.created", "response.in_progress", "response.queued"):
        return Step(model=_str(response.get("model")))
    if kind == "response.refusal.done":
        return Step(stop="refusal")
    if kind not in ("response.completed", "response.incomplete", "response.failed"):
        return Step()  # reasoning items and summaries, item and part bookkeeping
    usage = _dict(response.get("usage"))
    step = Step(
        output_tokens=_int(usage.get("output_tokens")),
        tier=_str(response.get("service_tier")),
        model=_str(response.get("model")),
        done=True,
    )
    if kind == "response.failed":
        error = _dict(response.get("error"))
        step.error = error_text(error) if error else "the response failed"
        step.error_kind = _error_kind(error)
    elif kind == "response.incomplete":
        details = _dict(response.get("incomplete_details"))
        step.stop = _str(details.get("reason")) or "incomplete"
    else:
        step.stop = "completed"
    return step


def messages_step(event: SSEEvent) -> Step:
    """One Messages API event; ``thinking`` deltas, ``ping`` and block bookkeeping skipped."""
    obj = _json_object(event.data)
    kind = _str(obj.get("type")) or event.event
    if kind == "content_block_delta":
        delta = _dict(obj.get("delta"))
        if delta.get("type") != "text_delta":
            return Step()  # thinking, signatures, tool input
        text = delta.get("text")
        if not isinstance(text, str):
            raise BackendError("protocol", f"a text delta is not a string: {event.data[:80]!r}")
        return Step(text=text)
    if kind == "message_start":
        message = _dict(obj.get("message"))
        usage = _dict(message.get("usage"))
        return Step(
            model=_str(message.get("model")),
            tier=_str(usage.get("speed")),
            output_tokens=_int(usage.get("output_tokens")),
        )
    if kind == "message_delta":
        usage = _dict(obj.get("usage"))
        return Step(
            stop=_str(_dict(obj.get("delta")).get("stop_reason")),
            output_tokens=_int(usage.get("output_tokens")),
            tier=_str(usage.get("speed")),
        )
    if kind == "message_stop":
        return Step(done=True)
    if kind == "error":
        error = _dict(obj.get("error"))
        return Step(error=error_text(error or obj), error_kind=_error_kind(error))
    return Step()  # ping, content_block_start / stop


class StopScanner:
    """Stop sequences the wire cannot carry, applied to the streamed text: ``feed`` returns the
    text up to the first stop sequence (holding back a tail that may begin one), ``stopped``
    says one was met, ``finish`` returns what was held back at the end."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = tuple(s for s in stops if s)
        self._held = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        if not self._stops:
            return text
        if self.stopped:
            return ""
        text = self._held + text
        cut = min((i for i in (text.find(s) for s in self._stops) if i >= 0), default=-1)
        if cut >= 0:
            self.stopped, self._held = True, ""
            return text[:cut]
        keep = 0
        for stop in self._stops:
            for n in range(min(len(stop) - 1, len(text)), 0, -1):
                if text.endswith(stop[:n]):
                    keep = max(keep, n)
                    break
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def finish(self) -> str:
        held, self._held = self._held, ""
        return "" if self.stopped else held
