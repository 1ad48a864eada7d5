"""initialize, initialized, workspace/didChangeConfiguration, shutdown and progress cancel."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..client import ClientChannel
from ..config import Config
from ..pygls_internals import Internals
from ..reporter import JobReporter
from ..warmup import WarmUpOwners, warm_up

log = logging.getLogger(__name__)


def _section(data: Any) -> Any:
    """The ``fastedit`` section of an options object, or the object itself."""
    if isinstance(data, dict) and isinstance(data.get("fastedit"), dict):
        return data["fastedit"]
    return data


def register(
    server: LanguageServer,
    *,
    config: Config,
    client: ClientChannel,
    reporter: JobReporter,
    internals: Internals,
    spawn: Callable[[Any], asyncio.Task[Any]],
    warm_up_owners: Callable[[], WarmUpOwners],
    close: Callable[[], Awaitable[None]],
) -> None:
    """``close``: stop every job and close the HTTP client (``FasteditServer.close``)."""

    @server.feature(types.INITIALIZE)
    def initialize(ls: LanguageServer, params: types.InitializeParams) -> None:
        """initialize: keep initializationOptions (validated after the reply, in initialized),
        and learn how the client counts positions."""
        from ..client import counts_code_points

        config.init_options = _section(params.initialization_options)
        client.counts_code_points = counts_code_points(params)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: LanguageServer, params: types.InitializedParams) -> None:
        """initialized: start the warm-up, validate the settings, announce the mode, then pull
        workspace settings."""
        from .. import memory

        # Before the warm-up starts the process' first thread.
        memory.one_arena()
        # Spawned first, but it starts once this handler yields (at the configuration pull):
        # the settings are validated before it, which its profiles need. The grammars of
        # documents opened meanwhile wait for its first part.
        owners = warm_up_owners()
        owners.imports.hold_grammars()
        spawn(warm_up(owners))
        config.reload()
        client.send_status(None)
        if problems := internals.problems():
            # A fix of a pygls defect could not be applied: said, never silently dropped.
            client.show_message(
                "fastedit: " + "; ".join(problems) + ". Install the pygls and cattrs versions "
                "fastedit-lsp pins (fastedit-lsp doctor lists what is off).",
                types.MessageType.Warning,
            )
        await _pull_configuration(ls, config, client)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: LanguageServer, params: types.DidChangeConfigurationParams
    ) -> None:
        """workspace/didChangeConfiguration: use pushed settings, else pull them."""
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("fastedit"), dict):
            config.client_settings = settings["fastedit"]
            config.reload()
        else:
            await _pull_configuration(ls, config, client)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: LanguageServer, params: None) -> None:
        """shutdown: stop every job and close the HTTP client."""
        await close()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: LanguageServer, params: types.WorkDoneProgressCancelParams) -> None:
        """window/workDoneProgress/cancel: the progress' cancel button stops its job."""
        reporter.cancel_progress(str(params.token))


async def _pull_configuration(ls: LanguageServer, config: Config, client: ClientChannel) -> None:
    if not client.supports("workspace.configuration"):
        return
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="fastedit")])
        )
    except Exception as exc:  # a client that fails the request keeps the settings it had
        log.warning("workspace/configuration failed: %s", exc)
        return
    section = values[0] if values else None
    if section is None or (section == {} and config.client_settings is None):
        return
    config.client_settings = section
    config.reload()
