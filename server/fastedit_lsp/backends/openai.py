"""OpenAI-compatible chat completions: one streamed POST per job, every failure a clear message.

Speaks the SSE wire shared by Cerebras, Groq, OpenAI, OpenRouter, Ollama, llama.cpp and vLLM over
the server's one ``httpx.AsyncClient`` (:mod:`.network`: proxies, trusted certificates; never a
client per call; every model stream, the Responses and Messages APIs' too, opens through
:func:`.post.open_stream`), the model list (:func:`list_models`) too. The same streaming loop
serves the fill-in-the-middle dialects (:meth:`OpenAICompatibleBackend.fim_stream`; bodies, URLs
and chunks in the pure :mod:`.fim`), so chat and FIM share every guarantee: rate limits, retries,
error messages, closing. Building the body and turning a status or exception into a
:class:`BackendError` are plain functions, so they test without a network; the byte-level parsing
lives in the pure :mod:`.sse`.

Error messages name the provider and model and say what to do; they never contain the key (the
provider's own message is scrubbed of it too, in case a server echoes it back).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import math
import os
import random
import re
import socket
import ssl
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from pydantic import SecretStr

from .base import BackendError, ChatRequest, ErrorKind, StreamInfo, sendable, stop_reason
from .fim import (
    FimKind,
    FimRequest,
    build_fim_body,
    fim_base_url,
    fim_endpoint,
    parse_fim_chunk,
)
from .network import Network, Proxy, is_loopback, proxy_for
from .post import PacedReads, closed_by_cancel, drain, open_stream
from .presets import PRESETS, Preset, Provider
from .ratelimit import RateLimits, format_seconds, rate_key, reset_after
from .sse import (
    ChatChunk,
    SSEEvent,
    SSEParser,
    SurrogateJoiner,
    error_text,
    parse_chat_chunk,
)
from .tiers import SessionMemory, TierFields, refuses_field, served_tier, tier_fields

#: Error bodies can be whole HTML pages; a few KB hold any useful message.
ERROR_BODY_LIMIT = 4096
#: A 200 event stream that delivers no event: its first bytes are read for a provider's error.
SNIFF_BYTES = 1024
#: OpenRouter lists hundreds of models with long descriptions.
MODELS_BODY_LIMIT = 8 << 20
#: Reasoning models spend a tight ``max_tokens`` budget on thinking unless told to think little.
_REASONING_MODEL = re.compile(r"(?:^|[/:])(?:gpt-oss|gpt-5|o[134])(?:$|[-.:_/])", re.IGNORECASE)
#: OpenAI's own reasoning families answer 400 to ``temperature`` (other than 1) and ``stop``.
_FIXED_SAMPLING_MODEL = re.compile(r"(?:^|[/:])(?:gpt-5|o[134])(?:$|[-.:_/])", re.IGNORECASE)
#: Keys shorter than this are not scrubbed from provider text (see ``_Target.scrub``).
_MIN_SCRUB_LEN = 8
_QUOTA_WORDS = ("insufficient_quota", "credit", "billing", "payment", "spend")
#: Cerebras reports ordinary per-minute/day limits as ``request_quota_exceeded`` /
#: ``too_many_requests_error``: those are rate limits, not billing, despite the word "quota".
_RATE_WINDOW_WORDS = ("request_quota", "token_quota", "too_many")


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` names a reasoning family (gpt-oss, o1/o3/o4, gpt-5)."""
    return _REASONING_MODEL.search(model) is not None


