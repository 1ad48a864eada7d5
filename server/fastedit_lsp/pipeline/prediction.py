"""Predicted outputs for rewrites: when to send the region's text as ``prediction``.

Pure. OpenAI and Cerebras accept ``prediction: {type: "content", content}`` and answer faster
when the output repeats it (a rewrite mostly does). Per profile ``prediction: auto|on|off``;
auto sends it to the providers and models known to support it. A provider that answers 400
naming the parameter gets the job retried without it and is remembered per (baseUrl, model).
"""

from __future__ import annotations

import re

from ..backends.base import BackendError

#: Known to accept ``prediction`` (provider, model pattern), for ``prediction: auto``.
KNOWN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cerebras", re.compile(r"^(gpt-oss-120b|zai-glm-4\.7)$")),
    ("openai", re.compile(r"^gpt-4(o|\.1)(\b|-)")),
)


def wanted(setting: str, provider: str, model: str) -> bool:
    """Whether a profile's ``prediction`` setting asks for it with this provider and model."""
    if setting == "on":
        return True
    if setting == "off":
        return False
    return any(provider == name and pattern.search(model) for name, pattern in KNOWN)


def refused(exc: BackendError) -> bool:
    """Whether a failure is the provider refusing the ``prediction`` parameter (a 400 naming
    it)."""
    return exc.kind == "bad_request" and "prediction" in exc.message.lower()
