"""The stub model server's scripted answers and the requests it records.

:class:`Answer` is one scripted model answer (what is said, how fast, and how it misbehaves: the
knobs are described in :mod:`fastedit_lsp.tools.stub`), :func:`split_tokens` cuts its text into
tokens, the error objects follow OpenAI's shape, and :class:`RecordedRequest` is one request as the
stub received and served it. Re-exported by :mod:`fastedit_lsp.tools.stub`. Stdlib only.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Final, Literal, TypeGuard, get_args

from .stub_http import _phrase

DEFAULT_TEXT: Final = "def add(a: int, b: int) -> int:\n    return a + b\n"

MalformedKind = Literal["bad_json", "no_data_prefix", "binary", "error_event"]
#: How a chat model wraps the text it means (``Answer.shape``), as real models answer.
AnswerShape = Literal[
    "plain",
    "fence",
    "fence_no_tag",
    "fence_unterminated",
    "prose",
    "think",
    "think_fence",
    "dedent",
    "crlf",
]
ANSWER_SHAPES: Final[tuple[str, ...]] = get_args(AnswerShape)


def shaped(text: str, shape: str, *, repeat: str = "", language: str = "python") -> str:
    """``text`` as a model answers it in ``shape``, after ``repeat`` (the text before the
    target that models re-send: the current line, the lines above, the function's start)."""
    import textwrap

    code = repeat + text
    if shape == "dedent":
        return textwrap.dedent(code)
    if shape == "crlf":
        return code.replace("\r\n", "\n").replace("\n", "\r\n")
    if shape == "fence":
        return f"```{language}\n{code}\n```\n"
    if shape == "fence_no_tag":
        return f"```\n{code}\n```"
    if shape == "fence_unterminated":
        return f"```{language}\n{code}"
    if shape == "prose":
        return f"Here is the code:\n\n```{language}\n{code}\n```\n\nThis keeps the behaviour."
    if shape == "think":
        return f"<think>\nThe user wants the rest. Keep the style.\n</think>\n\n{code}"
    if shape == "think_fence":
        return f"<think>Let me read the code first.</think>\n```{language}\n{code}\n```"
    return code


MALFORMED_KINDS: Final[tuple[str, ...]] = get_args(MalformedKind)


def split_tokens(text: str, size: int = 3, *, split_crlf: bool = True) -> list[str]:
    """Cut ``text`` into tokens of at most ``size`` code points; ``"".join`` gives ``text`` back.

    The cuts fall every ``size`` code points with no regard for grapheme clusters, so a base
    letter and its combining mark, an emoji ZWJ sequence or a flag's two regional indicators are
    cut whenever they straddle a multiple of ``size`` (``size=1`` cuts every cluster), which is
    what a streaming client must survive. With ``split_crlf`` every ``"\\r\\n"`` is also cut in
    two: one token ends with ``"\\r"`` and the next starts with ``"\\n"``. No token is empty.
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    cuts = set(range(size, len(text), size))
    if split_crlf:
        cuts.update(i + 1 for i in range(len(text) - 1) if text[i] == "\r" and text[i + 1] == "\n")
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b]


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _default_error(status: int) -> tuple[str, str | None, str]:
    """OpenAI's error ``type``, ``code`` and a message for a status."""
    if status == 401:
        return "invalid_request_error", "invalid_api_key", "Incorrect API key provided."
    if status == 403:
        return "permission_error", None, "You are not allowed to use this model."
    if status == 404:
        return "invalid_request_error", "model_not_found", "The model does not exist."
    if status == 429:
        return "requests", "rate_limit_exceeded", "Rate limit reached for requests."
    if status >= 500:
        return "server_error", None, "The server had an error while processing your request."
    return "invalid_request_error", None, _phrase(status)


def _error_json(error_type: str, code: str | None, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


@dataclass
class Answer:
    """One scripted model answer; the defaults give a plain, flat-out, well-formed answer.

    The knobs are described in :mod:`fastedit_lsp.tools.stub`'s docstring. Invalid values raise
    :class:`ValueError`.
    """

    text: str = DEFAULT_TEXT
    tokens: list[str] | None = None
    token_size: int = 3
    tps: float = 0.0
    ttft: float = 0.0
    header_delay: float = 0.0
    finish_reason: str = "stop"
    role_chunk: bool = True
    status: int = 200
    error_type: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    error_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    drop_after: int | None = None
    stall_after: int | None = None
    hold_after: int | list[int] | None = None
    malformed: MalformedKind | None = None
    malformed_after: int = 0
    malformed_continue: bool = False
    split_bytes: bool = False
    prediction_speedup: float = 1.0
    #: Each SSE event in its own HTTP chunk, as hosted providers flush them (the default puts
    #: all the events due at one time in one chunk).
    chunk_per_event: bool = False
    #: The answer's shape (:data:`AnswerShape`): ``text`` (after ``repeat``) wrapped as chat
    #: models wrap it; see :func:`shaped`.
    shape: AnswerShape = "plain"
    repeat: str = ""
    language: str = "python"
    #: Responses / Messages APIs: a reasoning summary (Responses) or ``thinking`` block
    #: (Messages) sent before the text, which a client must skip.
    reasoning: str | None = None
    #: Responses / Messages APIs: the tier the response says served it (default: the one asked;
    #: the Responses API says ``default`` when none was).
    tier_served: str | None = None
    #: Responses / Messages APIs: a request carrying a tier field gets a 400 naming it.
    refuse_tier: bool = False
    #: Whose FIM ``/v1/fim/completions`` is: ``mistral`` (chat-shaped chunks) or ``inception``
    #: (Mercury Edit: ``text_completion`` chunks).
    fim_dialect: str = "mistral"

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not isinstance(self.text, str):
            problems.append("text must be a string")
        if self.tokens is not None and not (
            isinstance(self.tokens, list) and all(isinstance(t, str) for t in self.tokens)
        ):
            problems.append("tokens must be a list of strings")
        if self.shape not in ANSWER_SHAPES:
            problems.append(f"shape must be one of {', '.join(ANSWER_SHAPES)}")
        if not isinstance(self.repeat, str) or not isinstance(self.language, str):
            problems.append("repeat and language must be strings")
        if not (_is_int(self.token_size) and self.token_size >= 1):
            problems.append("token_size must be an integer >= 1")
        if not (_is_number(self.prediction_speedup) and self.prediction_speedup > 0):
            problems.append("prediction_speedup must be a number > 0")
        for name in ("tps", "ttft", "header_delay"):
            value = getattr(self, name)
            if not (_is_number(value) and value >= 0):
                problems.append(f"{name} must be a number >= 0")
        if not (_is_int(self.status) and 200 <= self.status <= 599):
            problems.append("status must be an integer from 200 to 599")
        for name in ("drop_after", "stall_after"):
            value = getattr(self, name)
            if value is not None and not (_is_int(value) and value >= 0):
                problems.append(f"{name} must be null or an integer >= 0")
        holds = self.hold_after if isinstance(self.hold_after, list) else [self.hold_after]
        if not all(h is None or (_is_int(h) and h >= 0) for h in holds):
            problems.append("hold_after must be null, an integer >= 0 or a list of them")
        if not (_is_int(self.malformed_after) and self.malformed_after >= 0):
            problems.append("malformed_after must be an integer >= 0")
        if self.malformed is not None and self.malformed not in MALFORMED_KINDS:
            problems.append(f"malformed must be null or one of {', '.join(MALFORMED_KINDS)}")
        for name in ("error_type", "error_code", "error_message", "content_type"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                problems.append(f"{name} must be null or a string")
        if not isinstance(self.finish_reason, str):
            problems.append("finish_reason must be a string")
        if self.fim_dialect not in ("mistral", "inception"):
            problems.append("fim_dialect must be mistral or inception")
        for name in ("reasoning", "tier_served"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                problems.append(f"{name} must be null or a string")
        for name in (
            "role_chunk",
            "malformed_continue",
            "split_bytes",
            "chunk_per_event",
            "refuse_tier",
        ):
            if not isinstance(getattr(self, name), bool):
                problems.append(f"{name} must be a boolean")
        if self.error_body is not None and not isinstance(self.error_body, dict):
            problems.append("error_body must be null or an object")
        if not (
            isinstance(self.headers, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items())
        ):
            problems.append("headers must map strings to strings")
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def from_json(cls, data: object) -> Answer:
        """Build an answer from a JSON object with this class's field names."""
        if not isinstance(data, dict):
            raise ValueError("an answer must be a JSON object")
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise ValueError(f"unknown answer fields: {', '.join(map(str, unknown))}")
        return cls(**data)

    def token_list(self) -> list[str]:
        """The tokens to send: ``tokens`` if given, else ``text`` cut by :func:`split_tokens`."""
        if self.tokens is not None:
            return list(self.tokens)
        text = shaped(self.text, self.shape, repeat=self.repeat, language=self.language)
        return split_tokens(text, self.token_size)

    def error_json(self) -> dict[str, Any]:
        """The error object for a non-200 answer or an ``error_event``."""
        if self.error_body is not None:
            return self.error_body
        error_type, code, message = _default_error(self.status if self.status != 200 else 500)
        return _error_json(
            self.error_type or error_type,
            self.error_code if self.error_code is not None else code,
            self.error_message or message,
        )


@dataclass(eq=False)
class RecordedRequest:
    """One request the stub received (control requests excepted), updated while it is served."""

    method: str
    path: str
    #: Header names lowercased; repeated headers joined with ", ".
    headers: dict[str, str]
    #: The parsed JSON body, or None when there was none or it was not JSON.
    body: Any
    #: ``time.monotonic()`` when the request was read.
    started_at: float
    #: Serial number of the TCP connection, to check keep-alive.
    connection: int
    raw_body: bytes = field(default=b"", repr=False)
    #: The answer it was served with (model requests only).
    answer: Answer | None = None
    #: The response status, once the headers went out.
    status: int | None = None
    finish_reason: str | None = None
    #: Content tokens written to the socket.
    tokens_sent: int = 0
    #: ``time.monotonic()`` when the first and the last content token were written (streams).
    first_token_at: float | None = None
    last_token_at: float | None = None
    #: Each write that carried content tokens (streams): the tokens written so far and
    #: ``time.monotonic()`` once the write was done, so that the bench knows when any token
    #: (the end of the answer's first line, say) left the stub.
    token_writes: list[tuple[int, float]] = field(default_factory=list)
    #: ``time.monotonic()`` when the first and the last byte of the response were written: the
    #: stub's own time for a request is ``last_byte_at - started_at`` (the bench's yardstick).
    first_byte_at: float | None = None
    last_byte_at: float | None = None
    #: The whole response was written as scripted, ending well-formed at the HTTP level.
    completed: bool = False
    #: The client closed the connection before the response was complete.
    client_closed: bool = False
    #: ``time.monotonic()`` when the client's close was seen.
    closed_at: float | None = None
    #: ``time.monotonic()`` when handling ended, for any reason.
    ended_at: float | None = None
    #: Set when handling ends, for any reason (bound to the stub's event loop).
    done: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    #: Set by a test (:meth:`StubModelServer.release`) to let a stream held by ``hold_after`` go
    #: on; cleared by the stream at each hold.
    release: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def to_json(self) -> dict[str, Any]:
        """This record as JSON, as served by ``GET /_stub/requests``."""
        out = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("raw_body", "done", "release", "answer")
        }
        out["answer"] = asdict(self.answer) if self.answer is not None else None
        return out
