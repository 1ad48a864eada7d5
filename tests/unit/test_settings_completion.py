"""settings.py, the completion settings: each profile's ``fim`` style and the top-level
``completion*`` knobs: defaults, camelCase on the wire, bad values named with their key.
"""

from __future__ import annotations

from typing import Any, get_args

import pytest

from fastedit_lsp.backends.fim import FimKind
from fastedit_lsp.settings import FimStyle, Settings, resolve, settings_rows, source_of


def test_completion_settings_have_their_documented_defaults() -> None:
    settings = Settings()
    # Unset: the provider's dialect, else chat (ResolvedProfile.fim).
    assert settings.profiles.fast.fim is None
    assert settings.profiles.standard.fim is None
    assert settings.completion_enabled is True
    assert settings.completion_debounce_ms == 75
    assert settings.completion_deadline_ms == 1000
    assert settings.completion_max_tokens == 128
    assert settings.completion_budget_tokens == 1024


def test_fim_styles_are_chat_plus_every_wire_kind() -> None:
    assert get_args(FimStyle) == ("chat", *get_args(FimKind))


@pytest.mark.parametrize("fim", ["chat", "completions", "infill", "mistral", "inception"])
@pytest.mark.parametrize("profile", ["fast", "standard"])
def test_each_profile_takes_its_own_fim_style(profile: str, fim: str) -> None:
    resolved = resolve([("init", {"profiles": {profile: {"fim": fim}}})])
    assert resolved.problems == []
    assert getattr(resolved.settings.profiles, profile).fim == fim
    other = "standard" if profile == "fast" else "fast"
    assert getattr(resolved.settings.profiles, other).fim is None
    assert source_of(resolved, f"profiles.{profile}.fim") == "init"


def test_completion_settings_are_camel_case_on_the_wire_and_from_any_source() -> None:
    resolved = resolve(
        [
            ("file", {"completion_max_tokens": 64}),
            ("client", {"completionEnabled": False, "completionDebounceMs": 0,
                        "completionDeadlineMs": 50, "completionBudgetTokens": 32000}),
        ]
    )  # fmt: skip
    assert resolved.problems == []
    settings = resolved.settings
    assert settings.completion_enabled is False
    assert settings.completion_debounce_ms == 0
    assert settings.completion_deadline_ms == 50
    assert settings.completion_max_tokens == 64
    assert settings.completion_budget_tokens == 32000
    assert source_of(resolved, "completionMaxTokens") == "file"
    assert source_of(resolved, "completionDeadlineMs") == "client"


def test_the_fim_style_is_taken_from_workspace_settings() -> None:
    # Unlike baseUrl, fim only picks a path on the configured host: a repository may set it.
    resolved = resolve([("client", {"profiles": {"fast": {"fim": "completions"}}})])
    assert resolved.warnings == []
    assert resolved.settings.profiles.fast.fim == "completions"


@pytest.mark.parametrize(
    ("data", "key", "reason"),
    [
        pytest.param(
            {"profiles": {"fast": {"fim": "suffix"}}}, "fastedit.profiles.fast.fim",
            "'chat', 'completions', 'infill', 'mistral' or 'inception'", id="fim-unknown",
        ),
        pytest.param(
            {"profiles": {"standard": {"fim": 1}}}, "fastedit.profiles.standard.fim",
            "'chat', 'completions', 'infill', 'mistral' or 'inception'", id="fim-not-a-string",
        ),
        pytest.param(
            {"completionEnabled": "sometimes"}, "fastedit.completionEnabled", "valid boolean",
            id="enabled-not-a-boolean",
        ),
        pytest.param(
            {"completionDebounceMs": -1}, "fastedit.completionDebounceMs",
            "greater than or equal to 0", id="debounce-below-minimum",
        ),
        pytest.param(
            {"completionDebounceMs": 2001}, "fastedit.completionDebounceMs",
            "less than or equal to 2000", id="debounce-above-maximum",
        ),
        pytest.param(
            {"completionDeadlineMs": 49}, "fastedit.completionDeadlineMs",
            "greater than or equal to 50", id="deadline-below-minimum",
        ),
        pytest.param(
            {"completionDeadlineMs": 30001}, "fastedit.completionDeadlineMs",
            "less than or equal to 30000", id="deadline-above-maximum",
        ),
        pytest.param(
            {"completionMaxTokens": 0}, "fastedit.completionMaxTokens",
            "greater than or equal to 1", id="max-tokens-below-minimum",
        ),
        pytest.param(
            {"completionMaxTokens": 2049}, "fastedit.completionMaxTokens",
            "less than or equal to 2048", id="max-tokens-above-maximum",
        ),
        pytest.param(
            {"completionBudgetTokens": 63}, "fastedit.completionBudgetTokens",
            "greater than or equal to 64", id="budget-below-minimum",
        ),
        pytest.param(
            {"completionBudgetTokens": "lots"}, "fastedit.completionBudgetTokens",
            "valid integer", id="budget-not-an-integer",
        ),
    ],
)  # fmt: skip
def test_a_bad_completion_value_is_reported_with_its_key_and_the_default_applies(
    data: dict[str, Any], key: str, reason: str
) -> None:
    resolved = resolve([("init", data)])
    assert len(resolved.problems) == 1
    problem = resolved.problems[0]
    assert problem.startswith(f"{key}: ")
    assert reason in problem
    assert problem.endswith("using the default")
    assert resolved.settings == Settings()


def test_a_bad_fim_leaves_the_rest_of_the_profile_alone() -> None:
    resolved = resolve([("init", {"profiles": {"fast": {"fim": "fill", "model": "m"}}})])
    assert resolved.settings.profiles.fast.model == "m"
    assert resolved.settings.profiles.fast.fim is None
    assert [p.split(":")[0] for p in resolved.problems] == ["fastedit.profiles.fast.fim"]


def test_the_settings_table_documents_the_completion_settings() -> None:
    rows = {key: (default, meaning) for key, default, meaning in settings_rows()}
    for profile in ("fast", "standard"):
        default, meaning = rows[f"fastedit.profiles.{profile}.fim"]
        assert default == "unset"
        for style in get_args(FimStyle):
            assert f"{style}:" in meaning
        assert "/infill" in meaning
        assert "/v1/fim/completions" in meaning
    assert rows["fastedit.completionEnabled"][0] == "`true`"
    assert rows["fastedit.completionDebounceMs"][0] == "`75`"
    assert rows["fastedit.completionDeadlineMs"][0] == "`1000`"
    assert rows["fastedit.completionMaxTokens"][0] == "`128`"
    assert rows["fastedit.completionBudgetTokens"][0] == "`1024`"


@pytest.mark.parametrize(
    ("provider", "dialect"),
    [
        ("mistral", "mistral"),
        ("inception", "inception"),
        ("llamacpp", "infill"),
        ("deepseek", "completions"),
        ("cerebras", "chat"),
    ],
)
def test_a_preset_gives_its_fim_dialect_when_the_profile_names_none(
    provider: str, dialect: str
) -> None:
    from fastedit_lsp.settings import resolve_profile

    settings = resolve([("init", {"profiles": {"fast": {"provider": provider}}})]).settings
    profile = resolve_profile("fast", settings, {"FASTEDIT_FAST_API_KEY": "k" * 12})
    assert profile.fim == dialect
    chosen = resolve(
        [("init", {"profiles": {"fast": {"provider": provider, "fim": "chat"}}})]
    ).settings
    assert resolve_profile("fast", chosen, {"FASTEDIT_FAST_API_KEY": "k" * 12}).fim == "chat"
