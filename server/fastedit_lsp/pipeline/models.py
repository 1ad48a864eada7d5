"""A profile's model as a job asks it: its backend, its circuit breaker's key, and what counts
against the breaker. Used by every stage that asks a model (an attempt, plan and apply).

Pure asyncio: backends come from the host's factory (:class:`~fastedit_lsp.pipeline.ports.Models`).
"""

from __future__ import annotations

import time

from ..backends.base import Backend, BackendError
from ..settings import ResolvedProfile
from .ports import JobHost

#: Failures that count against a (baseUrl, model)'s circuit breaker.
BREAKER_KINDS = frozenset({"connect", "timeout", "server", "dropped"})

#: A model's circuit breaker key: (baseUrl, model).
Key = tuple[str, str]


async def open_model(host: JobHost, profile: ResolvedProfile) -> tuple[Backend, Key]:
    """The profile's backend and its breaker key; BackendError ``blocked`` while its circuit is
    open (NoModelError: no model listed)."""
    backend = await host.models.backend(profile)
    key = (profile.base_url or "", backend.model)
    if (wait := host.models.allow(key, time.monotonic())) is not None:
        raise BackendError(
            "blocked",
            f"{backend.model} at {profile.base_url} failed repeatedly: not called for "
            f"another {wait:.0f} s (circuit open)",
        )
    return backend, key


def failed(host: JobHost, key: Key | None, exc: BackendError) -> None:
    """Count ``exc`` against the model's breaker when it is the model's fault."""
    if key is not None and exc.kind in BREAKER_KINDS:
        host.models.failure(key, time.monotonic())
