"""examples/configs/*.toml, each loaded as FASTEDIT_CONFIG through the real settings loader: valid,
every value taken, and the fast profile reaching its provider (with a key where one is needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastedit_lsp.backends.presets import PRESETS
from fastedit_lsp.settings import load, resolve_profile

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"

#: The providers with a ready configuration (the file is named after the provider).
PROVIDERS = ["cerebras", "groq", "llamacpp", "ollama", "openai", "vllm"]


def test_there_is_a_ready_configuration_per_provider() -> None:
    assert sorted(p.stem for p in CONFIGS.glob("*.toml")) == PROVIDERS


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_example_configuration_loads_cleanly_and_reaches_its_provider(provider: str) -> None:
    preset = PRESETS[provider]
    environ = {"FASTEDIT_CONFIG": str(CONFIGS / f"{provider}.toml")}
    if preset.key_env:
        environ[preset.key_env] = "test-key"
    resolved = load(environ)
    assert resolved.problems == []
    assert resolved.warnings == []
    assert resolved.sources["profiles.fast.provider"] == "file"
    fast = resolve_profile("fast", resolved.settings, environ)
    assert fast.provider == provider
    assert fast.fallback_reason is None
    assert fast.base_url == preset.base_url
    standard = resolve_profile("standard", resolved.settings, environ)
    assert standard.fallback_reason is None or "no provider configured" in standard.fallback_reason


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if PRESETS[p].needs_key])
def test_a_hosted_example_configuration_without_its_key_falls_back_to_offline(
    provider: str,
) -> None:
    environ = {"FASTEDIT_CONFIG": str(CONFIGS / f"{provider}.toml")}
    resolved = load(environ)
    fast = resolve_profile("fast", resolved.settings, environ)
    assert fast.is_local
    assert fast.fallback_reason is not None and PRESETS[provider].key_env in fast.fallback_reason
