"""settings.py: five sources in order, key-routing protection, bad values, profiles and keys."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp.settings import (
    KEY_ROUTING,
    Layer,
    Resolved,
    Settings,
    env_layer,
    file_layer,
    load,
    resolve,
    resolve_profile,
    settings_rows,
    settings_table,
    source_of,
)

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "fastedit.toml"
    path.write_text(text, encoding="utf-8")
    return {"FASTEDIT_CONFIG": str(path)}


# -- precedence --------------------------------------------------------------------------------

LAYERS: tuple[Layer, ...] = ("file", "env", "init", "client")


@pytest.mark.parametrize(
    "highest",
    [pytest.param(n, id="+".join(("default", *LAYERS[:n]))) for n in range(len(LAYERS) + 1)],
)
def test_each_source_overrides_the_ones_below_it(highest: int) -> None:
    """mode and profiles.fast.model set in the lowest ``highest`` layers: the last one wins."""
    modes = {"file": "standard", "env": "fast", "init": "standard", "client": "fast"}
    layers: list[tuple[Layer, Any]] = [
        (name, {"mode": modes[name], "profiles": {"fast": {"model": f"m-{name}"}}})
        for name in LAYERS[:highest]
    ]
    resolved = resolve(layers)
    winner = LAYERS[highest - 1] if highest else "default"
    assert resolved.settings.mode == (modes[winner] if highest else "auto")
    assert resolved.settings.profiles.fast.model == (f"m-{winner}" if highest else None)
    assert source_of(resolved, "mode") == winner
    assert source_of(resolved, "profiles.fast.model") == winner
    assert resolved.problems == []


def test_load_reads_file_then_environment_then_init_then_client(tmp_path: Path) -> None:
    environ = _config(
        tmp_path,
        '[fastedit]\nmode = "standard"\nmaxEditsPerSecond = 30\nstreaming = "final"\n'
        '[fastedit.profiles.fast]\nmodel = "file-model"\nbaseUrl = "http://file/v1"\n',
    )
    environ |= {"FASTEDIT_MODE": "fast", "FASTEDIT_FAST_MODEL": "env-model"}
    resolved = load(environ, init={"maxEditsPerSecond": 40}, client={"streaming": "live"})
    s = resolved.settings
    assert (s.mode, source_of(resolved, "mode")) == ("fast", "env")
    assert (s.profiles.fast.model, source_of(resolved, "profiles.fast.model")) == (
        "env-model",
        "env",
    )
    assert (s.profiles.fast.base_url, source_of(resolved, "profiles.fast.baseUrl")) == (
        "http://file/v1",
        "file",
    )
    assert (s.max_edits_per_second, source_of(resolved, "maxEditsPerSecond")) == (40, "init")
    assert (s.streaming, source_of(resolved, "streaming")) == ("live", "client")
    assert source_of(resolved, "routing.fastMaxLines") == "default"
    assert resolved.problems == resolved.warnings == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('[fastedit]\nmode = "fast"\n', id="fastedit-table"),
        pytest.param('mode = "fast"\n', id="top-level"),
        pytest.param('mode = "standard"\n[fastedit]\nmode = "fast"\n', id="table-wins"),
    ],
)
def test_config_file_takes_a_fastedit_table_or_top_level_keys(tmp_path: Path, text: str) -> None:
    resolved = load(_config(tmp_path, text))
    assert resolved.settings.mode == "fast"
    assert source_of(resolved, "mode") == "file"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("mode = ", "is not valid TOML", id="bad-toml"),
        pytest.param('fastedit = "x"\n', "is not a table", id="fastedit-not-a-table"),
    ],
)
def test_a_broken_config_file_is_reported_and_ignored(
    tmp_path: Path, text: str, problem: str
) -> None:
    environ = _config(tmp_path, text) | {"FASTEDIT_MODE": "fast"}
    resolved = load(environ)
    assert resolved.settings.mode == "fast"
    assert len(resolved.problems) == 1
    assert resolved.problems[0].startswith("FASTEDIT_CONFIG:")
    assert problem in resolved.problems[0]


def test_a_missing_config_file_is_reported_by_name(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    data, problems = file_layer({"FASTEDIT_CONFIG": str(missing)})
    assert data == {}
    assert len(problems) == 1
    assert str(missing) in problems[0]


def test_no_config_file_is_no_problem() -> None:
    assert file_layer({}) == ({}, [])


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        pytest.param("FASTEDIT_MODE", "fast", {"mode": "fast"}, id="mode"),
        pytest.param(
            "FASTEDIT_FAST_BASE_URL", "http://h/v1",
            {"profiles": {"fast": {"baseUrl": "http://h/v1"}}}, id="fast-base-url",
        ),
        pytest.param(
            "FASTEDIT_FAST_MODEL", "m", {"profiles": {"fast": {"model": "m"}}}, id="fast-model"
        ),
        pytest.param(
            "FASTEDIT_FAST_PROVIDER", "groq", {"profiles": {"fast": {"provider": "groq"}}},
            id="fast-provider",
        ),
        pytest.param(
            "FASTEDIT_STANDARD_BASE_URL", "http://s/v1",
            {"profiles": {"standard": {"baseUrl": "http://s/v1"}}}, id="standard-base-url",
        ),
        pytest.param(
            "FASTEDIT_STANDARD_MODEL", "big", {"profiles": {"standard": {"model": "big"}}},
            id="standard-model",
        ),
        pytest.param(
            "FASTEDIT_STANDARD_PROVIDER", "openai",
            {"profiles": {"standard": {"provider": "openai"}}}, id="standard-provider",
        ),
        pytest.param("FASTEDIT_FAST_API_KEY", "sk-x", {}, id="keys-are-not-settings"),
        pytest.param("FASTEDIT_MODE", "", {}, id="empty-is-unset"),
        pytest.param("OTHER", "x", {}, id="other-variables-ignored"),
    ],
)  # fmt: skip
def test_environment_variables_map_to_settings(var: str, value: str, expected: Any) -> None:
    assert env_layer({var: value}) == expected


@pytest.mark.parametrize(
    "layer",
    [pytest.param(name, id=name) for name in ("file", "init", "client")],
)
def test_snake_case_keys_are_accepted_like_camel_case(layer: Layer) -> None:
    resolved = resolve(
        [
            (
                layer,
                {
                    "max_edits_per_second": 12,
                    "routing": {"fast_max_lines": 7},
                    "profiles": {"standard": {"max_tokens": 99, "timeout_ms": 1000}},
                    "tests": {"verify_collect": True},
                },
            )
        ]
    )
    s = resolved.settings
    assert s.max_edits_per_second == 12
    assert s.routing.fast_max_lines == 7
    assert (s.profiles.standard.max_tokens, s.profiles.standard.timeout_ms) == (99, 1000)
    assert s.tests.verify_collect is True
    assert source_of(resolved, "routing.fastMaxLines") == layer
    assert resolved.problems == []


# -- key routing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "profile",
    [
        pytest.param(
            {"provider": "openai", "baseUrl": "https://evil/v1", "apiKeyEnv": "HOME"},
            id="camel-case",
        ),
        pytest.param(
            {"provider": "openai", "base_url": "https://evil/v1", "api_key_env": "HOME"},
            id="snake-case",
        ),
    ],
)
def test_key_routing_settings_from_the_client_are_ignored_with_a_warning(
    profile: dict[str, str],
) -> None:
    trusted = {"profiles": {"fast": {"provider": "cerebras", "baseUrl": "https://ok/v1"}}}
    client = {"profiles": {"fast": {**profile, "model": "from-client"}}}
    resolved = resolve([("init", trusted), ("client", client)])
    fast = resolved.settings.profiles.fast
    assert (fast.provider, fast.base_url, fast.api_key_env) == ("cerebras", "https://ok/v1", None)
    assert fast.model == "from-client"
    assert source_of(resolved, "profiles.fast.baseUrl") == "init"
    assert resolved.problems == []
    assert len(resolved.warnings) == len(KEY_ROUTING)
    for key, warning in zip(KEY_ROUTING, resolved.warnings, strict=True):
        assert warning.startswith(f"fastedit.profiles.fast.{key} is ignored")
    assert not any("evil" in w for w in resolved.warnings)


@pytest.mark.parametrize("layer", ["file", "env", "init"])
def test_key_routing_settings_are_taken_from_trusted_sources(layer: Layer) -> None:
    data = {"profiles": {"standard": {"provider": "groq", "baseUrl": "https://g/v1"}}}
    resolved = resolve([(layer, data)])
    assert resolved.settings.profiles.standard.provider == "groq"
    assert resolved.settings.profiles.standard.base_url == "https://g/v1"
    assert resolved.warnings == []


@pytest.mark.parametrize(
    "client",
    [
        pytest.param({"profiles": {"fast": "oops"}}, id="profile-not-an-object"),
        pytest.param({"profiles": "oops"}, id="profiles-not-an-object"),
    ],
)
def test_a_malformed_client_profile_cannot_reset_trusted_key_routing(client: Any) -> None:
    trusted = {"profiles": {"fast": {"provider": "cerebras", "baseUrl": "https://ok/v1"}}}
    resolved = resolve([("init", trusted), ("client", client)])
    assert resolved.problems  # the bad value is still reported
    fast = resolved.settings.profiles.fast
    assert (fast.provider, fast.base_url) == ("cerebras", "https://ok/v1")


# -- bad values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "key", "reason"),
    [
        pytest.param({"mode": "turbo"}, "fastedit.mode", "'fast', 'standard' or 'auto'", id="mode"),
        pytest.param(
            {"maxEditsPerSecond": "fast"}, "fastedit.maxEditsPerSecond", "valid integer",
            id="not-an-integer",
        ),
        pytest.param(
            {"maxEditsPerSecond": 0}, "fastedit.maxEditsPerSecond", "greater than or equal to 1",
            id="below-minimum",
        ),
        pytest.param(
            {"profiles": {"fast": {"temperature": 9}}}, "fastedit.profiles.fast.temperature",
            "less than or equal to 2", id="nested",
        ),
        pytest.param(
            {"failover": ["fast", "turbo"]}, "fastedit.failover", "'fast', 'standard' or 'local'",
            id="list-item",
        ),
    ],
)  # fmt: skip
def test_a_bad_value_is_reported_with_key_and_reason_and_the_default_applies(
    data: dict[str, Any], key: str, reason: str
) -> None:
    resolved = resolve([("init", data)])
    assert len(resolved.problems) == 1
    problem = resolved.problems[0]
    assert problem.startswith(f"{key}: ")
    assert reason in problem
    assert problem.endswith("using the default")
    assert resolved.settings == Settings()
    assert resolved.sources == {}


def test_null_means_unset_and_never_overrides_a_lower_source() -> None:
    # VS Code's pull answers null for every setting the user did not set.
    resolved = resolve(
        [("env", {"mode": "fast", "profiles": {"fast": {"model": "m"}}}),
         ("client", {"mode": None, "profiles": {"fast": {"model": None}}, "streaming": None})]
    )  # fmt: skip
    assert resolved.problems == []
    assert resolved.settings.mode == "fast"
    assert resolved.settings.profiles.fast.model == "m"
    assert resolved.sources == {"mode": "env", "profiles.fast.model": "env"}


def test_a_bad_value_falls_back_to_the_default_not_to_a_lower_source() -> None:
    # Pinned behaviour (README: "its default is kept"); the settings.py module docstring says
    # "falls back to the lower sources' value or the default".
    resolved = resolve([("env", {"mode": "fast"}), ("client", {"mode": "turbo"})])
    assert resolved.settings.mode == "auto"
    assert source_of(resolved, "mode") == "default"
    assert resolved.problems == [
        "fastedit.mode: Input should be 'fast', 'standard' or 'auto' (got 'turbo'); "
        "using the default"
    ]


def test_a_bad_value_leaves_the_other_values_of_its_source_alone() -> None:
    resolved = resolve(
        [("init", {"mode": "fast", "maxEditsPerSecond": "x", "routing": {"fastMaxLines": 5}})]
    )
    assert resolved.settings.mode == "fast"
    assert resolved.settings.routing.fast_max_lines == 5
    assert resolved.settings.max_edits_per_second == 60
    assert source_of(resolved, "mode") == "init"
    assert source_of(resolved, "maxEditsPerSecond") == "default"


def test_unknown_keys_are_reported_and_ignored() -> None:
    resolved = resolve([("init", {"mode": "fast", "bogus": 1, "routing": {"nope": 2}})])
    assert resolved.settings.mode == "fast"
    assert sorted(resolved.problems) == [
        "fastedit.bogus: unknown setting (ignored)",
        "fastedit.routing.nope: unknown setting (ignored)",
    ]


@pytest.mark.parametrize("data", [5, "fast", ["mode"]])
def test_a_source_that_is_not_an_object_is_reported_and_skipped(data: Any) -> None:
    resolved = resolve([("env", {"mode": "fast"}), ("init", data)])
    assert resolved.settings.mode == "fast"
    assert resolved.problems == [
        f"fastedit: expected an object of settings, got {type(data).__name__}"
    ]


def test_an_api_key_pasted_as_api_key_env_is_refused_without_echoing_it() -> None:
    secret = "sk-live-0123456789abcdef"
    resolved = resolve([("init", {"profiles": {"fast": {"apiKeyEnv": secret}}})])
    assert resolved.settings.profiles.fast.api_key_env is None
    assert len(resolved.problems) == 1
    assert resolved.problems[0].startswith("fastedit.profiles.fast.apiKeyEnv: ")
    assert secret not in resolved.problems[0]


# -- profiles and keys --------------------------------------------------------------------------


def _profile(profile: dict[str, Any], environ: dict[str, str], name: str = "fast") -> Any:
    settings = resolve([("init", {"profiles": {name: profile}})]).settings
    return resolve_profile(name, settings, environ)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("profile", "environ", "provider", "base_url", "key", "reason"),
    [
        pytest.param(
            {}, {}, "local", None, None, "profiles.fast has no provider configured",
            id="nothing-configured-is-local",
        ),
        pytest.param(
            {"model": "m"}, {"CEREBRAS_API_KEY": "k"}, "local", None, None,
            "profiles.fast has no provider configured", id="model-alone-is-local",
        ),
        pytest.param(
            {"provider": "local"}, {}, "local", None, None, None, id="explicit-local-no-reason",
        ),
        pytest.param(
            {"baseUrl": "http://h:1/v1/"}, {}, "openai-compatible", "http://h:1/v1", None, None,
            id="base-url-alone-is-openai-compatible",
        ),
        pytest.param(
            {"baseUrl": "http://h/v1"}, {"FASTEDIT_FAST_API_KEY": "k1"}, "openai-compatible",
            "http://h/v1", "k1", None, id="openai-compatible-takes-an-optional-key",
        ),
        pytest.param(
            {"provider": "cerebras"}, {"CEREBRAS_API_KEY": "k2"}, "cerebras",
            "https://api.cerebras.ai/v1", "k2", None, id="preset-key-variable",
        ),
        pytest.param(
            {"provider": "cerebras"}, {}, "local", None, None,
            "profiles.fast: provider cerebras needs an API key in "
            "FASTEDIT_FAST_API_KEY or CEREBRAS_API_KEY",
            id="hosted-without-key-is-local-naming-the-variables",
        ),
        pytest.param(
            {"provider": "groq", "apiKeyEnv": "MY_GROQ"}, {"MY_GROQ": "k3", "GROQ_API_KEY": "no"},
            "groq", "https://api.groq.com/openai/v1", "k3", None, id="api-key-env-wins-over-preset",
        ),
        pytest.param(
            {"provider": "openai", "apiKeyEnv": "MY_KEY"},
            {"MY_KEY": "no", "FASTEDIT_FAST_API_KEY": "k4"}, "openai",
            "https://api.openai.com/v1", "k4", None, id="fastedit-profile-key-wins",
        ),
        pytest.param(
            {"provider": "openrouter", "apiKeyEnv": "MY_KEY"}, {"OPENROUTER_API_KEY": "no"},
            "local", None, None,
            "profiles.fast: provider openrouter needs an API key in "
            "FASTEDIT_FAST_API_KEY or MY_KEY",
            id="api-key-env-replaces-the-preset-variable",
        ),
        pytest.param(
            {"provider": "ollama"}, {}, "ollama", "http://127.0.0.1:11434/v1", None, None,
            id="ollama-needs-no-key",
        ),
        pytest.param(
            {"provider": "llamacpp"}, {}, "llamacpp", "http://127.0.0.1:8080/v1", None, None,
            id="llamacpp-needs-no-key",
        ),
        pytest.param(
            {"provider": "vllm", "baseUrl": "http://gpu:9000/v1"}, {}, "vllm",
            "http://gpu:9000/v1", None, None, id="vllm-needs-no-key-and-takes-a-base-url",
        ),
        pytest.param(
            {"provider": "openai-compatible"}, {}, "local", None, None,
            "profiles.fast: provider openai-compatible needs baseUrl",
            id="openai-compatible-without-url-is-local",
        ),
    ],
)  # fmt: skip
def test_a_profile_resolves_to_a_provider_url_and_key_or_to_local_with_a_reason(
    profile: dict[str, Any],
    environ: dict[str, str],
    provider: str,
    base_url: str | None,
    key: str | None,
    reason: str | None,
) -> None:
    resolved = _profile(profile, environ)
    assert resolved.provider == provider
    assert resolved.is_local == (provider == "local")
    assert resolved.base_url == base_url
    assert (resolved.api_key.get_secret_value() if resolved.api_key else None) == key
    assert resolved.fallback_reason == reason


@pytest.mark.parametrize("name", ["fast", "standard"])
def test_each_profile_reads_its_own_key_override(name: str) -> None:
    environ = {"FASTEDIT_FAST_API_KEY": "fast-key", "FASTEDIT_STANDARD_API_KEY": "standard-key"}
    resolved = _profile({"provider": "groq"}, environ, name)
    assert resolved.api_key.get_secret_value() == f"{name}-key"
    assert resolved.key_hint == f"FASTEDIT_{name.upper()}_API_KEY or GROQ_API_KEY"


def test_keys_never_appear_in_the_repr_or_str_of_resolved_objects(tmp_path: Path) -> None:
    secret = "sk-very-secret-value-42"
    environ = _config(tmp_path, '[fastedit.profiles.fast]\nprovider = "cerebras"\n')
    environ |= {"CEREBRAS_API_KEY": secret, "FASTEDIT_STANDARD_API_KEY": secret}
    resolved: Resolved = load(environ, init={"profiles": {"standard": {"provider": "groq"}}})
    fast = resolve_profile("fast", resolved.settings, environ)
    standard = resolve_profile("standard", resolved.settings, environ)
    assert fast.api_key is not None and fast.api_key.get_secret_value() == secret
    assert standard.api_key is not None and standard.api_key.get_secret_value() == secret
    for shown in (repr(fast), str(fast), repr(standard), str(standard)):
        assert secret not in shown
    assert secret not in repr(resolved) + str(resolved) + repr(resolved.settings)


# -- the generated table ------------------------------------------------------------------------


def test_the_settings_table_has_one_row_per_setting_in_camel_case() -> None:
    keys = [key for key, _, _ in settings_rows()]
    assert len(keys) == len(set(keys))
    assert "fastedit.mode" in keys
    assert "fastedit.profiles.fast.baseUrl" in keys
    assert "fastedit.profiles.standard.apiKeyEnv" in keys
    assert "fastedit.routing.fastMaxLines" in keys
    assert "fastedit.context.exclude" in keys
    assert all("_" not in key for key in keys)
    table = settings_table().splitlines()
    assert table[:2] == ["| setting | default | meaning |", "|---|---|---|"]
    assert len(table) == len(keys) + 2
    rows = dict((key, default) for key, default, _ in settings_rows())
    assert rows["fastedit.mode"] == "`auto`"
    assert rows["fastedit.profiles.standard.maxTokens"] == "`1024`"
    assert rows["fastedit.profiles.fast.model"] == "unset"


def test_docs_settings_md_shows_the_generated_settings_table() -> None:
    """docs/settings.md holds the schema's table; SETTINGS_DOC_UPDATE=1 rewrites it."""
    page = ROOT / "docs" / "settings.md"
    text = page.read_text(encoding="utf-8")
    pattern = re.compile(r"(<!-- settings-table -->\n)(.*?)(\n<!-- /settings-table -->)", re.S)
    match = pattern.search(text)
    assert match, "docs/settings.md has no <!-- settings-table --> markers"
    if os.environ.get("SETTINGS_DOC_UPDATE") == "1":
        text = pattern.sub(lambda m: m.group(1) + settings_table() + m.group(3), text)
        page.write_text(text, encoding="utf-8")
        match = pattern.search(text)
        assert match
    assert match.group(2) == settings_table(), (
        "docs/settings.md is out of date: SETTINGS_DOC_UPDATE=1 pytest "
        "tests/unit/test_settings.py -k docs_settings"
    )


def test_the_settings_table_has_no_raw_html_outside_code_spans() -> None:
    for line in settings_table().splitlines():
        outside_code = re.sub(r"`[^`]*`", "", line)
        assert "<" not in outside_code, line


def test_the_settings_table_shows_defaults_as_users_write_them() -> None:
    rows = dict((key, default) for key, default, _ in settings_rows())
    assert rows["fastedit.tests.run"] == "`false`"
