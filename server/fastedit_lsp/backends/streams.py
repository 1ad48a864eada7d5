"""The Responses and Messages APIs as backends: one streamed POST per job.

:class:`ApiBackend` speaks OpenAI's Responses API (``POST {baseUrl}/responses``) or Anthropic's
Messages API (``POST {baseUrl}/messages``) behind the pipeline's one stream interface
(:class:`~.base.Backend`), over the server's one HTTP client, opened and read where the chat
backend opens and reads its streams (:mod:`.post`: the transport is chosen in one place), and the
pure SSE
parser (:mod:`.sse`); bodies and events are the pure :mod:`.formats`. It gives the guarantees of
the chat backend (rate limits, a 5xx retried before any text, errors that carry the provider's
message as a sentence, the key never shown) and adds:

* the profile's ``speedTier``, sent the provider's way (:mod:`.tiers`); the tier served is read
  from the response. A 400 naming the field: sent again without it, once, never again for the
  (baseUrl, model) this session, and the job's reason says so;
* stop sequences the format cannot carry, cut from the stream (:class:`~.formats.StopScanner`);
* a normalised stop reason (``StreamInfo.stop_reason``) and the provider's word.

:class:`ResponsesFallback` is a chat-completions profile whose model turns out to be served by
the Responses API only (OpenAI's 400 "only supported in v1/responses"): the profile switches to
the Responses API once, says so, and remembers it for the session.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import Any

import httpx
from pydantic import SecretStr

from .base import BackendError, ChatRequest, StreamInfo, stop_reason
from .fim import FimKind, FimRequest
from .formats import (
    ANTHROPIC_VERSION,
    Step,
    StopScanner,
    anthropic_stops,
    build_messages_body,
    build_responses_body,
    messages_step,
    responses_step,
)
from .network import Network
from .openai import (
    ERROR_BODY_LIMIT,
    OpenAICompatibleBackend,
    _after,
    _Target,
    _usable_key,
    error_details,
    http_error,
    jittered_backoff,
    json_body,
    read_capped,
    status_kind,
    transport_error,
)
from .post import PacedReads, drain, open_stream
from .ratelimit import RateLimits, rate_key, reset_after
from .sse import SSEParser
from .tiers import Api, SessionMemory, TierFields, refuses_field, served_tier, tier_fields

#: A 5xx's ``retry-after`` longer than this is not waited for: the error says it instead.
MAX_RETRY_WAIT_S = 5.0


class _StatusError(BackendError):
    """A non-2xx answer, with the provider's own message (to see what a 400 names)."""

    def __init__(self, error: BackendError, provider_message: str) -> None:
        super().__init__(
            error.kind, error.message, status=error.status, retry_after=error.retry_after
        )
        self.provider_message = provider_message


