"""The VS Code extension builds from a clean checkout: npm ci, tsc, esbuild, vsce package.

Runs editors/vscode/scripts/build.sh (the ``vsix`` fixture) and opens the package it made.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"


def test_build_script_packages_the_bundled_extension(vsix: Path) -> None:
    with zipfile.ZipFile(vsix) as package:
        names = set(package.namelist())
        manifest = json.loads(package.read("extension/package.json"))
        bundle = package.read("extension/dist/extension.js").decode()
    # Bundled: no node_modules, no sources, the README for the marketplace page.
    assert {"extension/package.json", "extension/dist/extension.js"} <= names
    assert "extension/readme.md" in names  # vsce lowercases it
    assert not [n for n in names if "node_modules" in n or n.endswith(".ts")], sorted(names)
    assert manifest == json.loads((EXTENSION / "package.json").read_text())
    assert manifest["main"] == "./dist/extension.js"
    assert manifest["engines"]["vscode"] == "^1.91.0"
    # vscode-languageclient is inside the bundle; only `vscode` is left to the host.
    assert 'require("vscode-languageclient' not in bundle
    assert 'require("vscode")' in bundle


def test_palette_commands_do_not_reuse_the_servers_command_ids() -> None:
    # vscode-languageclient registers the server's `fastedit.*` commands itself: the same id
    # registered again by the extension fails its activation ("command already exists").
    manifest = json.loads((EXTENSION / "package.json").read_text())
    commands = manifest["contributes"]["commands"]
    assert all(c["command"].startswith("fastedit-vscode.") for c in commands), commands
    assert {c["category"] for c in commands} == {"Fast Edit"}
    titles = {c["command"].split(".", 1)[1] for c in commands}
    for action in ("completeRest", "generateRegex", "generateTests", "fixSyntax"):
        assert action in titles
    assert {"editSelection", "toggleFastMode", "setMode", "cancel", "revert"} <= titles
    [toggle] = manifest["contributes"]["keybindings"]
    assert toggle["command"] == "fastedit-vscode.toggleFastMode"
    assert toggle["key"] == "ctrl+alt+f"
    # cmd+alt+f is Replace on macOS: the mac key is ctrl+alt+f too. In lists and the debug
    # console ctrl+alt+f is Find: the key is bound in text editors only.
    assert toggle["mac"] == "ctrl+alt+f"
    assert toggle["when"] == "editorTextFocus"
