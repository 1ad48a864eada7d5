"""initialize, initialized, workspace/didChangeConfiguration, shutdown and progress cancel."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

# Imported at run time: pygls reads the handlers' annotations.
from ..server import FasteditServer
from ..warmup import warm_up

log = logging.getLogger(__name__)


def _section(data: Any) -> Any:
    """The ``fastedit`` section of an options object, or the object itself."""
    if isinstance(data, dict) and isinstance(data.get("fastedit"), dict):
        return data["fastedit"]
    return data


def register(server: FasteditServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: FasteditServer, params: types.InitializeParams) -> None:
        """initialize: keep initializationOptions (validated after the reply, in initialized),
        and learn how the client counts positions."""
        from ..client import counts_code_points

        ls.config.init_options = _section(params.initialization_options)
        ls.client.counts_code_points = counts_code_points(params)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: FasteditServer, params: types.InitializedParams) -> None:
        """initialized: start the warm-up, validate the settings, announce the mode, then pull
        workspace settings."""
        from .. import memory

        # Before the warm-up starts the process' first thread.
        memory.one_arena()
        # First, so that its thread imports while the settings are validated on the loop.
        ls.spawn(warm_up(ls.warm_up_owners()))
        ls.config.reload()
        ls.client.send_status(None)
        if problems := ls.internals.problems():
            # A fix of a pygls defect could not be applied: said, never silently dropped.
            ls.client.show_message(
                "fastedit: " + "; ".join(problems) + ". Install the pygls and cattrs versions "
                "fastedit-lsp pins (fastedit-lsp doctor lists what is off).",
                types.MessageType.Warning,
            )
        await _pull_configuration(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: FasteditServer, params: types.DidChangeConfigurationParams
    ) -> None:
        """workspace/didChangeConfiguration: use pushed settings, else pull them."""
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("fastedit"), dict):
            ls.config.client_settings = settings["fastedit"]
            ls.config.reload()
        else:
            await _pull_configuration(ls)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: FasteditServer, params: None) -> None:
        """shutdown: stop every job and close the HTTP client."""
        await ls.close()

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: FasteditServer, params: types.WorkDoneProgressCancelParams) -> None:
        """window/workDoneProgress/cancel: the progress' cancel button stops its job."""
        ls.reporter.cancel_progress(str(params.token))


async def _pull_configuration(ls: FasteditServer) -> None:
    if not ls.client.supports("workspace.configuration"):
        return
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="fastedit")])
        )
    except Exception as exc:  # a client that fails the request keeps the settings it had
        log.warning("workspace/configuration failed: %s", exc)
        return
    section = values[0] if values else None
    if section is None or (section == {} and ls.config.client_settings is None):
        return
    ls.config.client_settings = section
    ls.config.reload()
