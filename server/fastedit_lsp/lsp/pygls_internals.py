"""The start-up self-check of the pygls and cattrs internals :mod:`.protocol` relies on.

pygls and lsprotocol are pinned exactly and cattrs to one release line (pyproject.toml), yet an
install may hold other versions (a distribution's packages, a user's own pins). Each patch of
:mod:`.protocol` names the private names it needs; at start-up each is looked up once:

- a **speed patch** whose internal is missing is not used: pygls' own path runs instead, and one
  log line says so (the server is a little slower, nothing else changes);
- a **correctness fix** whose internal is missing cannot mend its pygls defect: the user is told
  in a ``window/showMessage`` after ``initialized`` and by ``fastedit-lsp doctor``, never
  silently (and the code around it falls back to pygls' own behaviour, defect included).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from pygls.lsp.server import LanguageServer
from pygls.protocol.json_rpc import JsonRPCProtocol

log = logging.getLogger(__name__)

Kind = Literal["speed", "correctness"]


@dataclass(frozen=True)
class Patch:
    """One of :mod:`.protocol`'s patches and the private names it needs."""

    #: Its key (``PatchedLanguageServer.internals.uses("dispatch")``).
    key: str
    kind: Kind
    #: What it does, in the user's words (the message when it is off).
    does: str
    #: The private names, as ``root.attr.attr`` (roots: see :func:`_roots`).
    needs: tuple[str, ...]


PATCHES: tuple[Patch, ...] = (
    # -- speed patches: pygls' own path when an internal is gone ----------------------------------
    Patch(
        "keep_hooks",
        "speed",
        "the message converter keeps each compiled hook (a session's first messages)",
        ("converter._structure_func.dispatch", "converter._unstructure_func.dispatch"),
    ),
    Patch(
        "dispatch",
        "speed",
        "messages are dispatched without pygls' runtime Protocol checks",
        (
            "JsonRPCProtocol._handle_request",
            "JsonRPCProtocol._handle_notification",
            "JsonRPCProtocol._handle_response",
        ),
    ),
    Patch(
        "plain_commands",
        "speed",
        "executeCommand skips re-reading the handler's signature",
        ("protocol.fm.commands",),
    ),
    Patch(
        "framing",
        "speed",
        "messages are written by the fast JSON codec",
        (
            "JsonRPCProtocol._send_data",
            "JsonRPCProtocol._serialize_message",
            "protocol._include_headers",
            "LanguageServer._report_server_error",
        ),
    ),
    Patch(
        "stdin_on_loop",
        "speed",
        "stdin is read on the event loop instead of through threads",
        ("LanguageServer._start_io_async", "LanguageServer.shutdown reads _stop_event"),
    ),
    # -- correctness fixes: each mends a pygls 2.1.1 defect ---------------------------------------
    Patch(
        "cancel_command",
        "correctness",
        "$/cancelRequest stops a running command (pygls cancels only executeCommand's outer "
        "future: fastedit.wait would run on)",
        ("JsonRPCProtocol._handle_cancel_notification",),
    ),
    Patch(
        "forget_futures",
        "correctness",
        "finished handlers' futures are forgotten (pygls keeps each one: memory grows)",
        ("JsonRPCProtocol._execute_handler", "protocol._request_futures"),
    ),
    Patch(
        "invalid_params",
        "correctness",
        "a request whose params do not fit gets -32602 (pygls drops it: the editor waits forever)",
        ("JsonRPCProtocol._send_response", "protocol._converter"),
    ),
    Patch(
        "bad_reply",
        "correctness",
        "an editor's reply that does not fit fails its request (pygls leaves it pending)",
        ("protocol._result_types", "protocol._request_futures", "protocol._converter"),
    ),
    Patch(
        "after_shutdown",
        "correctness",
        "requests after shutdown are answered (pygls drops them: the editor waits), and "
        "shutdown cancels pending requests without 'dictionary changed size'",
        ("protocol._request_futures", "protocol.fm.features", "JsonRPCProtocol._send_response"),
    ),
    Patch(
        "forget_requests",
        "correctness",
        "requests that timed out and finished progress tokens are forgotten (pygls keeps them)",
        ("protocol._request_futures", "protocol._result_types", "server.work_done_progress.tokens"),
    ),
)


class Internals:
    """The result of the self-check: which patches are on, and what is missing."""

    def __init__(self, missing: dict[str, list[str]]) -> None:
        #: Patch key -> its internals that were not found (only patches with some missing).
        self.missing = missing

    def uses(self, key: str) -> bool:
        """Whether the patch ``key`` is on (every internal it needs was found)."""
        return key not in self.missing

    def off(self, kind: Kind) -> list[Patch]:
        """The patches of ``kind`` that are off."""
        return [p for p in PATCHES if p.kind == kind and p.key in self.missing]

    def problems(self) -> list[str]:
        """One line per correctness fix that is off: what the user loses, and why."""
        return [
            f"{p.does}: off, {', '.join(self.missing[p.key])} not found in this pygls/cattrs"
            for p in self.off("correctness")
        ]


def check(protocol: JsonRPCProtocol, server: LanguageServer) -> Internals:
    """Look each patch's internals up (once, at start-up) and log what is off."""
    roots = _roots(protocol, server)
    missing: dict[str, list[str]] = {}
    for patch in PATCHES:
        gone = [name for name in patch.needs if not _found(name, roots)]
        if gone:
            missing[patch.key] = gone
    internals = Internals(missing)
    for patch in internals.off("speed"):
        log.info(
            "pygls' own path instead of a speed patch (%s): %s not found",
            patch.does,
            ", ".join(missing[patch.key]),
        )
    for line in internals.problems():
        log.warning("a pygls fix is off: %s", line)
    return internals


def _roots(protocol: JsonRPCProtocol, server: LanguageServer) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "server": server,
        "converter": getattr(protocol, "_converter", None),
        "JsonRPCProtocol": JsonRPCProtocol,
        "LanguageServer": LanguageServer,
    }


def _found(name: str, roots: dict[str, Any]) -> bool:
    path, _, reads = name.partition(" reads ")
    root, *attributes = path.split(".")
    node = roots.get(root)
    for attribute in attributes:
        if node is None:
            return False
        node = getattr(node, attribute, None)
    if node is None:
        return False
    if reads:  # a method that must still use the attribute the patch sets
        code = getattr(node, "__code__", None)
        return code is not None and reads in code.co_names
    return True
