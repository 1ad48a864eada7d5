"""Plan and apply's pure parts: when a job plans, the marker check on a merge, the two requests,
and the settings (``editSelection.plan``, ``planMinLines``, ``profiles.apply``, morph, relace)."""

from __future__ import annotations

from typing import Any

import pytest

from fastedit_lsp.actions.plan_apply import (
    apply_request,
    check_merge,
    decide,
    is_marker,
    kept_marker,
    line_set,
    marker,
)
from fastedit_lsp.settings import env_layer, load, resolve, resolve_profile

ORIGINAL = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n"
PLAN = "def f():\n    a = 10\n    # ... existing code ...\n"
MERGED = ORIGINAL.replace("a = 1\n", "a = 10\n")


# -- the marker check ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "# ... existing code ...",
        "    # ... existing code ...",
        "// ... existing code ...",
        "  // ... rest of code ...",
        "/* ... existing code ... */",
        "<!-- ... existing code ... -->",
        "-- ... existing code ...",
        ";; ... existing code ...",
        "# … existing code …",
        "// ... keep existing code",
        "# ... rest of the code ...",
        "# ... unchanged code ...",
        "# ... Existing Code ...\r\n",
    ],
)
def test_marker_lines_in_any_comment_syntax_are_markers(line: str) -> None:
    assert is_marker(line)


@pytest.mark.parametrize(
    "line",
    [
        "...",
        "    ...",
        "x = existing_code()",
        "# existing code is kept",
        "print('... existing code ...')",
        "# ...",
        "",
    ],
)
def test_code_and_ordinary_comments_are_not_markers(line: str) -> None:
    assert not is_marker(line)


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("python", "# ... existing code ..."),
        ("typescript", "// ... existing code ..."),
        ("lua", "-- ... existing code ..."),
        ("html", "<!-- ... existing code ... -->"),
        ("css", "/* ... existing code ... */"),
        ("", "// ... existing code ..."),
    ],
)
def test_the_marker_is_a_comment_in_the_selections_language(language: str, expected: str) -> None:
    assert marker(language) == expected
    assert is_marker(expected)


def test_a_merge_with_every_plan_line_and_no_marker_passes() -> None:
    result = check_merge(ORIGINAL, PLAN, MERGED)
    assert result == {"ok": True, "details": "the merge keeps the plan's 2 lines, no marker"}


def test_a_merge_that_keeps_a_marker_fails_naming_its_line() -> None:
    merged = "def f():\n    a = 10\n    # ... existing code ...\n"
    result = check_merge(ORIGINAL, PLAN, merged)
    assert result["ok"] is False
    assert result["details"] == ("the merge kept a marker (line 3: '    # ... existing code ...')")


def test_a_merge_that_drops_a_line_of_the_plan_fails_naming_it() -> None:
    result = check_merge(ORIGINAL, PLAN, ORIGINAL)
    assert result == {
        "ok": False,
        "details": "the merge dropped a line of the plan: '    a = 10'",
    }


def test_plan_lines_must_appear_in_the_plans_order() -> None:
    plan = "    b = 2\n    a = 1\n"
    assert check_merge(ORIGINAL, plan, ORIGINAL)["ok"] is False
    assert check_merge(ORIGINAL, "    a = 1\n    b = 2\n", ORIGINAL)["ok"] is True


def test_a_marker_the_original_already_had_may_stay() -> None:
    original = "x = 1\n# ... existing code ...\ny = 2\n"
    assert check_merge(original, "x = 3\n", original.replace("x = 1", "x = 3"))["ok"] is True
    assert not kept_marker("# ... existing code ...", line_set(original))
    assert kept_marker("    # ... existing code ...", line_set(original))


def test_trailing_blanks_and_crlf_do_not_count_as_a_dropped_line() -> None:
    merged = MERGED.replace("\n", "\r\n").replace("a = 10", "a = 10  ")
    assert check_merge(ORIGINAL, PLAN, merged)["ok"] is True


# -- when a job plans ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "argument", "mode", "lines", "plan", "why"),
    [
        ("auto", None, "auto", 60, True, "editSelection.plan auto: 60 lines ≥ planMinLines 60"),
        ("auto", None, "auto", 59, False, "editSelection.plan auto: 59 lines < planMinLines 60"),
        ("auto", None, "standard", 80, True, "editSelection.plan auto: 80 lines ≥ planMinLines 60"),
        ("auto", None, "fast", 80, False,
         "editSelection.plan auto, but plans run in auto and standard mode only"),
        ("on", None, "auto", 1, True, "editSelection.plan on"),
        ("on", None, "fast", 1, False,
         "editSelection.plan on, but plans run in auto and standard mode only"),
        ("off", None, "standard", 500, False, "editSelection.plan off"),
        ("off", "on", "auto", 3, True, "plan argument on"),
        ("on", "off", "auto", 300, False, "plan argument off"),
        ("off", "auto", "auto", 70, True, "plan argument auto: 70 lines ≥ planMinLines 60"),
    ],
)  # fmt: skip
def test_plan_on_off_auto_and_the_mode_decide(
    setting: str, argument: str | None, mode: str, lines: int, plan: bool, why: str
) -> None:
    choice = decide(setting=setting, argument=argument, mode=mode, lines=lines, min_lines=60)
    assert (choice.plan, choice.why) == (plan, why)


