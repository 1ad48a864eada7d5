"""The VS Code extension builds from a clean checkout: npm ci, tsc, esbuild, vsce package.

Runs editors/vscode/scripts/build.sh (the ``vsix`` fixture) and opens the package it made.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

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
    # One key for the mode; the next-edit keys (accept, dismiss) are bound under their context.
    [toggle] = [
        k
        for k in manifest["contributes"]["keybindings"]
        if k["command"] == "fastedit-vscode.toggleFastMode"
    ]
    assert toggle["key"] == "ctrl+alt+f"
    # cmd+alt+f is Replace on macOS: the mac key is ctrl+alt+f too. In lists and the debug
    # console ctrl+alt+f is Find: the key is bound in text editors only.
    assert toggle["mac"] == "ctrl+alt+f"
    assert toggle["when"] == "editorTextFocus"


def _text_module(tmp_path: Path, calls: str) -> Any:
    """Run ``calls`` (a JS expression using ``text``, src/text.ts bundled for Node); its JSON."""
    bundle = tmp_path / "text.js"
    subprocess.run(
        ["npx", "--no-install", "esbuild", "src/text.ts", "--bundle", "--platform=node",
         "--format=cjs", f"--outfile={bundle}", "--log-level=error"],
        cwd=EXTENSION, check=True, timeout=120,
    )  # fmt: skip
    script = (
        f"const text = require({json.dumps(str(bundle))}); console.log(JSON.stringify({calls}));"
    )
    run = subprocess.run(
        ["node", "-e", script], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(run.stdout)


# vscode-languageclient rejects a failed spawn with this string.
ENOENT = "Launching server using command fastedit-lsp failed. Error: spawn fastedit-lsp ENOENT"


def test_a_server_command_not_found_names_the_setting_and_the_remote_tab(
    vsix: Path, tmp_path: Path
) -> None:
    local, remote, early, other = _text_module(
        tmp_path,
        f"""[
        text.startFailure(['fastedit-lsp'], {json.dumps(ENOENT)}, undefined),
        text.startFailure(['fastedit-lsp'], {json.dumps(ENOENT)}, 'ssh-remote'),
        text.startFailure(['fastedit-lsp'], 'Launching server using command fastedit-lsp failed.',
                          undefined, false),
        text.startFailure(['/venv/bin/fastedit-lsp'], new Error('exited with code 2'), 'wsl', true),
        ]""",
    )
    assert local["notFound"] and local["settingsTab"] == "User"
    assert local["message"].startswith(
        'the server command ["fastedit-lsp"] was not found (spawn fastedit-lsp ENOENT). '
    )
    for needed in ("pip install fastedit-lsp", "fastedit.server.command", "User settings"):
        assert needed in local["message"], local["message"]
    # A local window still says where the setting goes in a remote one.
    assert "Remote tab" in local["message"]
    # In a remote window the Remote tab is the fix: the User value is ignored there.
    assert remote["notFound"] and remote["settingsTab"] == "Remote"
    assert "Remote [ssh-remote] tab" in remote["message"]
    assert "ignores fastedit.server.command in your User settings" in remote["message"]
    # The client may reject before the spawn error arrives: the PATH lookup tells.
    assert early["notFound"] and "was not found" in early["message"]
    assert not other["notFound"] and other["settingsTab"] == "Remote"
    assert other["message"].startswith('could not start ["/venv/bin/fastedit-lsp"]: exited with')


def test_the_status_bar_figures_are_decode_speed_and_first_token_or_offline_time(
    vsix: Path, tmp_path: Path
) -> None:
    shown = _text_module(
        tmp_path,
        """[
        text.figuresText({state: 'done', route: 'fast',
                          metrics: {tokensPerSecond: 1840.4, ttftMs: 120.2, tokens: 900}}),
        text.figuresText({state: 'running', route: 'fast', metrics: {tokens: 1, ttftMs: 98}}),
        text.figuresText({state: 'running', route: 'fast', metrics: {tokens: 0}}),
        text.figuresText({state: 'done', route: 'local',
                          metrics: {tokensPerSecond: null, ttftMs: null, elapsedMs: 1234}}),
        text.figuresText({state: 'running', route: 'local', metrics: {}}),
        text.figuresText({state: 'done', route: 'local',
                          metrics: {elapsedMs: 160.3, landedMs: 7.4}}),
        ]""",
    )
    assert shown == [
        "1,840 tok/s · first token 120 ms",
        "1 tokens · first token 98 ms",
        None,
        "offline · 1,234 ms",
        "offline · …",
        "offline · 7 ms",  # the time to the text, not the job's wait for the editor's report
    ]


def test_a_job_with_no_suggestion_says_why_and_any_other_end_says_nothing_here(
    vsix: Path, tmp_path: Path
) -> None:
    said = _text_module(
        tmp_path,
        """[
        text.noSuggestionText({state: 'done', kind: 'completeRest', metrics: {edits: 0},
          reason: 'fast: completion → offline engine (no model); no suggestion: nothing earlier'}),
        text.noSuggestionText({state: 'done', kind: 'fixSyntax', metrics: {edits: 0},
          reason: 'fast: fix; no suggestion'}),
        text.noSuggestionText({state: 'done', kind: 'completeRest', metrics: {edits: 2}}),
        text.noSuggestionText({state: 'failed', kind: 'completeRest', metrics: {edits: 0}}),
        ]""",
    )
    assert said == [
        "Fast Edit: Complete the rest: no suggestion: nothing earlier",
        "Fast Edit: Fix syntax: no suggestion",
        None,
        None,
    ]
