"""Provider presets: where each provider lives and which environment variable holds its key.

Pure data. Every hosted provider speaks the OpenAI chat-completions SSE wire; ``local`` is the
offline engine (no network at all).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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


_MCT: Literal["max_completion_tokens"] = "max_completion_tokens"

PRESETS: dict[Provider, Preset] = {
    "cerebras": Preset("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY", True, _MCT),
    "groq": Preset("https://api.groq.com/openai/v1", "GROQ_API_KEY", True, _MCT),
    "openai": Preset("https://api.openai.com/v1", "OPENAI_API_KEY", True, _MCT),
    "openrouter": Preset("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True),
    "ollama": Preset("http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", False),
    "llamacpp": Preset("http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY", False),
    "vllm": Preset("http://127.0.0.1:8000/v1", "VLLM_API_KEY", False),
    # Apply models (``profiles.apply``): they take ``<instruction><code><update>`` in one user
    # message and answer the merged code.
    "morph": Preset("https://api.morphllm.com/v1", "MORPH_API_KEY", True, apply_format=True),
    "relace": Preset(
        "https://instantapply.endpoint.relace.run/v1", "RELACE_API_KEY", True, apply_format=True
    ),
    "openai-compatible": Preset(None, None, False),
    "local": Preset(None, None, False),
}
