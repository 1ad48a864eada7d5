"""workspace/executeCommand ``fastedit.run {action, uri, range|position}``: a user-defined action
(or a preset) as a job of kind ``run``; the reply is its id."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from .. import user_actions

# Imported at run time: pygls reads the handlers' annotations.
from ..server import FasteditServer
from .commands import REQUEST_FAILED, _document, _point, _range, _start_job


def register(server: FasteditServer) -> None:
    @server.command("fastedit.run")
    async def run(ls: FasteditServer, *args: Any) -> dict[str, str]:
        """fastedit.run {action, uri, range|position}: run a user-defined action."""
        from ...actions import user
        from ...actions.base import ActionError, CommandInput
        from .command_args import RunArgs, parse

        name = "fastedit.run"
        a = parse(name, RunArgs, args)
        action = user.by_id(user_actions.sync(ls.config, ls.actions), a.action)
        if action is None:
            known = ", ".join(x.id for x in (*user_actions.configured(ls.config), *user.PRESETS))
            raise JsonRpcInvalidParams(f"{name}: action: no action {a.action!r} (known: {known})")
        document = _document(ls, name, a.uri)
        if a.range is not None:
            start, end = _range(name, document, a.range)
        elif a.position is not None:
            start = end = _point(name, "position", document, a.position)
        else:
            raise JsonRpcInvalidParams(f"{name}: range or position: one is required")
        spec = user.spec(action)
        try:
            placed = spec.load().start(document, CommandInput(start, end, a.diagnostics))
        except ActionError as exc:
            raise JsonRpcException(f"{name}: {exc}", code=REQUEST_FAILED) from None
        return _start_job(ls, spec.kind, document, placed.start, placed.end, placed.inputs)
