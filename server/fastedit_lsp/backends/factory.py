"""The server's model backends: one wire, the rate limits, the breakers, the model list.

The only owner of connections: the model streams' (:class:`~.wire.Wire`: chat completions, FIM,
the Responses and Messages APIs, each opened through :func:`.openai.open_stream`) and httpx's,
which lists models (made at its first use). Both are imported on first use (after the ``initialize``
reply); a backend is made per job or completion around the one shared wire, so connections are
kept alive between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .base import NoModelError
from .tiers import SessionMemory

if TYPE_CHECKING:
    import httpx

    from ..settings import ResolvedProfile
    from .breaker import CircuitBreakers
    from .openai import OpenAICompatibleBackend
    from .ratelimit import RateLimits
    from .streams import ApiBackend, ResponsesFallback
    from .tiers import Api
    from .wire import Wire

    #: What :meth:`Backends.backend` makes: chat completions, or the Responses / Messages APIs.
    ModelBackend = OpenAICompatibleBackend | ApiBackend | ResponsesFallback


def new_http_client() -> httpx.AsyncClient:
    """The HTTP client of everything but the model streams (the model list). Its TLS context
    is the wire's, reading its trusted certificates at the first https handshake
    (:mod:`.trust`)."""
    import httpx

    from .trust import shared

    return httpx.AsyncClient(
        timeout=httpx.Timeout(30.0, connect=5.0),
        limits=httpx.Limits(max_connections=20, max_keepalive_connections=10),
        trust_env=False,
        verify=shared(),
    )


#: Providers whose chat model may turn out to be served by the Responses API only (OpenAI's own
#: 400 "only supported in v1/responses"). Others get the chat backend bare: the fallback is a
#: generator hop per token (0.5 us) and an object per job on the path to the first edit.
RESPONSES_CAPABLE = frozenset({"openai"})


class Backends:
    """Makes model backends; keeps what outlives one call (connections, limits, breakers)."""

    def __init__(self, log: Callable[[str], None] = lambda _message: None) -> None:
        #: Where "using model X (first listed)" goes (the client's log).
        self._log = log
        self._http: httpx.AsyncClient | None = None
        self._wire: Wire | None = None
        self._rate_limits: RateLimits | None = None
        self._breakers: CircuitBreakers | None = None
        #: Model ids discovered from /v1/models, per ``profile:baseUrl`` and per profile.
        self.discovered: dict[str, str] = {}
        #: Refused speed tiers and Responses-only models, for the session.
        self.memory = SessionMemory()

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client of the model list (created on first use)."""
        if self._http is None:
            self._http = new_http_client()
        return self._http

    @property
    def wire(self) -> Wire:
        """The model streams' connections (created on first use)."""
        if self._wire is None:
            from .wire import Wire

            self._wire = Wire()
        return self._wire

    @property
    def breakers(self) -> CircuitBreakers:
        if self._breakers is None:
            from .breaker import CircuitBreakers

            self._breakers = CircuitBreakers()
        return self._breakers

    @property
    def rate_limits(self) -> RateLimits:
        if self._rate_limits is None:
            from .ratelimit import RateLimits

            self._rate_limits = RateLimits()
        return self._rate_limits

    def model_of(self, profile: ResolvedProfile) -> str | None:
        """The model a profile calls: its own, or the one discovered for it."""
        return profile.model or self.discovered.get(profile.name)

    async def backend(self, profile: ResolvedProfile) -> ModelBackend:
        """The profile's model backend (the model id asked from /v1/models once, if unset),
        over the wire its ``api`` names (:func:`.tiers.default_api` when unset)."""
        assert profile.base_url is not None
        from .openai import OpenAICompatibleBackend, list_models

        model = profile.model or self.discovered.get(f"{profile.name}:{profile.base_url}")
        if model is None:
            models = await list_models(
                self.http,
                profile.base_url,
                profile.api_key,
                provider=profile.provider,
                key_hint=profile.key_hint,
            )
            if not models:
                raise NoModelError(
                    f"profiles.{profile.name}: {profile.base_url}/models lists no model; set "
                    f"profiles.{profile.name}.model"
                )
            model = models[0]
            self.discovered[f"{profile.name}:{profile.base_url}"] = model
            self.discovered[profile.name] = model
            self._log(f"profiles.{profile.name}: using model {model} (first listed)")
        chat = OpenAICompatibleBackend(
            self.wire,
            provider=profile.provider,
            base_url=profile.base_url,
            model=model,
            api_key=profile.api_key,
            timeout_ms=profile.settings.timeout_ms,
            rate_limits=self.rate_limits,
            reasoning_effort=profile.settings.reasoning_effort,
            key_hint=profile.key_hint,
            profile=profile.name,
            speed_tier=profile.settings.speed_tier,
            memory=self.memory,
        )
        api = profile.api_for(model)
        if api == "chat" and (
            profile.settings.api is not None or profile.provider not in RESPONSES_CAPABLE
        ):
            return chat

        def over(api: Api) -> ApiBackend:
            from .streams import ApiBackend

            assert profile.base_url is not None
            return ApiBackend(
                self.wire,
                api=api,
                provider=profile.provider,
                base_url=profile.base_url,
                model=model,
                api_key=profile.api_key,
                timeout_ms=profile.settings.timeout_ms,
                rate_limits=self.rate_limits,
                memory=self.memory,
                reasoning_effort=profile.settings.reasoning_effort,
                speed_tier=profile.settings.speed_tier,
                key_hint=profile.key_hint,
                profile=profile.name,
                fim=chat,
            )

        if api != "chat":
            return over(api)
        from .streams import ResponsesFallback

        # ``api`` unset: a model served by the Responses API only moves there (once, said).
        return ResponsesFallback(
            chat, lambda: over("responses"), self.memory, profile=profile.name, log=self._log
        )

    # -- circuit breakers, per (baseUrl, model) ---------------------------------------------------

    def allow(self, key: tuple[str, str], now: float) -> float | None:
        return self.breakers.allow(key, now)

    def failure(self, key: tuple[str, str], now: float) -> None:
        self.breakers.failure(key, now)

    def success(self, key: tuple[str, str]) -> None:
        self.breakers.success(key)

    def breaker_snapshot(self, now: float) -> list[Any]:
        """The breakers for ``fastedit.status`` (none before the first model call)."""
        return self._breakers.snapshot(now) if self._breakers is not None else []

    def connections(self) -> dict[str, int]:
        """The model streams' connections: open, and of those, idle (kept for the next job)."""
        return self._wire.connections() if self._wire is not None else {"open": 0, "idle": 0}

    async def close(self) -> None:
        """Close every connection (a later call opens new ones)."""
        if self._wire is not None:
            await self._wire.aclose()
            self._wire = None
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def open_ahead(self, profiles: Iterable[ResolvedProfile]) -> None:
        """Open a connection to each profile's model server ahead of its first request (the
        warm-up's; see :meth:`.wire.Wire.open_ahead`)."""
        for profile in profiles:
            if not profile.is_local and profile.base_url:
                await self.wire.open_ahead(profile.base_url)
