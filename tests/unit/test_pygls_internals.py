"""The start-up self-check of the pygls/cattrs internals the protocol's patches use
(``lsp/pygls_internals.py``): a speed patch whose internal is gone falls back to pygls' own path
and logs it; a correctness fix whose internal is gone is reported (``problems``, which the server
shows the user after ``initialized`` and the doctor prints)."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import logging

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol.json_rpc import JsonRPCProtocol

from fastedit_lsp.lsp import pygls_internals
from fastedit_lsp.lsp.server import FasteditServer, register_all
from fastedit_lsp.tools import doctor


def _hide_from_the_check(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    """The check's view of one patch: as if pygls had renamed its first internal (pygls' own
    code keeps working, as it would after a rename)."""
    patches = tuple(
        dataclasses.replace(p, needs=(p.needs[0] + "_renamed", *p.needs[1:])) if p.key == key else p
        for p in pygls_internals.PATCHES
    )
    monkeypatch.setattr(pygls_internals, "PATCHES", patches)


def test_with_the_pinned_pygls_and_cattrs_every_patch_finds_its_internals() -> None:
    server = FasteditServer()
    assert server.internals.missing == {}
    assert server.internals.problems() == []


async def test_a_speed_patch_whose_internal_is_gone_falls_back_to_pygls_and_logs_one_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _hide_from_the_check(monkeypatch, "dispatch")
    with caplog.at_level(logging.INFO, logger=pygls_internals.__name__):
        server = FasteditServer()
    register_all(server)
    lines = [r.getMessage() for r in caplog.records if r.name == pygls_internals.__name__]
    assert len(lines) == 1
    assert "pygls' own path" in lines[0] and "_handle_request_renamed" in lines[0]
    assert not server.internals.uses("dispatch")
    assert server.internals.problems() == []  # a speed patch off is no problem for the user
    # pygls' own dispatch handles the message: the document is opened.
    calls: list[object] = []
    original = JsonRPCProtocol.handle_message

    def spy(protocol: JsonRPCProtocol, message: object) -> None:
        calls.append(message)
        original(protocol, message)

    monkeypatch.setattr(JsonRPCProtocol, "handle_message", spy)
    uri = "file:///fallback.py"
    message = server.protocol.structure_message(
        {
            "jsonrpc": "2.0",
            "method": types.TEXT_DOCUMENT_DID_OPEN,
            "params": {
                "textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": "x"}
            },
        }
    )
    server.protocol.handle_message(message)
    assert calls == [message]
    document = server.documents.get(uri)
    assert document is not None and document.text == "x"
    await server.close()
    tasks = list(server.tasks)  # the document's git check, the grammar's warm-up
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def test_a_correctness_fix_whose_internal_is_gone_is_reported_not_dropped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delattr(JsonRPCProtocol, "_handle_cancel_notification")
    with caplog.at_level(logging.WARNING, logger=pygls_internals.__name__):
        server = FasteditServer()
    assert not server.internals.uses("cancel_command")
    [problem] = server.internals.problems()
    assert "$/cancelRequest stops a running command" in problem
    assert "JsonRPCProtocol._handle_cancel_notification not found" in problem
    assert any("a pygls fix is off" in r.getMessage() for r in caplog.records)
    # The doctor says it too, and fails.
    out = io.StringIO()
    assert doctor._internals(out) is False
    assert "FIX OFF: $/cancelRequest stops a running command" in out.getvalue()


def test_a_fix_off_falls_back_to_pygls_instead_of_failing_the_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hide_from_the_check(monkeypatch, "invalid_params")
    server = FasteditServer()
    register_all(server)
    sent: list[object] = []
    monkeypatch.setattr(server.protocol, "_send_response", lambda *a, **k: sent.append(a))
    # pygls' own structuring: a malformed request is raised (the message loop logs it), not
    # answered with -32602: pygls' defect, which the user was told about.
    with pytest.raises(JsonRpcInvalidParams):
        server.protocol.structure_message(
            {"jsonrpc": "2.0", "id": 1, "method": types.TEXT_DOCUMENT_HOVER, "params": {"x": 1}}
        )
    assert sent == []


def test_a_dotted_internal_is_found_only_when_every_step_exists() -> None:
    server = FasteditServer()
    roots = pygls_internals._roots(server.protocol, server)
    assert pygls_internals._found("protocol.fm.commands", roots)
    assert not pygls_internals._found("protocol.fm.gone", roots)
    assert pygls_internals._found("LanguageServer.shutdown reads _stop_event", roots)
    assert not pygls_internals._found("LanguageServer.shutdown reads _gone_event", roots)
