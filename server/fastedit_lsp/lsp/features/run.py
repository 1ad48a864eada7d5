"""workspace/executeCommand ``fastedit.run {action, uri, range|position}``: a user-defined action
(or a preset) as a job of kind ``run``; the reply is its id."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ...actions.registry import Registry
from ...core.jobs import JobRegistry
from .. import user_actions
from ..config import Config
from ..documents import DocumentStore
from .commands import REQUEST_FAILED, StartJob, _document, _point, _range, _start_job


def register(
    server: LanguageServer,
    *,
    config: Config,
    actions: Registry,
    documents: DocumentStore,
    jobs: JobRegistry,
    start_job: StartJob,
) -> None:
    """``actions``: the registry, whose run-time entries follow the settings (``config``)."""

    @server.command("fastedit.run")
    async def run(ls: LanguageServer, *args: Any) -> dict[str, str]:
        """fastedit.run {action, uri, range|position}: run a user-defined action."""
        from ...actions import user
        from ...actions.base import ActionError, CommandInput
        from .command_args import RunArgs, parse

        name = "fastedit.run"
        a = parse(name, RunArgs, args)
        action = user.by_id(user_actions.sync(config, actions), a.action)
        if action is None:
            known = ", ".join(x.id for x in (*user_actions.configured(config), *user.PRESETS))
            raise JsonRpcInvalidParams(f"{name}: action: no action {a.action!r} (known: {known})")
        document = _document(documents, name, a.uri)
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
        return _start_job(
            jobs, start_job, spec.kind, document, placed.start, placed.end, placed.inputs
        )