class ApiBackend:
    """A :class:`~.base.Backend` over the Responses API or the Messages API."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        api: Api,
        provider: str,
        base_url: str,
        model: str,
        api_key: SecretStr | None,
        timeout_ms: int,
        rate_limits: RateLimits,
        memory: SessionMemory,
        reasoning_effort: str | None = None,
        speed_tier: str | None = None,
        key_hint: str | None = None,
        profile: str | None = None,
        fim: OpenAICompatibleBackend | None = None,
        retries: int = 2,
        backoff: Callable[[int], float] = jittered_backoff,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        network: Network | None = None,
    ) -> None:
        if api == "chat":
            raise ValueError("ApiBackend speaks the Responses and Messages APIs, not chat")
        self.api: Api = api
        self.provider = provider
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._client = client
        self._target = _Target(
            provider,
            self.base_url,
            model,
            _usable_key(api_key),
            key_hint,
            network,
        )
        self._timeout_s = timeout_ms / 1000
        self._rate_limits = rate_limits
        self._rate_key = rate_key(base_url, model)
        self._memory = memory
        self._reasoning_effort = reasoning_effort
        self._tier = speed_tier
        self._profile = profile
        self._fim = fim
        self._retries = retries
        self._backoff = backoff
        self._clock = clock
        self._wall_clock = wall_clock

    def __repr__(self) -> str:
        key = "set" if self._target.api_key is not None else "none"
        return (
            f"ApiBackend(api={self.api!r}, provider={self.provider!r}, "
            f"base_url={self.base_url!r}, model={self.model!r}, api_key={key})"
        )

    @property
    def path(self) -> str:
        return "/responses" if self.api == "responses" else "/messages"

    def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncGenerator[str, None]:
        """Yield the answer's text deltas; raise :class:`BackendError` on failure."""
        return self._stream(request, info)

    def fim_stream(
        self, request: FimRequest, kind: FimKind, info: StreamInfo
    ) -> AsyncGenerator[str, None]:
        """Fill-in-the-middle goes through the profile's ``fim`` dialect, not this API."""
        if self._fim is None:
            where = f"profiles.{self._profile}.fim" if self._profile else "the profile's fim"
            raise BackendError(
                "bad_request",
                f"{self._target.who} has no fill-in-the-middle endpoint over the {self.api} API: "
                f'set {where} to "chat".',
            )
        return self._fim.fim_stream(request, kind, info)

    def headers(self, tier: TierFields) -> dict[str, str]:
        """The request's headers (the key as the API wants it, the tier's beta header)."""
        headers = self._target.headers("text/event-stream")
        headers["Content-Type"] = "application/json"
        if self.api == "messages":
            key = headers.pop("Authorization", None)
            if key is not None:
                headers["x-api-key"] = key.removeprefix("Bearer ")
            headers["anthropic-version"] = ANTHROPIC_VERSION
        headers.update(tier.headers)
        return headers

    def body(self, request: ChatRequest, tier: TierFields) -> dict[str, Any]:
        build = build_responses_body if self.api == "responses" else build_messages_body
        return build(
            request, model=self.model, reasoning_effort=self._reasoning_effort, tier=tier.body
        )

    def _tier_sent(self, info: StreamInfo) -> TierFields:
        if not self._tier:
            return TierFields()
        info.tier_asked = self._tier
        if self._rate_key in self._memory.no_tier:
            info.tier_served = "standard"
            return TierFields()
        return tier_fields(self.provider, self.api, self._tier)

    async def _stream(self, request: ChatRequest, info: StreamInfo) -> AsyncGenerator[str, None]:
        self._rate_limits.check(self._rate_key, self._clock())
        info.model = self.model
        tier = self._tier_sent(info)
        # What the wire cannot stop at, the backend cuts.
        stops = request.stop if self.api == "responses" else anthropic_stops(request.stop)[1]
        attempt = 1
        while True:
            scanner = StopScanner(stops)
            try:
                async with aclosing(self._attempt(request, tier, info, scanner)) as deltas:
                    async for text in deltas:
                        yield text
                return
            except _StatusError as error:
                if info.deltas:
                    raise
                if tier.name and refuses_field(error.provider_message, tier.name):
                    tier = self._refused(tier, error, info)
                    continue
                if error.kind != "server" or attempt > self._retries:
                    raise
                delay = self._backoff(attempt)
                if error.retry_after is not None:
                    if error.retry_after > MAX_RETRY_WAIT_S:
                        raise
                    delay = error.retry_after
            except BackendError as error:
                if error.kind != "server" or info.deltas or attempt > self._retries:
                    raise
                delay = self._backoff(attempt)
            await asyncio.sleep(delay)
            attempt += 1

    def _refused(self, tier: TierFields, error: _StatusError, info: StreamInfo) -> TierFields:
        self._memory.no_tier.add(self._rate_key)
        info.tier_served = "standard"
        info.notes.append(
            f"{self._target.who} refused speedTier {self._tier} ({tier.name}: "
            f"{self._target.scrub(error.provider_message)}): sent again without it, and not "
            "sent again this session"
        )
        return TierFields()

    async def _attempt(
        self, request: ChatRequest, tier: TierFields, info: StreamInfo, scanner: StopScanner
    ) -> AsyncGenerator[str, None]:
        url = f"{self.base_url}{self.path}"
        step_of = responses_step if self.api == "responses" else messages_step
        self._target.check_base_url()
        try:
            async with open_stream(
                self._client,
                url,
                json_body(self.body(request, tier)),
                headers=self.headers(tier),
                timeout_s=self._timeout_s,
                info=info,
            ) as response:
                await self._check_response(response)
                parser = SSEParser()
                reads = PacedReads(response, info)
                events, done = 0, False
                while not done:
                    raw = await reads.read()
                    try:
                        parsed = parser.finish() if raw is None else parser.feed(raw)
                    except BackendError as error:
                        raise self._malformed(error.message, info) from None
                    for event in parsed:
                        events += 1
                        try:
                            step = step_of(event)
                        except BackendError as error:
                            raise self._malformed(error.message, info) from None
                        text = self._apply(step, info, tier)
                        if step.text:
                            if out := scanner.feed(text):
                                yield out
                            if scanner.stopped:
                                info.stop_reason, info.stop_detail = "stop", "stop_sequence"
                                done = True
                                break
                        if step.done:
                            done = True
                            break
                    if raw is None:
                        break
                if not done:
                    raise self._incomplete(events, info)
                if tail := scanner.finish():
                    yield tail
                if not scanner.stopped:  # the model's last event: read the body's end, so the
                    await drain(reads.chunks)  # connection is kept for the next job
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise transport_error(
                exc, self._target, timeout_s=self._timeout_s, deltas=info.deltas
            ) from exc

    def _apply(self, step: Step, info: StreamInfo, tier: TierFields) -> str:
        """Apply one step to ``info``; return its text."""
        if step.error is not None:
            raise BackendError(
                step.error_kind if not info.deltas else "protocol",
                f"{self._target.who} reported an error mid-stream: "
                f"{self._target.scrub(step.error)}{_after(info.deltas)}. Try again, or switch "
                "profile.",
            )
        if step.model:
            info.model = step.model
        if step.tier and self._tier:
            info.tier_served = served_tier(self._tier, tier, step.tier)
        if step.output_tokens is not None:
            info.completion_tokens = step.output_tokens
        if step.stop and info.stop_detail != "refusal":
            info.finish_reason = info.stop_detail = step.stop
            info.stop_reason = stop_reason(step.stop)
        if step.text:
            info.deltas += 1
            info.last_delta_at = self._clock()
            if info.first_delta_at is None:
                info.first_delta_at = info.last_delta_at
        return step.text

    async def _check_response(self, response: httpx.Response) -> None:
        if not response.is_success:
            body = await read_capped(response, ERROR_BODY_LIMIT)
            message, labels = error_details(body, response.headers.get("content-type", ""))
            kind = status_kind(response.status_code, labels)
            retry_after = None
            if kind == "rate_limit":
                reset = reset_after(response.headers, wall_now=self._wall_clock())
                retry_after = self._rate_limits.record_429(self._rate_key, self._clock(), reset)
            elif kind == "server":
                retry_after = reset_after(response.headers, wall_now=self._wall_clock())
            error = http_error(
                self._target, response.status_code, message, kind, retry_after=retry_after
            )
            raise _StatusError(error, message)
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" not in content_type.lower():
            # A provider's error may come as a bare JSON object on a 200: read it.
            message, _ = error_details(await read_capped(response, ERROR_BODY_LIMIT), content_type)
            said = f": {self._target.scrub(message)}" if message else ""
            raise BackendError(
                "protocol",
                f"{self._target.who} answered with {content_type or 'no content type'} instead "
                f"of an event stream{said}. Check that baseUrl points to the {self.api} API.",
                status=response.status_code,
            )
        self._rate_limits.record_success(self._rate_key, self._clock())
        self._rate_limits.record_headroom(self._rate_key, response.headers)

    def _incomplete(self, events: int, info: StreamInfo) -> BackendError:
        who = self._target.who
        if events == 0:
            return BackendError(
                "protocol",
                f"{who} ended the stream without sending any event. Check that baseUrl points "
                f"to the {self.api} API.",
            )
        return BackendError(
            "dropped",
            f"The stream from {who} ended before the model finished{_after(info.deltas)}. "
            "Try again.",
        )

    def _malformed(self, problem: str, info: StreamInfo) -> BackendError:
        return BackendError(
            "protocol",
            f"{self._target.who} sent a malformed stream ({self._target.scrub(problem)})"
            f"{_after(info.deltas)}.",
        )


