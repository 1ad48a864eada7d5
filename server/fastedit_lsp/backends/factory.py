"""The server's model backends: one HTTP client, the rate limits, the breakers, the model list.

The only owner of httpx state. httpx is imported on first use (~90 ms, after the ``initialize``
reply); a backend is made per job or completion around the one shared client, so connections
are pooled and kept alive between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .base import NoModelError

if TYPE_CHECKING:
    import httpx

    from ..settings import ResolvedProfile
    from .breaker import CircuitBreakers
    from .openai import OpenAICompatibleBackend
    from .ratelimit import RateLimits


def new_http_client() -> httpx.AsyncClient:
    """The server's HTTP client. Safe to call from a thread (the warm-up does): it touches no
    event loop. Its TLS context reads its trusted certificates at the first https handshake
    (:mod:`.trust`)."""
    import httpx

    from .corked import transport

    limits = httpx.Limits(max_connections=20, max_keepalive_connections=10)
    return httpx.AsyncClient(
        timeout=httpx.Timeout(30.0, connect=5.0),
        limits=limits,
        trust_env=False,
        transport=transport(limits),
    )


def warm_up_http() -> httpx.AsyncClient:
    """Import what the first request imports lazily (httpcore's anyio backend, anyio's asyncio
    backend: ~60 ms) and make the HTTP client; for the warm-up's thread."""
    import anyio._backends._asyncio  # noqa: F401
    import httpcore._backends.anyio  # noqa: F401

    from . import openai  # noqa: F401

    return new_http_client()


class Backends:
    """Makes model backends; keeps what outlives one call (connections, limits, breakers)."""

    def __init__(self, log: Callable[[str], None] = lambda _message: None) -> None:
        #: Where "using model X (first listed)" goes (the client's log).
        self._log = log
        self._http: httpx.AsyncClient | None = None
        self._rate_limits: RateLimits | None = None
        self._breakers: CircuitBreakers | None = None
        #: Model ids discovered from /v1/models, per ``profile:baseUrl`` and per profile.
        self.discovered: dict[str, str] = {}

    @property
    def http(self) -> httpx.AsyncClient:
        """The one HTTP client (created on first use, or by the warm-up)."""
        if self._http is None:
            self._http = new_http_client()
        return self._http

    def adopt(self, client: httpx.AsyncClient) -> None:
        """Take the client the warm-up made (off the event loop), unless one exists already."""
        if self._http is None:
            self._http = client

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

    async def backend(self, profile: ResolvedProfile) -> OpenAICompatibleBackend:
        """The profile's model backend (the model id asked from /v1/models once, if unset)."""
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
        return OpenAICompatibleBackend(
            self.http,
            provider=profile.provider,
            base_url=profile.base_url,
            model=model,
            api_key=profile.api_key,
            timeout_ms=profile.settings.timeout_ms,
            rate_limits=self.rate_limits,
            reasoning_effort=profile.settings.reasoning_effort,
            key_hint=profile.key_hint,
            profile=profile.name,
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
        """The HTTP pool's connections: open, and of those, idle (kept alive for the next job)."""
        pool = getattr(getattr(self._http, "_transport", None), "_pool", None)
        connections = list(getattr(pool, "connections", []))
        open_ = [c for c in connections if not c.is_closed()]
        return {"open": len(open_), "idle": sum(1 for c in open_ if c.is_idle())}

    async def close(self) -> None:
        """Close the HTTP client (a later call opens a new one)."""
        from .corked import discard_opened_ahead

        await discard_opened_ahead()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def open_ahead(self, profiles: Iterable[ResolvedProfile]) -> None:
        """Open a connection to each profile's model server ahead of its first request (the
        warm-up's; see :func:`.corked.open_ahead`)."""
        from .corked import open_ahead

        for profile in profiles:
            if not profile.is_local and profile.base_url:
                await open_ahead(profile.base_url)
