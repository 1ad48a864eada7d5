"""``fastedit-lsp editors``: where the Neovim and Emacs plugins shipped with the package are.

The wheel carries ``editors/nvim`` and ``editors/emacs`` of the repository as
``fastedit_lsp/editors/nvim`` and ``fastedit_lsp/editors/emacs`` (pyproject.toml, hatch
``force-include``); a source checkout (an editable install, ``PYTHONPATH=server``) has them at the
repository's ``editors/``. So a user who installed with ``pip install .`` from a clone loads the
plugins from the path printed here, with no plugin manager reaching a network.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

#: The plugins: the folder name under ``editors/`` and what the user loads.
PLUGINS = ("nvim", "emacs")

#: How to get fastedit-lsp without a package index (the same advice in every editor).
INSTALL = "pip install . (in a clone of the fastedit-lsp repository)"


def plugin_dir(name: str) -> Path | None:
    """The folder of the ``name`` plugin ("nvim" or "emacs"): the package's copy, else the
    repository's (a source checkout); None when neither exists."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "editors" / name, package.parents[1] / "editors" / name):
        if candidate.is_dir():
            return candidate
    return None


def _lisp(path: Path) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _lua(path: Path) -> str:
    return "[[" + str(path) + "]]"


def advice(nvim: Path | None, emacs: Path | None) -> str:
    """How to load each plugin from its folder (as the editors' READMEs say it)."""
    lines: list[str] = []
    if nvim is not None:
        lines += [
            f"Neovim (>= 0.11): {nvim}",
            "  in init.lua:",
            f"    vim.opt.runtimepath:append({_lua(nvim)})",
            "    require('fastedit').setup({})",
            "  lazy.nvim: { dir = " + _lua(nvim) + ", config = function() "
            "require('fastedit').setup({}) end }",
            "  (fastedit-lsp editors --nvim prints just the folder)",
            "",
        ]
    if emacs is not None:
        lines += [
            f"Emacs (>= 28.1 with eglot): {emacs}",
            "  in init.el:",
            f"    (add-to-list 'load-path {_lisp(emacs)})",
            "    (require 'fastedit)",
            "    (fastedit-eglot-setup 'python-mode nil)   ; or '(\"pylsp\") beside your server",
            "    (add-hook 'python-mode-hook #'eglot-ensure)",
            f"  use-package: :load-path {_lisp(emacs)}",
            "  (fastedit-lsp editors --emacs prints just the folder)",
            "",
        ]
    lines += [
        "VS Code: build the extension from a clone: editors/vscode/scripts/build.sh, then",
        "  code --install-extension editors/vscode/fastedit.vsix",
    ]
    return "\n".join(lines) + "\n"


def main(out: TextIO, only: str | None = None) -> int:
    """Print the plugins' folders and how to load them; ``only``: just that plugin's folder."""
    if only is not None:
        path = plugin_dir(only)
        if path is None:
            out.write(f"fastedit-lsp: the {only} plugin is not in this installation\n")
            return 1
        out.write(f"{path}\n")
        return 0
    out.write(advice(plugin_dir("nvim"), plugin_dir("emacs")))
    return 0
