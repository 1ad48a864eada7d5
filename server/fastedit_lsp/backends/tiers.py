"""Speed tiers and the wire a model needs: per-provider fields, and what a session remembers.

Pure: no httpx, no pygls. A profile's ``speedTier`` (``fast``, ``ultrafast``, ``priority``,
``flex``...) is sent the way its provider names it: OpenAI's ``service_tier`` (chat completions
and the Responses API), Anthropic's ``speed: "fast"`` with its beta header, Groq's
``service_tier``. The response says which tier served the request (OpenAI's
``response.service_tier``, Anthropic's ``usage.speed``): :func:`served_tier` turns the
provider's word back into the user's. A provider that refuses the field (a 400 naming it) is
asked again without it, once, and :class:`SessionMemory` keeps that for the session, as it keeps
the models that answered "only supported in v1/responses".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from .presets import APIS, Api, default_api, is_codex_model

__all__ = ["APIS", "Api", "default_api", "is_codex_model"]

#: Anthropic's beta header value that ``speed: "fast"`` needs.
ANTHROPIC_FAST_BETA: Final = "fast-mode-2026-02-01"

#: What OpenAI answers (400) when a chat-completions request names a Responses-only model.
_RESPONSES_ONLY = re.compile(r"only supported in v1/responses", re.IGNORECASE)

#: OpenAI's tiers by the user's word (``fast`` is also OpenAI's own since 2026-07-30, but
#: ``priority`` is what every model and older deployment accepts).
_OPENAI_TIERS: Final = {
    "fast": "priority",
    "priority": "priority",
    "ultrafast": "ultrafast",
    "flex": "flex",
    "scale": "scale",
    "standard": "default",
    "default": "default",
    "auto": "auto",
}
#: Groq's ``service_tier`` values: on_demand, flex, performance, auto.
_GROQ_TIERS: Final = {
    "fast": "performance",
    "priority": "performance",
    "ultrafast": "performance",
    "performance": "performance",
    "flex": "flex",
    "standard": "on_demand",
    "default": "on_demand",
    "auto": "auto",
}
#: Provider words that mean "the standard tier served it".
_STANDARD_WORDS: Final = frozenset({"default", "standard", "on_demand", "auto"})


def responses_only(message: str) -> bool:
    """Whether a 400's message says the model is served by the Responses API only."""
    return _RESPONSES_ONLY.search(message) is not None


@dataclass(frozen=True)
class TierFields:
    """What a speed tier adds to a request: body fields and headers."""

    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    #: The field's name, as a refusal names it (``service_tier``, ``speed``).
    name: str = ""


def tier_fields(provider: str, api: Api, tier: str | None) -> TierFields:
    """The fields that ask ``tier`` of ``provider`` over ``api`` (none for no tier).

    Providers without a documented tier field get OpenAI's ``service_tier`` with the user's
    word as is: an OpenAI-compatible server that does not know it may ignore it or refuse it
    (then it is sent again without it, see :class:`SessionMemory`).
    """
    if not tier:
        return TierFields()
    word = tier.strip().lower()
    if api == "messages" or provider == "anthropic":
        if word in _STANDARD_WORDS:
            return TierFields({"speed": "standard"}, name="speed")
        # Anthropic has one faster speed: every faster tier asks for it.
        return TierFields({"speed": "fast"}, {"anthropic-beta": ANTHROPIC_FAST_BETA}, "speed")
    if provider == "groq":
        return TierFields({"service_tier": _GROQ_TIERS.get(word, word)}, name="service_tier")
    if provider == "openai":
        return TierFields({"service_tier": _OPENAI_TIERS.get(word, word)}, name="service_tier")
    return TierFields({"service_tier": word}, name="service_tier")


def served_tier(asked: str, sent: TierFields, provider_word: str | None) -> str | None:
    """The tier that served a request, in the user's words: ``asked`` when the provider's word
    is the one sent (or says the same), ``standard`` for its standard tier, else its word."""
    if provider_word is None:
        return None
    word = provider_word.lower()
    sent_word = str(next(iter(sent.body.values()), "")).lower()
    if word == sent_word or word == asked.lower():
        return asked
    if word in _STANDARD_WORDS:
        return "standard"
    if sent_word == "priority" and word == "fast":  # OpenAI's new name for the same tier
        return asked
    return word


def refuses_field(message: str, name: str) -> bool:
    """Whether a 400's message names the tier field ``name`` (or Anthropic's beta header)."""
    if not name:
        return False
    text = message.lower()
    return name in text or (name == "speed" and ANTHROPIC_FAST_BETA in text)


@dataclass
class SessionMemory:
    """What a server session learnt from refusals, per (baseUrl, model); kept until exit."""

    #: The speed-tier field was refused: never sent again.
    no_tier: set[tuple[str, str]] = field(default_factory=set)
    #: The model is served by the Responses API only: asked there from now on.
    responses_only: set[tuple[str, str]] = field(default_factory=set)