class ResponsesFallback:
    """A chat-completions profile that moves to the Responses API when its model is served
    there only (a 400 "only supported in v1/responses"): once, said, kept for the session."""

    def __init__(
        self,
        chat: OpenAICompatibleBackend,
        responses: Callable[[], ApiBackend],
        memory: SessionMemory,
        *,
        profile: str,
        log: Callable[[str], None],
    ) -> None:
        self._chat = chat
        self._responses = responses
        self._memory = memory
        self._profile = profile
        self._log = log
        self.provider = chat.provider
        self.model = chat.model
        self._key = rate_key(chat.base_url, chat.model)

    def stream(self, request: ChatRequest, info: StreamInfo) -> AsyncGenerator[str, None]:
        return self._stream(request, info)

    def fim_stream(
        self, request: FimRequest, kind: FimKind, info: StreamInfo
    ) -> AsyncGenerator[str, None]:
        return self._chat.fim_stream(request, kind, info)

    async def _stream(self, request: ChatRequest, info: StreamInfo) -> AsyncGenerator[str, None]:
        from .tiers import responses_only

        if self._key not in self._memory.responses_only:
            try:
                async with aclosing(self._chat.stream(request, info)) as deltas:
                    async for text in deltas:
                        yield text
                return
            except BackendError as error:
                if error.kind != "bad_request" or info.deltas or not responses_only(str(error)):
                    raise
            self._memory.responses_only.add(self._key)
            note = (
                f"profiles.{self._profile}: {self.model} is served by the Responses API only: "
                f"this profile uses it (api responses) for the rest of the session; set "
                f'profiles.{self._profile}.api = "responses" to start there'
            )
            info.notes.append(note)
            self._log(note)
        async with aclosing(self._responses().stream(request, info)) as deltas:
            async for text in deltas:
                yield text
