"""``fastedit/*`` notifications go only to clients that opt in to them.

lsp-mode pops up "Unknown notification: fastedit/status" for each one it receives, up to 4 a
second while a job streams; a client opts in with the capability
``experimental.fastedit.statusNotification: true``, the others read ``fastedit.status``. Every
message the server writes is read off the raw wire, so any ``fastedit/*`` method counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import hermetic_env
from tests.support.wire import CAPABILITIES, Wire

URI = "file:///tmp/fastedit-e2e/opt_in.py"
BEFORE = "def area(width, height):\n    return "
AFTER = "\n\nprint(area(2, 3))\n"
ANSWER = "width * height  # the rectangle's area"


def _custom(wire: Wire) -> list[dict[str, Any]]:
    return [m for m in wire.received if str(m.get("method", "")).startswith("fastedit/")]


async def _session(stub: StubModelServer, tmp_path: Path, capabilities: Any) -> Wire:
    env = hermetic_env(
        FASTEDIT_FAST_BASE_URL=stub.base_url,
        FASTEDIT_FAST_MODEL="stub-fast",
        FASTEDIT_STANDARD_BASE_URL=stub.base_url,
        FASTEDIT_STANDARD_MODEL="stub-strong",
    )
    wire = await Wire.start(env, tmp_path / "server.log")
    await wire.initialize(capabilities=capabilities)
    return wire


async def _streamed_job_and_a_toggle(
    wire: Wire, stub: StubModelServer
) -> tuple[dict[str, Any], str]:
    """A streamed completeRest (done), then a mode toggle; the job's record and the new mode."""
    wire.open(URI, BEFORE + AFTER)
    # Slow enough that statuses go out while it streams (at most 4 a second).
    stub.script(Answer(text=ANSWER, token_size=2, tps=40))
    position = {"line": 1, "character": len("    return ")}
    started = await wire.command("fastedit.completeRest", {"uri": URI, "position": position})
    job_id = started["result"]["jobId"]
    waited = await wire.command("fastedit.wait", {"jobId": job_id, "timeoutMs": 30000})
    record: dict[str, Any] = waited["result"]
    assert record["state"] == "done", record
    assert record["metrics"]["edits"] >= 2
    toggled = await wire.command("fastedit.toggleFastMode")
    mode: str = toggled["result"]["mode"]
    assert mode in {"fast", "standard"}
    return record, mode


async def test_a_client_without_the_capability_gets_no_fastedit_notification(
    stub: StubModelServer, tmp_path: Path
) -> None:
    wire = await _session(stub, tmp_path, CAPABILITIES)
    try:
        record, mode = await _streamed_job_and_a_toggle(wire, stub)
        # What such a client reads instead: the same record and the mode, by request.
        status = (await wire.command("fastedit.status"))["result"]
        assert status["mode"] == mode
        assert any(j["jobId"] == record["jobId"] and j["state"] == "done" for j in status["jobs"])
        # The status request was answered after everything the server sent before it.
        assert _custom(wire) == []
    finally:
        assert await wire.stop() == 0


@pytest.mark.parametrize("opt_in", [False, "yes", {"statusNotification": False}])
async def test_only_a_literal_true_opts_in(
    stub: StubModelServer, tmp_path: Path, opt_in: Any
) -> None:
    fastedit = opt_in if isinstance(opt_in, dict) else {"statusNotification": opt_in}
    wire = await _session(stub, tmp_path, {**CAPABILITIES, "experimental": {"fastedit": fastedit}})
    try:
        await _streamed_job_and_a_toggle(wire, stub)
        await wire.command("fastedit.status")
        assert _custom(wire) == []
    finally:
        assert await wire.stop() == 0


async def test_a_client_that_opts_in_gets_status_on_start_jobs_and_mode_changes(
    stub: StubModelServer, tmp_path: Path
) -> None:
    capabilities = {**CAPABILITIES, "experimental": {"fastedit": {"statusNotification": True}}}
    wire = await _session(stub, tmp_path, capabilities)
    try:
        record, mode = await _streamed_job_and_a_toggle(wire, stub)
        await wire.command("fastedit.status")
        statuses = [m["params"] for m in _custom(wire)]
        assert {m["method"] for m in _custom(wire)} == {"fastedit/status"}
        # Once after initialized (no job), the job running and done, then the new mode.
        assert "job" not in statuses[0]
        states = [
            s["job"]["state"] for s in statuses if s.get("job", {}).get("jobId") == record["jobId"]
        ]
        assert states[0] == "running" and states[-1] == "done", states
        assert statuses[-1] == {"mode": mode}
    finally:
        assert await wire.stop() == 0
