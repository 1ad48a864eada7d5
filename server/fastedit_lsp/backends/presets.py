"""Provider presets: where each provider lives and which environment variable holds its key.

Pure data. Every hosted provider speaks the OpenAI chat-completions SSE wire but Anthropic (its
Messages API; OpenAI's Codex models are served on its Responses API: :mod:`.tiers`); ``local``
is the offline engine (no network at all). A preset may name the fill-in-the-middle dialect its
provider serves (``fim``), used when the profile's ``fim`` is unset, and where it is served
(``fim_base_url``, when not at ``baseUrl``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

#: The wire format of a profile's action requests (``profiles.*.api``).
Api = Literal["chat", "responses", "messages"]
APIS: Final[tuple[Api, ...]] = ("chat", "responses", "messages")

#: OpenAI's Codex models are served on the Responses API only (``gpt-5.3-codex``,
#: ``gpt-5.3-codex-spark``, ``gpt-5.1-codex-max``, ``codex-mini-latest``...).
_CODEX_MODEL = re.compile(r"(?:^|[-/:_.])codex(?:$|[-/:_.])", re.IGNORECASE)


def is_codex_model(model: str) -> bool:
    """Whether ``model`` is one of OpenAI's Codex models."""
    return _CODEX_MODEL.search(model) is not None


def default_api(provider: str, model: str | None) -> Api:
    """The wire a profile uses when its ``api`` is unset: Messages for Anthropic, the Responses
    API for OpenAI's Codex models (served nowhere else), chat completions otherwise."""
    if provider == "anthropic":
        return "messages"
    if provider == "openai" and model is not None and is_codex_model(model):
        return "responses"
    return "chat"


#: A fill-in-the-middle dialect (``backends.fim.FimKind``; kept here to stay import-free).
FimDialect = Literal["completions", "infill", "mistral", "inception"]

Provider = Literal[
    "cerebras",
    "groq",
    "openai",
    "openrouter",
    "ollama",
    "llamacpp",
    "vllm",
    "morph",
    "relace",
    "anthropic",
    "mistral",
    "inception",
    "gemini",
    "deepseek",
    "openai-compatible",
    "local",
]

PROVIDERS: tuple[Provider, ...] = (
    "cerebras",
    "groq",
    "openai",
    "openrouter",
    "ollama",
    "llamacpp",
    "vllm",
    "morph",
    "relace",
    "anthropic",
    "mistral",
    "inception",
    "gemini",
    "deepseek",
    "openai-compatible",
    "local",
)


@dataclass(frozen=True)
class Preset:
    base_url: str | None
    #: Environment variable read for the key when ``apiKeyEnv`` is not set.
    key_env: str | None
    #: A hosted provider without a key resolves to ``local`` (with a one-time message).
    needs_key: bool
    #: Name of the output-length field: newer OpenAI-style APIs want ``max_completion_tokens``.
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    #: Whether the server understands ``stream_options: {include_usage: true}``.
    usage_in_stream: bool = True
    #: An apply model: a plan's merge is asked in its ``<instruction><code><update>`` format.
    apply_format: bool = False
    #: The FIM dialect completions use when the profile's ``fim`` is unset (None: ``chat``).
    fim: FimDialect | None = None
    #: Where FIM is served, when not at ``base_url`` (DeepSeek's FIM is in its beta API).
    fim_base_url: str | None = None


_MCT: Literal["max_completion_tokens"] = "max_completion_tokens"

PRESETS: dict[Provider, Preset] = {
    "cerebras": Preset("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY", True, _MCT),
    "groq": Preset("https://api.groq.com/openai/v1", "GROQ_API_KEY", True, _MCT),
    "openai": Preset("https://api.openai.com/v1", "OPENAI_API_KEY", True, _MCT),
    "openrouter": Preset("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True),
    "ollama": Preset("http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", False),
    "llamacpp": Preset("http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY", False, fim="infill"),
    "vllm": Preset("http://127.0.0.1:8000/v1", "VLLM_API_KEY", False),
    # Apply models (``profiles.apply``): they take ``<instruction><code><update>`` in one user
    # message and answer the merged code.
    "morph": Preset("https://api.morphllm.com/v1", "MORPH_API_KEY", True, apply_format=True),
    "relace": Preset(
        "https://instantapply.endpoint.relace.run/v1", "RELACE_API_KEY", True, apply_format=True
    ),
    # Anthropic's Messages API (``api: messages``); the key goes in ``x-api-key``.
    "anthropic": Preset("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", True),
    # Mistral documents no ``stream_options`` (it puts the usage in its last chunk unasked).
    "mistral": Preset(
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        True,
        usage_in_stream=False,
        fim="mistral",
    ),
    # Mercury: chat at /chat/completions, FIM (mercury-edit-2) at /fim/completions.
    "inception": Preset(
        "https://api.inceptionlabs.ai/v1", "INCEPTION_API_KEY", True, fim="inception"
    ),
    # Gemini's OpenAI-compatible endpoint.
    "gemini": Preset(
        "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", True
    ),
    # FIM (``/completions`` with ``suffix``) is served by DeepSeek's beta API only.
    "deepseek": Preset(
        "https://api.deepseek.com/v1",
        "DEEPSEEK_API_KEY",
        True,
        fim="completions",
        fim_base_url="https://api.deepseek.com/beta",
    ),
    "openai-compatible": Preset(None, None, False),
    "local": Preset(None, None, False),
}