# -- the apply request ---------------------------------------------------------------------------


def test_the_apply_request_carries_the_original_and_the_plan_verbatim() -> None:
    request = apply_request(
        ORIGINAL, PLAN, "make a 10", apply_format=True, max_tokens=4096, temperature=0
    )
    assert [m.role for m in request.messages] == ["user"]
    assert request.messages[0].content == (
        f"<instruction>make a 10</instruction>\n<code>{ORIGINAL}</code>\n<update>{PLAN}</update>"
    )
    plain = apply_request(ORIGINAL, PLAN, "x", apply_format=False, max_tokens=4096, temperature=0)
    assert [m.role for m in plain.messages] == ["system", "user"]
    assert "existing code" in plain.messages[0].content
    # Tight: about the merge's length, within the profile's cap.
    assert request.max_tokens == (len(ORIGINAL) + len(PLAN)) // 2 + 256
    capped = apply_request(
        ORIGINAL * 100, PLAN, "x", apply_format=True, max_tokens=300, temperature=0
    )
    assert capped.max_tokens == 300


# -- settings ------------------------------------------------------------------------------------


def test_edit_selection_plan_settings_default_to_auto_and_60() -> None:
    settings = resolve([]).settings
    assert settings.edit_selection.plan == "auto"
    assert settings.edit_selection.plan_min_lines == 60


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"plan": "sometimes"}, "fastedit.editSelection.plan"),
        ({"planMinLines": 0}, "fastedit.editSelection.planMinLines"),
    ],
)
def test_a_bad_plan_setting_is_reported_and_the_default_kept(
    value: dict[str, Any], problem: str
) -> None:
    resolved = resolve([("init", {"editSelection": value})])
    assert any(p.startswith(problem) for p in resolved.problems), resolved.problems
    assert resolved.settings.edit_selection.plan == "auto"
    assert resolved.settings.edit_selection.plan_min_lines == 60


def test_apply_environment_variables_map_to_the_apply_profile() -> None:
    environ = {
        "FASTEDIT_APPLY_PROVIDER": "morph",
        "FASTEDIT_APPLY_BASE_URL": "http://m/v1",
        "FASTEDIT_APPLY_MODEL": "morph-v3-fast",
    }
    assert env_layer(environ) == {
        "profiles": {
            "apply": {"provider": "morph", "baseUrl": "http://m/v1", "model": "morph-v3-fast"}
        }
    }


def test_an_unset_apply_profile_is_the_fast_profile() -> None:
    environ = {"FASTEDIT_FAST_BASE_URL": "http://fast/v1", "FASTEDIT_FAST_MODEL": "small"}
    settings = load(environ).settings
    applier = resolve_profile("apply", settings, environ)
    fast = resolve_profile("fast", settings, environ)
    assert (applier.name, applier.provider, applier.base_url, applier.model) == (
        "fast",
        fast.provider,
        "http://fast/v1",
        "small",
    )
    # A merge is as long as the selection: the apply profile's cap, not the fast one's.
    assert (fast.settings.max_tokens, applier.settings.max_tokens) == (512, 4096)
    assert applier.settings.timeout_ms == fast.settings.timeout_ms


@pytest.mark.parametrize(
    ("provider", "key_env", "base_url"),
    [
        ("morph", "MORPH_API_KEY", "https://api.morphllm.com/v1"),
        ("relace", "RELACE_API_KEY", "https://instantapply.endpoint.relace.run/v1"),
    ],
)
def test_morph_and_relace_presets_need_their_key(
    provider: str, key_env: str, base_url: str
) -> None:
    settings = load({}, init={"profiles": {"apply": {"provider": provider}}}).settings
    without = resolve_profile("apply", settings, {})
    assert without.is_local
    assert without.fallback_reason == (
        f"profiles.apply: provider {provider} needs an API key in "
        f"FASTEDIT_APPLY_API_KEY or {key_env}"
    )
    resolved = resolve_profile("apply", settings, {key_env: "k"})
    assert (resolved.name, resolved.provider, resolved.base_url) == ("apply", provider, base_url)
    override = resolve_profile("apply", settings, {"FASTEDIT_APPLY_API_KEY": "own"})
    assert override.api_key is not None and override.api_key.get_secret_value() == "own"


def test_apply_key_routing_is_not_taken_from_the_client() -> None:
    resolved = load(
        {},
        init={"profiles": {"apply": {"provider": "morph", "baseUrl": "http://trusted/v1"}}},
        client={"profiles": {"apply": {"baseUrl": "http://evil/v1", "model": "m"}}},
    )
    assert resolved.settings.profiles.apply.base_url == "http://trusted/v1"
    assert resolved.settings.profiles.apply.model == "m"
    assert any("fastedit.profiles.apply.baseUrl is ignored" in w for w in resolved.warnings)