def build_chat_body(
    request: ChatRequest, *, model: str, preset: Preset, reasoning_effort: str | None
) -> dict[str, Any]:
    """The JSON body of a streamed ``/chat/completions`` call, its text made :func:`sendable`."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": sendable(m.content)} for m in request.messages],
        "stream": True,
        preset.max_tokens_field: request.max_tokens,
    }
    if _FIXED_SAMPLING_MODEL.search(model) is None:
        body["temperature"] = request.temperature
        if request.stop:
            body["stop"] = [sendable(stop) for stop in request.stop]
    if preset.usage_in_stream:
        body["stream_options"] = {"include_usage": True}
    if request.prediction is not None:
        body["prediction"] = {"type": "content", "content": sendable(request.prediction)}
    if reasoning_effort or is_reasoning_model(model):
        body["reasoning_effort"] = reasoning_effort or "low"
    return body


def json_body(body: dict[str, Any]) -> bytes:
    """A request body's bytes: compact UTF-8 JSON, as httpx encodes ``json=``.

    orjson writes a 32 KB prompt in 9 µs where :func:`json.dumps` took 176 µs, on the path to
    the first edit; the bytes are the same but for a float's exponent form (``0.00001`` for
    ``1e-05``, the same number). What orjson would write otherwise or refuses (a float that is
    not finite, which JSON cannot hold, or a lone surrogate) goes through :mod:`json` and fails
    there as before.
    """
    if not any(isinstance(v, float) and not math.isfinite(v) for v in body.values()):
        try:
            return orjson.dumps(body)
        except TypeError:
            pass
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def jittered_backoff(attempt: int) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based) after a 5xx."""
    return min(2.0, 0.25 * 2.0 ** (attempt - 1)) * random.uniform(0.5, 1.5)


def status_kind(status: int, labels: str) -> ErrorKind:
    """The error kind of a non-2xx status; ``labels`` is the body's error code and type."""
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 402 or (status == 429 and _is_quota(labels)):
        return "quota"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    if status >= 400:
        return "bad_request"
    return "protocol"  # 1xx/3xx: redirects are not followed, so nothing usable came back


def _is_quota(labels: str) -> bool:
    if any(word in labels for word in _QUOTA_WORDS):
        return True
    return "quota" in labels and not any(word in labels for word in _RATE_WINDOW_WORDS)


