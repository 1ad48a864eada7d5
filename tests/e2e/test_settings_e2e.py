"""Settings seen through the real server: sources in order, key routing, bad values, the mode.

Each test starts the server process with its own environment, ``FASTEDIT_CONFIG`` file,
``initializationOptions`` and ``workspace/configuration`` answers, and reads the outcome from
``fastedit.status``, ``fastedit/status`` notifications and the messages the server sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor

from .conftest import MakeEditor

URI = "file:///tmp/fastedit-e2e/settings.py"


async def until(editor: Editor, method: str, condition: Callable[[], bool]) -> None:
    """Wait (bounded) until ``condition`` holds, checking again after each ``method`` message."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not condition():
        # Registered before yielding to the loop, so a notification cannot slip past.
        arrived = editor.client.protocol.wait_for_notification_async(method)
        try:
            await asyncio.wait_for(arrived, max(0.0, deadline - loop.time()))
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {method}") from None


async def status_with_mode(editor: Editor, mode: str) -> dict[str, Any]:
    """Wait for a ``fastedit/status`` notification announcing ``mode``."""
    await until(editor, "fastedit/status", lambda: any(s["mode"] == mode for s in editor.statuses))
    return next(s for s in editor.statuses if s["mode"] == mode)


async def status(editor: Editor) -> dict[str, Any]:
    reply: dict[str, Any] = await editor.command("fastedit.status")
    return reply


def log_texts(editor: Editor) -> list[str]:
    return [m.message for m in editor.client.log_messages]


def shown_texts(editor: Editor) -> list[str]:
    return [m.message for m in editor.client.messages]


# -- precedence -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("highest", "mode", "model"),
    [
        pytest.param("file", "standard", "file-model", id="file-over-defaults"),
        pytest.param("env", "fast", "env-model", id="env-over-file"),
        pytest.param("init", "auto", "init-model", id="init-over-env"),
        pytest.param("client", "standard", "client-model", id="configuration-over-init"),
    ],
)
async def test_mode_and_model_come_from_the_highest_source_that_sets_them(
    make_editor: MakeEditor,
    stub: StubModelServer,
    tmp_path: Path,
    highest: str,
    mode: str,
    model: str,
) -> None:
    # Each source sets a different mode than the one below it, so every step is visible.
    config = tmp_path / "fastedit.toml"
    config.write_text(
        "[fastedit]\n"
        'mode = "standard"\n'
        "[fastedit.profiles.fast]\n"
        f'baseUrl = "{stub.base_url}"\n'
        'model = "file-model"\n',
        encoding="utf-8",
    )
    order = ["file", "env", "init", "client"]
    used = order[: order.index(highest) + 1]
    env = {"FASTEDIT_CONFIG": str(config)}
    if "env" in used:
        env |= {"FASTEDIT_MODE": "fast", "FASTEDIT_FAST_MODEL": "env-model"}
    init = (
        {"mode": "auto", "profiles": {"fast": {"model": "init-model"}}} if "init" in used else None
    )
    client = (
        {"mode": "standard", "profiles": {"fast": {"model": "client-model"}}}
        if "client" in used
        else None
    )
    editor = await make_editor(model=False, env=env, init_options=init, configuration=client)
    if client is not None:
        # The server pulls workspace/configuration after `initialized`; the mode change shows it.
        await status_with_mode(editor, "standard")
    reply = await status(editor)
    assert reply["mode"] == mode
    assert reply["profiles"]["fast"]["model"] == model
    assert reply["profiles"]["fast"]["baseUrl"] == stub.base_url
    assert reply["profiles"]["fast"]["provider"] == "openai-compatible"
    assert shown_texts(editor) == []


async def test_initialization_options_may_wrap_settings_in_a_fastedit_section(
    make_editor: MakeEditor,
) -> None:
    editor = await make_editor(init_options={"fastedit": {"mode": "standard"}})
    assert (await status(editor))["mode"] == "standard"


# -- key routing ----------------------------------------------------------------------------------


async def test_base_url_from_workspace_configuration_is_ignored_with_a_logged_warning(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(
        configuration={
            "mode": "fast",
            "profiles": {"fast": {"baseUrl": "http://attacker.invalid/v1", "model": "m2"}},
        }
    )
    await status_with_mode(editor, "fast")
    warnings = [
        m
        for m in editor.client.log_messages
        if "fastedit.profiles.fast.baseUrl is ignored" in m.message
    ]
    assert len(warnings) == 1
    assert warnings[0].type == types.MessageType.Warning
    reply = await status(editor)
    assert reply["profiles"]["fast"]["baseUrl"] == stub.base_url
    assert reply["profiles"]["fast"]["model"] == "m2"  # the rest of the section still applies
    assert all("attacker" not in text for text in log_texts(editor) + shown_texts(editor))

    # The same through a push: ignored again, and the job still goes to the configured host.
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"fastedit": {"profiles": {"fast": {"base_url": "http://attacker.invalid"}}}}
        )
    )
    await until(
        editor,
        types.WINDOW_LOG_MESSAGE,
        lambda: sum("baseUrl is ignored" in t for t in log_texts(editor)) == 2,
    )
    assert (await status(editor))["profiles"]["fast"]["baseUrl"] == stub.base_url
    editor.open(URI, "x = \n")
    stub.script(Answer(text="1"))
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 0, "character": 4}}
    )
    assert record["state"] == "done", record
    assert editor.text(URI) == "x = 1\n"


