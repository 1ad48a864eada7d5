"""The server's model backends: one HTTP client, the rate limits, the breakers, the model list.

The only owner of connections: one ``httpx.AsyncClient`` (:func:`.network.new_client`: the
environment's proxies and trusted certificates, the ``network`` settings, timeouts, keep-alive),
made at its first use or in the warm-up, off the event loop. Every wire format (chat
completions, FIM, the Responses and Messages APIs, each opened through :func:`.post.open_stream`)
streams through it (:attr:`Backends.client`), the model list too; a backend is made per job or
completion around it, so connections are kept alive between calls.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .base import NoModelError
from .network import Network
from .tiers import SessionMemory

if TYPE_CHECKING:
    import httpx

    from ..settings import ResolvedProfile
    from .breaker import CircuitBreakers
    from .openai import OpenAICompatibleBackend
    from .ratelimit import RateLimits
    from .streams import ApiBackend, ResponsesFallback
    from .tiers import Api

    #: What :meth:`Backends.backend` makes: chat completions, or the Responses / Messages APIs.
    ModelBackend = OpenAICompatibleBackend | ApiBackend | ResponsesFallback


#: Providers whose chat model may turn out to be served by the Responses API only (OpenAI's own
#: 400 "only supported in v1/responses"). Others get the chat backend bare: the fallback is a
#: generator hop per token (0.5 us) and an object per job on the path to the first edit.
RESPONSES_CAPABLE = frozenset({"openai"})


class Backends:
    """Makes model backends; keeps what outlives one call (connections, limits, breakers)."""

    def __init__(
        self,
        log: Callable[[str], None] = lambda _message: None,
        network: Callable[[], Network] = Network,
    ) -> None:
        #: Where "using model X (first listed)" goes (the client's log).
        self._log = log
        #: The ``network`` settings now (read at each use: a change makes a new client).
        self._network = network
        self._client: httpx.AsyncClient | None = None
        self._client_network: Network | None = None
        #: Clients made for settings since changed: closed with the rest (streams may still run).
        self._retired: list[httpx.AsyncClient] = []
        #: The warm-up makes the client in a thread while the loop may ask for it.
        self._lock = threading.Lock()
        self._rate_limits: RateLimits | None = None
        self._breakers: CircuitBreakers | None = None
        #: Model ids discovered from /v1/models, per ``profile:baseUrl`` and per profile.
        self.discovered: dict[str, str] = {}
        #: Refused speed tiers and Responses-only models, for the session.
        self.memory = SessionMemory()

    @property
    def client(self) -> httpx.AsyncClient:
        """The one HTTP client of every model request, made on first use (or by the warm-up,
        :meth:`prepare`) from the ``network`` settings; raises :class:`~.base.BackendError` for
        a proxy or CA file it cannot use."""
        network = self._network()
        client = self._client
        if client is not None and network == self._client_network:
            return client
        with self._lock:
            if self._client is not None and network == self._client_network:
                return self._client
            from .network import new_client

            made = new_client(network)
            if self._client is not None:
                self._retired.append(self._client)
            self._client, self._client_network = made, network
            return made

    #: The model list's client: the same one.
    http = client

    def prepare(self, base_urls: Iterable[str] = ()) -> None:
        """Make the client now, and what a request to each of ``base_urls`` needs (the trusted
        certificates, where TLS is spoken): the warm-up calls it in a thread; a proxy or
        certificates it cannot use are reported by the first request instead."""
        from .base import BackendError
        from .network import prepare

        with contextlib.suppress(BackendError, OSError):
            client = self.client
            for url in dict.fromkeys(base_urls):
                prepare(client, url)

    async def preconnect(self, base_urls: Iterable[str]) -> None:
        """A connection to each model server, opened now and kept in the pool, nothing sent (the
        warm-up: the session's first job skips the TCP and TLS handshakes when it comes within
        the pool's keep-alive); on the event loop, once the client is made (:meth:`prepare`)."""
        from .base import BackendError
        from .network import preconnect

        try:
            client = self.client
        except BackendError:
            return
        for url in dict.fromkeys(base_urls):
            await preconnect(client, url)

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
                network=self._client_network,
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
        client = self.client
        network = self._client_network or Network()
        chat = OpenAICompatibleBackend(
            client,
            provider=profile.provider,
            base_url=profile.base_url,
            model=model,
            api_key=profile.api_key,
            timeout_ms=profile.settings.timeout_ms,
            rate_limits=self.rate_limits,
            reasoning_effort=profile.settings.reasoning_effort,
            key_hint=profile.key_hint,
            profile=profile.name,
            network=network,
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
                client,
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
                network=network,
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
        """The model servers' connections: open, and of those, idle (kept for the next job)."""
        if self._client is None:
            return {"open": 0, "idle": 0}
        from .network import pool_counts

        return pool_counts(self._client)

    async def close(self) -> None:
        """Close every connection (a later call opens new ones)."""
        clients = [*self._retired, *([self._client] if self._client is not None else [])]
        self._retired, self._client, self._client_network = [], None, None
        for client in clients:
            await client.aclose()