@dataclass(frozen=True)
class _Target:
    """Who we are talking to, for messages. ``SecretStr`` keeps the key out of any repr."""

    provider: str
    base_url: str
    model: str | None
    api_key: SecretStr | None
    key_hint: str | None
    #: The ``network`` settings of the client, for :attr:`proxy` (None: the environment's).
    network: Network | None = None

    @functools.cached_property
    def proxy(self) -> Proxy | None:
        """The proxy requests to ``base_url`` go through (None: directly), for messages: read
        when a message needs it, not per job (the environment's proxies are read in ~0.1 ms)."""
        return proxy_for(self.base_url, self.network or Network())

    @property
    def who(self) -> str:
        if self.model is None:
            return f"{self.provider} at {self.base_url}"
        return f"{self.provider} model '{self.model}'"

    def scrub(self, text: str) -> str:
        """Remove the key from text we did not write (a provider message, an exception)."""
        # A key shorter than this is a placeholder ("ollama", "x") that local servers ignore;
        # replacing it would mangle ordinary words and protect nothing.
        key = self.api_key.get_secret_value() if self.api_key is not None else ""
        return text.replace(key, "<api key>") if len(key) >= _MIN_SCRUB_LEN else text

    def url(self, path: str) -> str:
        self.check_base_url()
        return f"{self.base_url}{path}"

    def check_base_url(self) -> None:
        # Checked here rather than left to the transport, whose error for a scheme-less URL
        # ("unknown url type") does not say which setting is wrong.
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise BackendError(
                "connect",
                f"baseUrl {self.base_url!r} is not a usable URL: use http(s)://host[:port]/v1.",
            )

    def headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept}
        if self.api_key is not None:
            key = self.api_key.get_secret_value()
            # httpx would fail on such a header with an error quoting it: refuse before sending.
            if not (key.isascii() and key.isprintable()) or " " in key:
                where = self.key_hint or "the profile's API key"
                raise BackendError(
                    "auth", f"The API key in {where} has spaces or characters that cannot be sent."
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers


def http_error(
    target: _Target,
    status: int,
    message: str,
    kind: ErrorKind,
    *,
    retry_after: float | None = None,
    attempts: int = 1,
) -> BackendError:
    """A user-facing error for an HTTP status; ``message`` is the provider's (may be empty)."""
    detail = f"HTTP {status}: {target.scrub(message)}" if message else f"HTTP {status}"
    text = _status_text(target, kind, detail, retry_after, attempts) + _proxy_hint(target)
    return BackendError(kind, text, status=status, retry_after=retry_after)


def _proxy_hint(target: _Target) -> str:
    """For a server on this machine reached through a proxy: the proxy can seldom reach it."""
    if target.proxy is None or not is_loopback(target.base_url):
        return ""
    host = urlsplit(target.base_url).hostname or "localhost"
    return (
        f" The request went through the proxy {target.proxy.shown} ({target.proxy.source}), "
        f"which cannot reach {host} on this machine: add {host} to NO_PROXY "
        "(e.g. NO_PROXY=localhost,127.0.0.1,::1) so that it is reached directly."
    )


def _status_text(
    target: _Target, kind: ErrorKind, detail: str, retry_after: float | None, attempts: int
) -> str:
    who, base = target.who, target.base_url
    if kind == "auth":
        return f"{who} refused the request ({detail}). {_key_advice(target)}"
    if kind == "not_found" and target.model is None:
        return f"{base}/models was not found ({detail}): check baseUrl (it usually ends in /v1)."
    if kind == "not_found":
        return (
            f"{who} was not found at {base} ({detail}): the model id is unknown or baseUrl is "
            f"wrong. List the available models with GET {base}/models (fastedit-lsp doctor does)."
        )
    if kind == "bad_request":
        return f"{who} refused the request ({detail}). Check the profile's model and settings."
    if kind == "rate_limit":
        pause = f" Calls to it are paused for {format_seconds(retry_after)}." if retry_after else ""
        return f"{who} is rate-limited ({detail}).{pause} Wait, or switch profile."
    if kind == "quota":
        return (
            f"{who} is out of quota or credit ({detail}). Check your {target.provider} plan and "
            "billing; retrying will not help."
        )
    if kind == "server":
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return f"{who} had a server error ({detail}){tries}. Try again later, or switch profile."
    if kind == "timeout":
        return f"{who} timed out on the provider's side ({detail}). Try again."
    return (
        f"{who} answered with an unexpected {detail} (redirects are not followed). "
        f"Check baseUrl ({base})."
    )


def _key_advice(target: _Target) -> str:
    where = target.key_hint or "the profile's apiKeyEnv variable or FASTEDIT_<PROFILE>_API_KEY"
    if target.api_key is None:
        return f"No API key is set: put one in {where}."
    return f"The API key is wrong or lacks access to this model: check {where}."


def transport_error(
    exc: Exception, target: _Target, *, timeout_s: float, deltas: int
) -> BackendError:
    """A user-facing error for an httpx exception, after ``deltas`` text deltas arrived."""
    kind, text = _transport_text(exc, target, timeout_s, deltas)
    return BackendError(kind, text + _proxy_hint(target))


def system_reason(exc: BaseException) -> str | None:
    """The system's words for a failed connection, found under the library's wrappers (anyio
    says "All connection attempts failed" around "[Errno 111] Connection refused")."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, socket.gaierror):
            return str(current)
        errno = current.errno if isinstance(current, OSError) else None
        if errno is not None and errno > 0 and not isinstance(current, ssl.SSLError):
            return f"[Errno {errno}] {os.strerror(errno)}"
        current = current.__cause__ or current.__context__
    return None


def certificate_problem(exc: BaseException) -> str | None:
    """The certificate error behind a failed connection (``ssl``'s words), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return getattr(current, "verify_message", None) or str(current)
        current = current.__cause__ or current.__context__
    text = str(exc)
    return text if "CERTIFICATE_VERIFY_FAILED" in text else None


def _certificate_text(problem: str, target: _Target) -> str:
    host = urlsplit(target.base_url).hostname or target.base_url
    through = f" (through the proxy {target.proxy.shown})" if target.proxy is not None else ""
    return (
        f"The TLS certificate of {host}{through} is not trusted: {problem}. If the server uses "
        "a private CA, or your network inspects TLS, trust its CA: set network.caFile to the "
        "CA certificate's PEM file (added to the default trust), or SSL_CERT_FILE / "
        "SSL_CERT_DIR (they replace the default trust) in the server's environment."
    )


def _transport_text(
    exc: Exception, target: _Target, timeout_s: float, deltas: int
) -> tuple[ErrorKind, str]:
    who, base = target.who, target.base_url
    reason = target.scrub(system_reason(exc) or str(exc) or type(exc).__name__)
    if isinstance(exc, httpx.ConnectTimeout):
        connect_s = min(timeout_s, 5.0)
        return "timeout", f"Could not connect to {base} within {connect_s:g} s. Check the network."
    if isinstance(exc, httpx.ReadTimeout):
        return "timeout", f"{who} sent no data for {timeout_s:g} s (timeoutMs){_after(deltas)}."
    if isinstance(exc, httpx.TimeoutException):
        return "timeout", f"{who} timed out ({type(exc).__name__}){_after(deltas)}."
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.ProxyError) and (
        problem := certificate_problem(exc)
    ):
        return "connect", _certificate_text(target.scrub(problem), target)
    if isinstance(exc, httpx.ProxyError) and target.proxy is not None:
        return "connect", (
            f"The proxy {target.proxy.shown} ({target.proxy.source}) refused to reach {base} "
            f"({reason}). Check the proxy, or exempt the host in NO_PROXY."
        )
    if isinstance(exc, httpx.ConnectError) and target.proxy is not None:
        return "connect", (
            f"Cannot connect to {base} through the proxy {target.proxy.shown} "
            f"({target.proxy.source}): {reason}. Is the proxy up?"
        )
    if isinstance(exc, httpx.ConnectError):
        return "connect", f"Cannot connect to {base} ({reason}). Is the server up, baseUrl right?"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        if deltas:
            return "dropped", (
                f"The connection to {who} dropped after {deltas} text deltas: the answer is "
                "incomplete. Try again."
            )
        return "dropped", f"The connection to {who} closed before an answer ({reason}). Try again."
    if isinstance(exc, httpx.DecodingError):
        return "protocol", f"{who} sent a body that could not be decoded ({reason})."
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return "connect", f"baseUrl {base!r} is not a usable URL ({reason}); use http(s)://host/v1."
    return "connect", f"Cannot reach {base} ({type(exc).__name__}: {reason})."


def _after(deltas: int) -> str:
    return f"; the answer stopped after {deltas} text deltas" if deltas else ""


def error_details(body: bytes, content_type: str) -> tuple[str, str]:
    """(message, lower-case code and type) from an error body: JSON, plain text, HTML or empty."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return "", ""
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        # OpenAI nests ``{"error": {...}}``; Cerebras sends message/type/code at the top level.
        error = obj["error"] if obj.get("error") is not None else obj
        labels = ""
        if isinstance(error, dict):
            labels = " ".join(str(error.get(k) or "") for k in ("code", "type")).lower()
        return error_text(error), labels
    if "html" in content_type.lower() or text.startswith("<"):
        return "", ""  # a proxy's error page: the status says more than its markup
    return error_text(text), ""


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of the body; a body that fails to arrive counts as empty."""
    buf = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            buf += chunk
            if len(buf) >= limit:
                break
    except httpx.HTTPError:
        pass  # the status alone still makes a useful message
    return bytes(buf[:limit])


@dataclass
class _StreamState:
    events: int = 0
    done: bool = False
    #: The body's first bytes, kept until an event arrives: a body that is not an event stream
    #: (a bare JSON error on a 200) is read for the provider's message.
    head: bytes = b""
    #: Holds a high surrogate that ended a delta until its low half arrives in the next.
    surrogates: SurrogateJoiner = field(default_factory=SurrogateJoiner)


@dataclass(frozen=True)
class _Call:
    """One kind of streamed POST: where it goes, what it sends, how its events read."""

    url: str
    body: dict[str, Any]
    parse: Callable[[str], ChatChunk]
    #: The FIM dialect, for its 404 message; None for chat.
    fim: FimKind | None = None
    #: The speed tier's fields in ``body`` (chat only), taken out again if refused.
    tier: TierFields | None = None


class OpenAICompatibleBackend:
    """A :class:`~.base.Backend` over any OpenAI-compatible ``/chat/completions`` endpoint.

    :meth:`fim_stream` reaches the same server's fill-in-the-middle endpoint, when it has one.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        provider: Provider,
        base_url: str,
        model: str,
        api_key: SecretStr | None,
        timeout_ms: int,
        rate_limits: RateLimits,
        reasoning_effort: str | None = None,
        retries: int = 2,
        key_hint: str | None = None,
        backoff: Callable[[int], float] = jittered_backoff,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        profile: str | None = None,
        network: Network | None = None,
        speed_tier: str | None = None,
        memory: SessionMemory | None = None,
    ) -> None:
        self.provider: str = provider
        self.model: str = model
        self.base_url = base_url.rstrip("/")
        self._client = client
        self._preset = PRESETS[provider]
        self._target = _Target(
            provider,
            self.base_url,
            model,
            _usable_key(api_key),
            key_hint,
            network,
        )
        self._reasoning_effort = reasoning_effort
        self._timeout_s = timeout_ms / 1000
        self._rate_limits = rate_limits
        self._rate_key = rate_key(base_url, model)
        self._retries = retries
        self._backoff = backoff
        self._clock = clock
        self._wall_clock = wall_clock
        #: The profile's name (``fast``, ``standard``), for messages naming its settings.
        self._profile = profile
        #: The profile's ``speedTier`` (sent as ``service_tier``), and what the session learnt.
        self._tier = speed_tier
        self._memory = memory if memory is not None else SessionMemory()

    def __repr__(self) -> str:
        key = "set" if self._target.api_key is not None else "none"
        return (
            f"OpenAICompatibleBackend(provider={self.provider!r}, base_url={self.base_url!r}, "
            f"model={self.model!r}, api_key={key})"
        )

    def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncGenerator[str, None]:
        """Yield the chat answer's text deltas (see :meth:`_stream` for the guarantees)."""
        body = build_chat_body(
            request, model=self.model, preset=self._preset, reasoning_effort=self._reasoning_effort
        )
        tier = None
        if self._tier:
            info.tier_asked = self._tier
            if self._rate_key in self._memory.no_tier:
                info.tier_served = "standard"
            else:
                tier = tier_fields(self.provider, "chat", self._tier)
                body.update(tier.body)
        url = f"{self.base_url}/chat/completions"
        return self._stream(_Call(url, body, parse_chat_chunk, tier=tier), info)

    def fim_stream(
        self, request: FimRequest, kind: FimKind, info: StreamInfo
    ) -> AsyncGenerator[str, None]:
        """Yield the text to insert between ``request.prefix`` and ``request.suffix``.

        Over the ``kind`` dialect (:mod:`.fim`), with exactly the guarantees of :meth:`stream`.
        """
        body = build_fim_body(kind, request, model=self.model, preset=self._preset)
        url = fim_endpoint(kind, fim_base_url(self._preset, self.base_url))
        return self._stream(_Call(url, body, lambda data: parse_fim_chunk(kind, data), kind), info)

    async def _stream(self, call: _Call, info: StreamInfo) -> AsyncGenerator[str, None]:
        """Yield text deltas; retry a 5xx up to ``retries`` times, only before any text.

        Nothing is sent while the (baseUrl, model) is blocked by an earlier 429.
        """
        self._rate_limits.check(self._rate_key, self._clock())
        info.model = self.model
        attempt = 1
        while True:
            try:
                # aclosing: closing this generator must close the HTTP stream now, not at GC.
                async with aclosing(self._attempt(call, info, attempt)) as deltas:
                    async for text in deltas:
                        yield text
                return
            except BackendError as error:
                tier = call.tier
                if (
                    tier is not None
                    and error.kind == "bad_request"
                    and not info.deltas
                    and refuses_field(str(error), tier.name)
                ):
                    call = self._without_tier(call, tier, str(error), info)
                    continue
                if error.kind != "server" or info.deltas or attempt > self._retries:
                    raise
            await asyncio.sleep(self._backoff(attempt))
            attempt += 1

    def _without_tier(self, call: _Call, tier: TierFields, said: str, info: StreamInfo) -> _Call:
        """The call again without the refused speed tier, never sent again this session."""
        self._memory.no_tier.add(self._rate_key)
        info.tier_served = "standard"
        info.notes.append(
            f"{self._target.who} refused speedTier {self._tier} ({tier.name}): sent again "
            f"without it, and not sent again this session ({said})"
        )
        body = {k: v for k, v in call.body.items() if k not in tier.body}
        return dataclasses.replace(call, body=body, tier=None)

    async def _attempt(
        self, call: _Call, info: StreamInfo, attempt: int
    ) -> AsyncGenerator[str, None]:
        headers = self._target.headers("text/event-stream")
        headers["Content-Type"] = "application/json"
        self._target.check_base_url()
        try:
            async with open_stream(
                self._client,
                call.url,
                json_body(call.body),
                headers=headers,
                timeout_s=self._timeout_s,
                info=info,
            ) as response:
                await self._check_response(response, call, attempt)
                async with aclosing(self._read(response, call, info)) as texts:
                    async for text in texts:
                        yield text
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise transport_error(
                exc, self._target, timeout_s=self._timeout_s, deltas=info.deltas
            ) from exc

    async def _read(
        self, response: httpx.Response, call: _Call, info: StreamInfo
    ) -> AsyncGenerator[str, None]:
        """The answer's text, read at the consumer's pace (:class:`.post.PacedReads`): the text
        deltas of one read as one piece (a fast model's read holds dozens: each piece costs
        every layer above a step), those before a bad event first."""
        parser, state = SSEParser(), _StreamState()
        reads = PacedReads(response, info)
        while not state.done:
            raw = await reads.read()
            if raw is not None and not state.events and len(state.head) < SNIFF_BYTES:
                state.head += raw[: SNIFF_BYTES - len(state.head)]
            texts: list[str] = []
            failed: BackendError | None = None
            try:
                for event in self._parse(parser, raw, info, state):
                    if text := self._on_event(event, call, info, state):
                        texts.append(text)
                    if state.done:
                        break
            except BackendError as error:
                failed = error
            if texts:
                try:
                    yield texts[0] if len(texts) == 1 else "".join(texts)
                except GeneratorExit:
                    if info.linger and not state.done and not closed_by_cancel():
                        await drain(reads.chunks, info.linger)
                    raise
            if failed is not None:
                raise failed
            if raw is None:
                break
        tail = state.surrogates.flush()
        if tail:
            yield tail
        self._check_complete(state, info)
        if state.done:
            await drain(reads.chunks)

    async def _check_response(self, response: httpx.Response, call: _Call, attempt: int) -> None:
        # The status comes first: an error body is JSON or text, never an event stream.
        if not response.is_success:
            raise await self._status_error(response, call, attempt)
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" not in content_type.lower():
            message, _ = error_details(await read_capped(response, ERROR_BODY_LIMIT), content_type)
            said = f": {self._target.scrub(message)}" if message else ""
            raise BackendError(
                "protocol",
                f"{self._target.who} answered with {content_type or 'no content type'} "
                f"instead of an event stream{said}. Check that baseUrl points to an "
                "OpenAI-compatible API that streams.",
                status=response.status_code,
            )
        self._rate_limits.record_success(self._rate_key, self._clock())
        self._rate_limits.record_headroom(self._rate_key, response.headers)

    async def _status_error(
        self, response: httpx.Response, call: _Call, attempt: int
    ) -> BackendError:
        body = await read_capped(response, ERROR_BODY_LIMIT)
        message, labels = error_details(body, response.headers.get("content-type", ""))
        kind = status_kind(response.status_code, labels)
        if kind == "not_found" and call.fim is not None:
            return self._fim_not_found(call, response.status_code, message)
        retry_after = None
        if kind == "rate_limit":
            reset = reset_after(response.headers, wall_now=self._wall_clock())
            retry_after = self._rate_limits.record_429(self._rate_key, self._clock(), reset)
        return http_error(
            self._target,
            response.status_code,
            message,
            kind,
            retry_after=retry_after,
            attempts=attempt,
        )

    def _parse(
        self, parser: SSEParser, raw: bytes | None, info: StreamInfo, state: _StreamState
    ) -> list[SSEEvent]:
        try:
            return parser.finish() if raw is None else parser.feed(raw)
        except BackendError as error:
            if not state.events and (said := self._said(state.head)):
                raise said from None
            raise self._malformed(error.message, info) from None

    def _said(self, head: bytes) -> BackendError | None:
        """The provider's error in a 200 body that is not an event stream: a JSON object with
        an ``error`` (or a top-level ``message`` / ``detail``), as gateways send them."""
        try:
            obj = json.loads(head.decode("utf-8", "replace"))
        except ValueError:
            return None
        if not isinstance(obj, dict) or not any(k in obj for k in ("error", "message", "detail")):
            return None
        message, labels = error_details(head, "application/json")
        if not message:
            return None
        kind: ErrorKind = "quota" if _is_quota(labels) else "protocol"
        return BackendError(
            kind,
            f"{self._target.who} answered with an error instead of an event stream: "
            f"{self._target.scrub(message)}" + _proxy_hint(self._target),
        )

    def _fim_not_found(self, call: _Call, status: int, message: str) -> BackendError:
        # Most providers have no FIM endpoint at all (Groq has no /completions, only Mistral has
        # /fim/completions), so a 404 here usually calls for a setting: name it.
        detail = f"HTTP {status}: {self._target.scrub(message)}" if message else f"HTTP {status}"
        where = f"profiles.{self._profile}.fim" if self._profile else "the profile's fim setting"
        return BackendError(
            "not_found",
            f"{self._target.who} was not found at {call.url} ({detail}): the provider may not "
            f'support fim "{call.fim}", or not for this model. Set {where} to "chat", which works '
            "with any chat model.",
            status=status,
        )

    def _on_event(self, event: SSEEvent, call: _Call, info: StreamInfo, state: _StreamState) -> str:
        """Apply one event to ``info`` and ``state``; return its text delta (possibly empty)."""
        state.events += 1
        if event.event == "error":  # some proxies send errors as a named event
            raise self._stream_error(_error_event_text(event.data), info)
        try:
            chunk = call.parse(event.data)
        except BackendError as error:
            raise self._malformed(error.message, info) from None
        # ``[DONE]`` carries nothing, but llama.cpp's last chunk carries the finish and usage.
        state.done = chunk.done
        if chunk.error is not None:
            raise self._stream_error(chunk.error, info)
        if chunk.model:
            info.model = chunk.model
        if chunk.finish_reason:
            info.finish_reason = chunk.finish_reason
            info.stop_reason = stop_reason(chunk.finish_reason)
            info.stop_detail = chunk.finish_reason
        if chunk.service_tier is not None and call.tier is not None and self._tier:
            info.tier_served = served_tier(self._tier, call.tier, chunk.service_tier)
        if chunk.completion_tokens is not None:
            info.completion_tokens = chunk.completion_tokens
        if chunk.prediction_tokens is not None:
            accepted, rejected = chunk.prediction_tokens
            info.accepted_prediction_tokens = accepted
            info.rejected_prediction_tokens = rejected
        text = chunk.text
        if text:
            info.deltas += 1
            info.last_delta_at = self._clock()
            if info.first_delta_at is None:
                info.first_delta_at = info.last_delta_at
            if state.surrogates.held or "\ud800" <= text[-1] <= "\udbff":
                text = state.surrogates.join(text)
        return text

    def _check_complete(self, state: _StreamState, info: StreamInfo) -> None:
        if state.done or info.finish_reason is not None:
            return
        who = self._target.who
        if state.events == 0 and (said := self._said(state.head)):
            raise said
        if state.events == 0:
            raise BackendError(
                "protocol",
                f"{who} ended the stream without sending any event. Check that baseUrl points "
                "to an OpenAI-compatible API.",
            )
        raise BackendError(
            "dropped",
            f"The stream from {who} ended before the model finished{_after(info.deltas)}. "
            "Try again.",
        )

    def _malformed(self, problem: str, info: StreamInfo) -> BackendError:
        # One bad event ends the stream: text around a corrupt event cannot be trusted.
        return BackendError(
            "protocol",
            f"{self._target.who} sent a malformed stream ({self._target.scrub(problem)})"
            f"{_after(info.deltas)}. If this persists, check that baseUrl points to an "
            "OpenAI-compatible API.",
        )

    def _stream_error(self, message: str, info: StreamInfo) -> BackendError:
        return BackendError(
            "protocol",
            f"{self._target.who} reported an error mid-stream: {self._target.scrub(message)}"
            f"{_after(info.deltas)}. Try again, or switch profile.",
        )


async def list_models(
    client: httpx.AsyncClient,
    base_url: str,
    api_key: SecretStr | None,
    *,
    provider: str = "openai-compatible",
    key_hint: str | None = None,
    timeout_ms: int = 10_000,
    network: Network | None = None,
) -> list[str]:
    """The model ids served at ``base_url`` (``GET /models``), in the server's order."""
    base = base_url.rstrip("/")
    target = _Target(provider, base, None, _usable_key(api_key), key_hint, network)
    timeout_s = timeout_ms / 1000
    try:
        async with client.stream(
            "GET",
            target.url("/models"),
            headers=_models_headers(target),
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)),
        ) as response:
            if not response.is_success:
                raise await _models_status_error(response, target)
            body = await read_capped(response, MODELS_BODY_LIMIT)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise transport_error(exc, target, timeout_s=timeout_s, deltas=0) from exc
    return _model_ids(body, target)


