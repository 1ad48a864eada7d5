"""What every backend speaks: a chat request in, a stream of text deltas out, clear errors.

Pure: no pygls, no httpx. The OpenAI-compatible backend implements :class:`Backend`; the job
pipeline only sees this module's types (the offline engine answers through
``pipeline.offline`` instead).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

ErrorKind = Literal[
    "auth",  # 401/403: missing or bad key
    "not_found",  # 404: unknown model or wrong base URL
    "bad_request",  # 400/422: the provider refused the request body
    "rate_limit",  # 429 with a reset time (retry-after or provider headers)
    "quota",  # 429/402 for billing or quota: never retried
    "server",  # 5xx
    "timeout",  # connect, read or whole-request timeout
    "connect",  # connection refused, name resolution failure
    "dropped",  # the connection closed mid-stream
    "protocol",  # a malformed response (bad SSE, wrong content type, error event in a 200)
    "blocked",  # not sent: the (baseUrl, model) is still rate-limited from an earlier 429
    "rejected",  # the model's answers failed verification (nothing was put in the buffer)
]


class BackendError(Exception):
    """A backend failure with a user-facing message (never containing a secret)."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        #: Seconds until the (baseUrl, model) may be called again, when the provider said so.
        self.retry_after = retry_after

    def __str__(self) -> str:
        return self.message


class NoModelError(Exception):
    """A profile has no model to call (none set, and ``/v1/models`` lists none): says which."""


def sendable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so that a UTF-8 body can carry it.

    An editor can send lone surrogates (JSON ``\\ud800``), and encoding one fails (httpx raises
    ``UnicodeEncodeError``, not a :class:`BackendError`). A pair split in two is joined again.
    """
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions call; ``max_tokens`` is always tight (Cerebras reserves it up front)."""

    messages: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float = 0.2
    stop: tuple[str, ...] = ()
    #: Predicted output (the text a rewrite starts from), sent as ``prediction`` when set.
    prediction: str | None = None


#: A backend's watch for the end of the answer it streams: called with a wake-up, it calls it
#: once when the end arrives (at once if it already has) and returns the function that stops
#: watching.
EndWatch = Callable[[Callable[[], None]], Callable[[], None]]
#: The httpx response extension in which a transport offers its body's :data:`EndWatch`
#: (:mod:`.aio_transport` does; read by :class:`.post.PacedReads`).
END_WATCH = "fastedit.end_watch"


@dataclass
class StreamInfo:
    """Filled in by a backend while it streams; read by the job once the stream ends.

    ``pace`` is the consumer's: a backend awaits it before each read of the stream once text
    has arrived. Every read is an event-loop wake-up, so a consumer that sends coalesced edits
    (60 a second) paces the reads to its sends: a 1,000 tok/s stream is then read about 60
    times a second instead of 1,000, and each read takes everything that arrived meanwhile.
    The backend passes it an :data:`EndWatch`, with which a consumer that waits has its wait
    cut short when the answer's end arrives: the last text is read as it arrives.
    """

    model: str = ""
    finish_reason: str | None = None
    #: Why the model stopped, normalised over the wire formats (:func:`stop_reason`): ``stop``,
    #: ``length``, ``content_filter``, ``max_tokens`` or ``refusal``; None: not said (yet).
    stop_reason: str | None = None
    #: The provider's own word for it (``finish_reason``, ``stop_reason``, ``end_turn``,
    #: ``max_output_tokens``...), in every wire format.
    stop_detail: str | None = None
    #: The profile's ``speedTier`` as asked, and the tier the response says served it
    #: (``standard`` when the provider fell back, or the field was refused); None: not asked.
    tier_asked: str | None = None
    tier_served: str | None = None
    #: What the backend did on its own that the user should hear of (a refused field sent
    #: again without it, a switch of API), each a sentence; the job adds them to its reason.
    notes: list[str] = field(default_factory=list)
    #: Completion tokens as reported by the provider's usage chunk, if it sent one.
    completion_tokens: int | None = None
    #: ``usage.completion_tokens_details``' accepted / rejected prediction tokens, when sent.
    accepted_prediction_tokens: int | None = None
    rejected_prediction_tokens: int | None = None
    #: Number of content deltas received (a token count when the provider sends no usage).
    deltas: int = 0
    #: Monotonic time of the first content delta, for time-to-first-token.
    first_delta_at: float | None = None
    #: Monotonic time of the latest content delta, for the decode speed.
    last_delta_at: float | None = None
    extra: dict[str, str] = field(default_factory=dict)
    #: Called with a backend's :data:`EndWatch` (or None) before each paced read.
    pace: Callable[[EndWatch | None], Awaitable[None]] | None = None
    #: Seconds the backend may keep reading when the consumer closes the stream before its end
    #: without being cancelled (a completion that has its line): an answer that ends within
    #: them leaves its connection open for the next call (a new one cost 5–10 ms on loopback in
    #: the bench, a TCP and TLS handshake remotely). 0: closed at once.
    linger: float = 0.0
    #: Called once by a backend when its request is written (the model has it), before the
    #: answer is awaited: what the consumer tells the editor then overlaps the model's work
    #: instead of holding back the request. Never called when no request went out.
    sent: Callable[[], None] | None = None


#: A provider's word for why its model stopped → the normalised ``StreamInfo.stop_reason``,
#: over every wire format: chat completions' ``finish_reason``, the Responses API's status or
#: ``incomplete_details.reason``, the Messages API's ``stop_reason``.
STOP_REASONS: dict[str, str] = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_calls": "stop",
    "function_call": "stop",
    "tool_use": "stop",
    "pause_turn": "stop",
    "completed": "stop",
    "length": "length",
    "limit": "length",
    "model_context_window_exceeded": "length",
    "max_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
    "safety": "content_filter",
    "recitation": "content_filter",
    "refusal": "refusal",
}


def stop_reason(word: str) -> str:
    """The normalised stop reason for a provider's ``word`` (an unknown word: ``stop``)."""
    return STOP_REASONS.get(word.lower(), "stop")


class Backend(Protocol):
    """A source of streamed text for a job."""

    #: ``local`` for the offline engine, else the provider name (``cerebras``, ...).
    provider: str
    #: The model id that answers, as shown to the user.
    model: str

    def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncIterator[str]:
        """Yield the answer's text in order, in pieces; raise :class:`BackendError` on failure.

        A piece holds one or more of the model's text deltas (chat completions hand over those
        of one read as one piece); ``info.deltas`` counts the deltas.

        Closing the iterator (``aclose``) or cancelling the consuming task must close the
        underlying connection at once (after at most ``info.linger`` for a close that is not a
        cancellation).
        """
        ...
