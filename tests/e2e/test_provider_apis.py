"""The Responses and Messages APIs through the real server: a profile's ``api`` and
``speedTier`` against the stub's ``/v1/responses`` and ``/v1/messages``."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp.tools.stub import (
    CHAT_PATH,
    MESSAGES_PATH,
    RESPONSES_PATH,
    Answer,
    StubModelServer,
)
from tests.support.errors import CURSOR, TEXT, URI, complete, start_completion
from tests.support.harness import Editor, hermetic_env

from .conftest import MakeEditor

KEY = "sk-e2e-key-0123456789"


async def _editor(make_editor: MakeEditor, **fast: Any) -> Editor:
    init = {"mode": "fast", "failover": [], "profiles": {"fast": fast}}
    editor = await make_editor(init_options=init, env={"FASTEDIT_FAST_API_KEY": KEY})
    editor.open(URI, TEXT)
    return editor


@pytest.mark.parametrize(
    ("api", "path"), [("responses", RESPONSES_PATH), ("messages", MESSAGES_PATH)]
)
async def test_each_api_streams_its_tokens_into_the_buffer_with_usage_and_the_tier(
    make_editor: MakeEditor, stub: StubModelServer, api: str, path: str
) -> None:
    editor = await _editor(make_editor, api=api, speedTier="fast")
    tokens = ["a", " +", " b", "  # the", " sum"]
    stub.script(Answer(tokens=tokens, reasoning="first, think", chunk_per_event=True, hold_after=2))
    job_id = await start_completion(editor)
    [held] = await stub.wait_for_requests(1, path=path)
    # The first tokens land while the model holds the rest back: they stream, one by one.
    await editor.wait_applied(1)
    landed = editor.text(URI)[CURSOR : CURSOR + len("".join(tokens))]
    assert landed.startswith("a") and not landed.startswith("".join(tokens)), landed
    held.release.set()
    record = await editor.wait_job(job_id, timeout_ms=10000)
    assert record["state"] == "done", record
    assert editor.text(URI) == TEXT[:CURSOR] + "".join(tokens) + TEXT[CURSOR:]
    assert record["metrics"]["tokens"] == len(tokens)
    assert record["metrics"]["ttftMs"] is not None
    assert record["speedTier"] == {"asked": "fast", "served": "fast"}
    [request] = [r for r in stub.requests if r.path == path]
    assert request.tokens_sent == len(tokens)
    if api == "messages":
        assert request.headers["x-api-key"] == KEY
        assert request.body["speed"] == "fast"
    else:
        assert request.body["service_tier"] == "fast"


async def test_a_tier_served_below_the_one_asked_is_recorded(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await _editor(make_editor, api="responses", speedTier="fast")
    stub.script(Answer(text="a + b", tier_served="standard"))
    record = await complete(editor)
    assert record["speedTier"] == {"asked": "fast", "served": "standard"}


async def test_a_refused_tier_is_asked_again_without_it_and_the_user_is_told(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await _editor(make_editor, api="messages", speedTier="fast")
    stub.script(Answer(refuse_tier=True), Answer(text="a + b"))
    record = await complete(editor)
    assert record["state"] == "done", record
    assert "refused speedTier fast" in record["reason"], record
    assert record["speedTier"] == {"asked": "fast", "served": "standard"}
    assert ["speed" in r.body for r in stub.requests if r.path == MESSAGES_PATH] == [True, False]


async def test_an_overloaded_messages_api_fails_the_job_with_anthropics_message(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await _editor(make_editor, api="messages")
    stub.script(*[Answer(status=529, headers={"retry-after": "0"})] * 3)
    record = await complete(editor)
    assert record["state"] == "failed", record
    assert "Overloaded (overloaded_error)" in record["error"], record
    assert editor.text(URI) == TEXT


async def test_chat_completions_ask_the_tier_as_service_tier_and_drop_it_once_refused(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await _editor(make_editor, api="chat", speedTier="fast")
    stub.script(Answer(text="a", tier_served="standard"))
    record = await complete(editor)
    assert record["speedTier"] == {"asked": "fast", "served": "standard"}, record
    stub.script(Answer(refuse_tier=True), Answer(text="b"))
    refused = await complete(editor)
    assert refused["state"] == "done", refused
    assert "refused speedTier fast" in refused["reason"], refused
    assert refused["speedTier"] == {"asked": "fast", "served": "standard"}
    stub.script(Answer(text="c"))
    await complete(editor)
    chat = [r.body.get("service_tier") for r in stub.requests if r.path == CHAT_PATH]
    assert chat == ["fast", "fast", None, None]


async def test_auto_mode_reasks_a_failed_fast_tier_draft_of_the_same_model_at_the_standard_tier(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    init = {"mode": "auto", "failover": [], "profiles": {"fast": {"speedTier": "fast"}}}
    env = {"FASTEDIT_FAST_API_KEY": KEY, "FASTEDIT_STANDARD_MODEL": "stub-fast"}
    editor = await make_editor(init_options=init, env=env)
    editor.open(URI, TEXT)
    stub.script(Answer(text="a + (b"), Answer(text="a + (b"), Answer(text="a + b"))
    record = await complete(editor)
    assert record["state"] == "done", record
    assert record["escalated"] is True, record
    assert "stub-fast asked again at the standard tier" in record["reason"], record
    tiers = [r.body.get("service_tier") for r in stub.requests if r.path == CHAT_PATH]
    assert tiers == ["fast", "fast", None]
    assert "speedTier" not in record  # the answer that landed asked for no tier
    assert editor.text(URI) == TEXT[:CURSOR] + "a + b" + TEXT[CURSOR:]


async def test_doctor_probes_each_profile_over_its_api_and_names_the_tier(
    stub: StubModelServer, tmp_path: Path
) -> None:
    config = tmp_path / "fastedit.toml"
    config.write_text(
        "[fastedit.profiles.fast]\n"
        f'baseUrl = "{stub.base_url}"\nmodel = "stub-fast"\napi = "responses"\n'
        'speedTier = "fast"\n'
        "[fastedit.profiles.standard]\n"
        f'baseUrl = "{stub.base_url}"\nmodel = "stub-strong"\napi = "messages"\n',
        encoding="utf-8",
    )
    out = await asyncio.to_thread(
        subprocess.run,
        ["fastedit-lsp", "doctor"],
        capture_output=True,
        text=True,
        env=hermetic_env(FASTEDIT_CONFIG=str(config)),
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "stream: stub-fast over the responses API, fast tier asked, fast served" in out.stdout
    assert "stream: stub-strong over the messages API:" in out.stdout
    assert {r.path for r in stub.requests} >= {RESPONSES_PATH, MESSAGES_PATH}


async def test_a_model_served_by_the_responses_api_only_moves_the_profile_there_once(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    init = {"mode": "fast", "failover": []}
    env = {"FASTEDIT_FAST_PROVIDER": "openai", "FASTEDIT_FAST_API_KEY": KEY}
    editor = await make_editor(init_options=init, env=env)
    editor.open(URI, TEXT)
    only = "This model is only supported in v1/responses and not in v1/chat/completions."
    stub.script(Answer(status=400, error_message=only), Answer(text="a"), Answer(text="b"))
    record = await complete(editor)
    assert record["state"] == "done", record
    assert "served by the Responses API only" in record["reason"], record
    second = await complete(editor)
    assert "Responses API only" not in second["reason"], second
    paths = [r.path for r in stub.requests if r.path != "/v1/models"]
    assert paths == [CHAT_PATH, RESPONSES_PATH, RESPONSES_PATH]
