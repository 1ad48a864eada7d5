"""Rate-limit memory: reset headers to seconds, blocks per (baseUrl, model), injected time."""

from __future__ import annotations

import pytest

from fastedit_lsp.backends.base import BackendError
from fastedit_lsp.backends.ratelimit import (
    MAX_BLOCK_S,
    RateLimits,
    format_seconds,
    parse_duration,
    parse_retry_after,
    rate_key,
    reset_after,
)

# 2024-01-01T00:00:00Z as epoch seconds, the "wall clock" for HTTP-date tests.
WALL = 1_704_067_200.0
FAST = rate_key("https://api.cerebras.ai/v1/", "gpt-oss-120b")
STANDARD = rate_key("https://api.cerebras.ai/v1", "qwen-3-coder")


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("12ms", 0.012),
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("1h2m3.5s", 3723.5),
        ("1.5", 1.5),
        ("59.73", 59.73),
        ("250us", 0.00025),
        ("0", 0.0),
        ("-3", 0.0),
    ],
)
def test_durations_parse_to_seconds(value: str, seconds: float) -> None:
    assert parse_duration(value) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["", "soon", "5 s", "1x", "s", "nan"])
def test_unparseable_durations_are_none(value: str) -> None:
    assert parse_duration(value) is None


def test_retry_after_in_seconds() -> None:
    assert parse_retry_after("7", wall_now=WALL) == 7.0


def test_retry_after_as_http_date() -> None:
    assert parse_retry_after("Mon, 01 Jan 2024 00:00:30 GMT", wall_now=WALL) == 30.0


def test_retry_after_in_the_past_is_zero() -> None:
    assert parse_retry_after("Sun, 31 Dec 2023 23:59:00 GMT", wall_now=WALL) == 0.0


def test_retry_after_garbage_is_none() -> None:
    assert parse_retry_after("whenever", wall_now=WALL) is None


def test_retry_after_wins_over_provider_headers() -> None:
    headers = {"Retry-After": "3", "x-ratelimit-reset-requests": "6m0s"}
    assert reset_after(headers, wall_now=WALL) == 3.0


def test_retry_after_ms_is_read() -> None:
    assert reset_after({"retry-after-ms": "1500"}, wall_now=WALL) == 1.5


def test_openai_style_reset_of_the_exhausted_limit_is_used() -> None:
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "6m0s",
        "x-ratelimit-remaining-tokens": "5000",
        "x-ratelimit-reset-tokens": "12ms",
    }
    assert reset_after(headers, wall_now=WALL) == 360.0


def test_cerebras_windowed_reset_headers_are_float_seconds() -> None:
    headers = {
        "x-ratelimit-remaining-tokens-minute": "0",
        "x-ratelimit-reset-tokens-minute": "41.2",
        "x-ratelimit-remaining-requests-day": "14000",
        "x-ratelimit-reset-requests-day": "33011.5",
    }
    assert reset_after(headers, wall_now=WALL) == pytest.approx(41.2)


def test_without_an_exhausted_limit_the_soonest_reset_is_used() -> None:
    headers = {"x-ratelimit-reset-tokens": "2s", "x-ratelimit-reset-requests": "1m"}
    assert reset_after(headers, wall_now=WALL) == 2.0


def test_no_reset_information_is_none() -> None:
    assert reset_after({"content-type": "application/json"}, wall_now=WALL) is None


def test_a_429_blocks_until_its_reset_time() -> None:
    limits = RateLimits()
    assert limits.record_429(FAST, 100.0, 30.0) == 30.0
    with pytest.raises(BackendError) as caught:
        limits.check(FAST, 110.0)
    assert caught.value.kind == "blocked"
    assert caught.value.retry_after == pytest.approx(20.0)
    assert "20 s" in caught.value.message
    assert "gpt-oss-120b" in caught.value.message
    limits.check(FAST, 130.0)  # passes once the window is over


def test_a_429_on_one_model_does_not_block_another_on_the_same_host() -> None:
    limits = RateLimits()
    limits.record_429(FAST, 0.0, 60.0)
    limits.check(STANDARD, 1.0)


def test_trailing_slash_does_not_split_the_key() -> None:
    assert rate_key("http://h/v1/", "m") == rate_key("http://h/v1", "m")


def test_without_reset_information_the_backoff_doubles_and_is_capped() -> None:
    limits = RateLimits(default_backoff_s=1.0, max_backoff_s=5.0)
    now = 0.0
    waits = []
    for _ in range(5):
        wait = limits.record_429(FAST, now, None)
        waits.append(wait)
        now += wait
    assert waits == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_a_success_resets_the_backoff_streak() -> None:
    limits = RateLimits(default_backoff_s=1.0)
    limits.record_429(FAST, 0.0, None)
    limits.record_429(FAST, 1.0, None)
    limits.record_success(FAST, 10.0)
    assert limits.record_429(FAST, 10.0, None) == 1.0


def test_a_success_from_an_older_request_keeps_the_running_window() -> None:
    limits = RateLimits()
    limits.record_429(FAST, 0.0, 30.0)
    limits.record_success(FAST, 1.0)
    assert limits.blocked_for(FAST, 2.0) == 28.0


def test_a_huge_reset_is_capped() -> None:
    assert parse_duration("1000000") == MAX_BLOCK_S


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0.4 s"), (12.2, "12 s"), (360, "6 min"), (7500, "2 h 5 min"), (7200, "2 h")],
)
def test_durations_read_naturally(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text
