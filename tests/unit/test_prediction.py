"""Predicted outputs: when a rewrite sends one, how a refusal is recognised, usage parsing."""

from __future__ import annotations

import pytest

from fastedit_lsp.backends.base import BackendError, ChatMessage, ChatRequest
from fastedit_lsp.backends.openai import build_chat_body
from fastedit_lsp.backends.presets import PRESETS
from fastedit_lsp.backends.sse import parse_chat_chunk
from fastedit_lsp.pipeline.prediction import refused, wanted


@pytest.mark.parametrize(
    ("setting", "provider", "model", "sent"),
    [
        ("auto", "cerebras", "gpt-oss-120b", True),
        ("auto", "cerebras", "zai-glm-4.7", True),
        ("auto", "cerebras", "llama3.1-8b", False),
        ("auto", "openai", "gpt-4o-mini", True),
        ("auto", "openai", "gpt-4.1-nano", True),
        ("auto", "openai", "gpt-5", False),
        ("auto", "openai-compatible", "gpt-4o", False),
        ("on", "ollama", "qwen", True),
        ("off", "openai", "gpt-4o", False),
    ],
)
def test_auto_sends_prediction_only_where_known_to_work(
    setting: str, provider: str, model: str, sent: bool
) -> None:
    assert wanted(setting, provider, model) is sent


def test_only_a_400_naming_the_parameter_counts_as_refusing_it() -> None:
    assert refused(BackendError("bad_request", "Unsupported parameter: 'prediction'"))
    assert not refused(BackendError("bad_request", "max_tokens is too large"))
    assert not refused(BackendError("server", "prediction service down"))


def test_the_body_carries_the_prediction_as_content() -> None:
    request = ChatRequest((ChatMessage("user", "x"),), 64, prediction="a = 1\n")
    body = build_chat_body(request, model="m", preset=PRESETS["openai"], reasoning_effort=None)
    assert body["prediction"] == {"type": "content", "content": "a = 1\n"}
    plain = build_chat_body(
        ChatRequest((ChatMessage("user", "x"),), 64),
        model="m",
        preset=PRESETS["openai"],
        reasoning_effort=None,
    )
    assert "prediction" not in plain


def test_usage_details_give_accepted_and_rejected_prediction_tokens() -> None:
    chunk = parse_chat_chunk(
        '{"choices": [], "usage": {"completion_tokens": 9, "completion_tokens_details": '
        '{"accepted_prediction_tokens": 7, "rejected_prediction_tokens": 2}}}'
    )
    assert chunk.prediction_tokens == (7, 2)
    assert (
        parse_chat_chunk('{"choices": [], "usage": {"completion_tokens": 9}}').prediction_tokens
        is None
    )