def _models_headers(target: _Target) -> dict[str, str]:
    """Anthropic's model list takes the key as ``x-api-key``, with its version header."""
    headers = target.headers("application/json")
    if target.provider == "anthropic":
        key = headers.pop("Authorization", None)
        if key is not None:
            headers["x-api-key"] = key.removeprefix("Bearer ")
        headers["anthropic-version"] = "2023-06-01"
    return headers


async def _models_status_error(response: httpx.Response, target: _Target) -> BackendError:
    body = await read_capped(response, ERROR_BODY_LIMIT)
    message, labels = error_details(body, response.headers.get("content-type", ""))
    kind = status_kind(response.status_code, labels)
    retry_after = None
    if kind == "rate_limit":
        retry_after = reset_after(response.headers, wall_now=time.time())
    return http_error(target, response.status_code, message, kind, retry_after=retry_after)


def _model_ids(body: bytes, target: _Target) -> list[str]:
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    # OpenAI shape ``{"data": [{"id": ...}]}``; some local servers use ``models`` or a bare list.
    entries = obj.get("data", obj.get("models")) if isinstance(obj, dict) else obj
    if not isinstance(entries, list):
        raise BackendError(
            "protocol",
            f"{target.base_url}/models did not return a model list. Check that baseUrl points "
            "to an OpenAI-compatible API.",
        )
    ids: list[str] = []
    for entry in entries:
        name = entry if isinstance(entry, str) else _entry_id(entry)
        if name and name not in ids:
            ids.append(name)
    return ids


def _entry_id(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return None
    for field_name in ("id", "model", "name"):
        value = entry.get(field_name)
        if isinstance(value, str) and value:
            return value
    return None


def _error_event_text(data: str) -> str:
    try:
        obj = json.loads(data)
    except ValueError:
        return error_text(data)
    if isinstance(obj, dict) and obj.get("error") is not None:
        return error_text(obj["error"])
    return error_text(obj)


def _usable_key(api_key: SecretStr | None) -> SecretStr | None:
    # An empty variable is a missing key (sending "Bearer " only earns a confusing 401), and the
    # newline a key file often ends with is not part of the key.
    if api_key is None or not api_key.get_secret_value().strip():
        return None
    return SecretStr(api_key.get_secret_value().strip())
