"""The VS Code extension's settings mirror the server's schema (generated, checked here)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from fastedit_lsp.settings import KEY_ROUTING, settings_rows

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"


def _generator() -> ModuleType:
    path = EXTENSION / "scripts" / "gen_settings.py"
    spec = importlib.util.spec_from_file_location("gen_settings", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_settings", module)
    spec.loader.exec_module(module)
    return module


def _declared() -> dict[str, dict[str, object]]:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    properties: dict[str, dict[str, object]] = manifest["contributes"]["configuration"][
        "properties"
    ]
    return properties


def test_package_json_is_generated_from_the_current_schema() -> None:
    text = (EXTENSION / "package.json").read_text()
    assert _generator().render(json.loads(text)) == text, (
        "editors/vscode/package.json is stale: run python editors/vscode/scripts/gen_settings.py"
    )


def test_every_server_setting_is_declared_with_its_default() -> None:
    declared = _declared()
    server_keys = set()
    for key, default, _ in settings_rows():
        server_keys.add(key)
        assert key in declared, key
        value = declared[key]["default"]
        if default == "unset":
            assert value is None, key
        else:
            shown = ", ".join(value) if isinstance(value, list) else value
            if isinstance(shown, bool):
                shown = "true" if shown else "false"
            assert default.strip("`").replace("\\|", "|") == str(shown), key
    extension_only = {"fastedit.server.command", "fastedit.trace.server"}
    assert set(declared) == server_keys | extension_only


def test_key_routing_and_code_running_settings_are_machine_scoped() -> None:
    declared = _declared()
    machine = {key for key, schema in declared.items() if schema.get("scope") == "machine"}
    routing = {
        f"fastedit.profiles.{profile}.{name}"
        for profile in ("fast", "standard", "apply")
        for name in KEY_ROUTING
    }
    assert machine == routing | {
        "fastedit.tests.verifyCollect",
        "fastedit.tests.run",
        "fastedit.verify.trustWorkspaceTools",
        "fastedit.verify.checkers",
        "fastedit.server.command",
    }
    assert declared["fastedit.server.command"]["default"] == ["fastedit-lsp"]
