"""examples/configs/*.toml, each loaded as FASTEDIT_CONFIG through the real settings loader: valid,
every value taken, and the fast profile reaching its provider (with a key where one is needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fastedit_lsp.backends.presets import PRESETS
from fastedit_lsp.settings import ResolvedProfile, load, resolve_profile

CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"

#: The providers with a ready configuration (the file is named after the provider).
PROVIDERS = ["anthropic", "cerebras", "groq", "llamacpp", "mistral", "ollama", "openai", "vllm"]
#: Configurations of models (docs/providers.md): the Codex models, a vendor speed tier.
MODELS = ["codex", "openai-fast-tier"]


def test_there_is_a_ready_configuration_per_provider() -> None:
    assert sorted(p.stem for p in CONFIGS.glob("*.toml")) == sorted(PROVIDERS + MODELS)


def test_every_example_configuration_is_listed_in_the_examples_readme() -> None:
    readme = (CONFIGS.parent / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| \[[^]]+\]\(configs/([^)]+\.toml)\) \|", readme, re.MULTILINE))
    assert listed == {p.name for p in CONFIGS.glob("*.toml")}


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


@pytest.mark.parametrize("name", MODELS)
def test_a_model_configuration_loads_cleanly_with_both_profiles_on_openai(name: str) -> None:
    environ = {"FASTEDIT_CONFIG": str(CONFIGS / f"{name}.toml"), "OPENAI_API_KEY": "test-key"}
    resolved = load(environ)
    assert resolved.problems == [] and resolved.warnings == []
    for profile in ("fast", "standard"):
        resolved_profile = resolve_profile(profile, resolved.settings, environ)
        assert resolved_profile.provider == "openai", resolved_profile.fallback_reason


def test_the_seeds_models_reach_the_responses_and_messages_apis_and_a_speed_tier() -> None:
    def profiles(name: str, key_env: str) -> tuple[ResolvedProfile, ResolvedProfile]:
        environ = {"FASTEDIT_CONFIG": str(CONFIGS / f"{name}.toml"), key_env: "test-key"}
        settings = load(environ).settings
        return (
            resolve_profile("fast", settings, environ),
            resolve_profile("standard", settings, environ),
        )

    fast, standard = profiles("codex", "OPENAI_API_KEY")
    assert [p.api_for(None) for p in (fast, standard)] == ["responses", "responses"]
    assert (fast.model, standard.model) == ("gpt-5.3-codex-spark", "gpt-5.3-codex")
    fast, standard = profiles("anthropic", "ANTHROPIC_API_KEY")
    assert fast.api_for(None) == "messages" and fast.settings.speed_tier == "fast"
    assert fast.model == standard.model == "claude-opus-4-6"
    fast, standard = profiles("openai-fast-tier", "OPENAI_API_KEY")
    assert fast.settings.speed_tier == "fast" and fast.model == standard.model