# -- bad values -----------------------------------------------------------------------------------


async def test_a_bad_setting_is_shown_by_name_the_default_applies_and_the_server_keeps_working(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    editor = await make_editor(
        init_options={"mode": "standard"},
        configuration={"maxEditsPerSecond": "fast", "mode": "turbo"},
    )
    # An invalid mode falls back to the default (auto), which differs from init's standard.
    await status_with_mode(editor, "auto")
    await until(
        editor,
        types.WINDOW_SHOW_MESSAGE,
        lambda: any("fastedit.maxEditsPerSecond" in t for t in shown_texts(editor)),
    )
    bad_rate = [m for m in editor.client.messages if "fastedit.maxEditsPerSecond" in m.message]
    assert bad_rate[0].type == types.MessageType.Warning
    assert "'fast'" in bad_rate[0].message
    assert any("fastedit.mode" in t and "'turbo'" in t for t in shown_texts(editor))
    assert (await status(editor))["mode"] == "auto"

    editor.open(URI, "def f():\n    return \n")
    stub.script(Answer(text="42  # answer", tps=400))
    record = await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": {"line": 1, "character": 11}}
    )
    assert record["state"] == "done", record
    assert editor.text(URI) == "def f():\n    return 42  # answer\n"
    assert record["metrics"]["edits"] >= 2


async def test_a_broken_config_file_is_reported_and_the_server_starts(
    make_editor: MakeEditor, tmp_path: Path
) -> None:
    config = tmp_path / "broken.toml"
    config.write_text("mode = \n", encoding="utf-8")
    editor = await make_editor(env={"FASTEDIT_CONFIG": str(config), "FASTEDIT_MODE": "fast"})
    await until(
        editor,
        types.WINDOW_SHOW_MESSAGE,
        lambda: any("FASTEDIT_CONFIG" in t for t in shown_texts(editor)),
    )
    assert (await status(editor))["mode"] == "fast"


# -- the mode -------------------------------------------------------------------------------------


async def test_status_is_sent_after_initialized_and_on_every_mode_change(
    make_editor: MakeEditor,
) -> None:
    editor = await make_editor()
    assert await status_with_mode(editor, "auto") == {"mode": "auto"}
    assert len(editor.statuses) == 1
    # Notifications from a command arrive before its reply.
    assert await editor.command("fastedit.setMode", {"mode": "fast"}) == {"mode": "fast"}
    assert await editor.command("fastedit.toggleFastMode") == {"mode": "auto"}
    assert await editor.command("fastedit.setMode", {"mode": "auto"}) == {"mode": "auto"}
    assert await editor.command("fastedit.setMode", {"mode": "standard"}) == {"mode": "standard"}
    assert [s["mode"] for s in editor.statuses] == ["auto", "fast", "auto", "standard"]


async def test_toggle_flips_between_fast_and_the_last_non_fast_mode(
    make_editor: MakeEditor,
) -> None:
    editor = await make_editor(configuration={"mode": "standard"})
    await status_with_mode(editor, "standard")
    toggles = []
    for _ in range(3):
        toggles.append((await editor.command("fastedit.toggleFastMode"))["mode"])
    await editor.command("fastedit.setMode", {"mode": "auto"})
    for _ in range(2):
        toggles.append((await editor.command("fastedit.toggleFastMode"))["mode"])
    assert toggles == ["fast", "standard", "fast", "fast", "auto"]
    assert (await status(editor))["mode"] == "auto"


async def test_a_configuration_push_keeps_a_toggled_mode_unless_mode_itself_changed(
    make_editor: MakeEditor,
) -> None:
    editor = await make_editor(configuration={"mode": "standard"})
    await status_with_mode(editor, "standard")
    assert await editor.command("fastedit.toggleFastMode") == {"mode": "fast"}

    def push(section: dict[str, Any]) -> None:
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"fastedit": section})
        )

    statuses = len(editor.statuses)
    push({"mode": "standard", "maxEditsPerSecond": 30})
    # The server handles messages in order, so the reply to a later request shows the push.
    assert (await status(editor))["mode"] == "fast"
    assert len(editor.statuses) == statuses
    push({"mode": "auto", "maxEditsPerSecond": 30})
    assert (await status_with_mode(editor, "auto")) == {"mode": "auto"}
    assert (await status(editor))["mode"] == "auto"
    # The toggle now returns to the mode the push set.
    assert await editor.command("fastedit.toggleFastMode") == {"mode": "fast"}
    assert await editor.command("fastedit.toggleFastMode") == {"mode": "auto"}


async def test_no_status_is_sent_before_the_initialize_response(make_editor: MakeEditor) -> None:
    editor = await make_editor(init_options={"mode": "fast"})
    # make_editor returns as soon as the initialize response arrived: whatever is already in
    # statuses came before it.
    assert editor.statuses == []
