"""Generate package.json's ``contributes.configuration`` from the server's settings schema.

    python editors/vscode/scripts/gen_settings.py          # rewrite package.json
    python editors/vscode/scripts/gen_settings.py --check  # exit 1 if it is out of date

Every server setting becomes one ``fastedit.<dotted.key>`` property with its type, bounds, enum,
default and description from the pydantic model (``fastedit_lsp.settings.Settings``). The
key-routing settings and the two that run the user's code (``tests.verifyCollect``, ``tests.run``)
get ``"scope": "machine"``: VS Code then reads them from the user's settings only, never from a
workspace's (a cloned repository must not redirect the user's key nor opt in to running itself). The
extension's own settings (``fastedit.server.command``, ``fastedit.trace.server``) are added here
too. ``tests/editors/test_vscode_settings.py`` fails when package.json drifts from the schema.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from fastedit_lsp.settings import KEY_ROUTING, Settings

PACKAGE_JSON = Path(__file__).resolve().parent.parent / "package.json"
#: Settings that let the server run the user's code: a repository must not be able to opt in.
RUNS_CODE = (
    "fastedit.tests.verifyCollect",
    "fastedit.tests.run",
    "fastedit.verify.trustWorkspaceTools",
    "fastedit.verify.checkers",
)

#: Settings of the extension itself; never sent to the server.
CLIENT_SETTINGS: dict[str, dict[str, Any]] = {
    "fastedit.server.command": {
        "type": "array",
        "items": {"type": "string"},
        "default": ["fastedit-lsp"],
        "markdownDescription": "The server command and its arguments, started over stdio, e.g. "
        '`["/home/me/.venv/bin/fastedit-lsp"]` or `["python3", "-m", "fastedit_lsp"]`. '
        "Machine scope: a workspace cannot set it.",
        "scope": "machine",
    },
    "fastedit.trace.server": {
        "type": "string",
        "enum": ["off", "messages", "verbose"],
        "default": "off",
        "markdownDescription": "Log the LSP messages between VS Code and the server in the "
        "Fast Edit output channel.",
        "scope": "window",
    },
}


def _leaf(schema: dict[str, Any], key: str, defs: dict[str, Any]) -> dict[str, Any]:
    """One VS Code setting from a JSON-schema property."""
    out: dict[str, Any] = {}
    items = schema.get("items")
    if isinstance(items, dict) and "$ref" in items:  # a list of objects: inline their schema
        item = defs[items["$ref"].rsplit("/", 1)[-1]]
        schema = {**schema, "items": {k: v for k, v in item.items() if k != "title"}}
    nullable = False
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"]
        nullable = len(options) < len(schema["anyOf"])
        if len(options) != 1:
            raise ValueError(f"{key}: cannot map {schema['anyOf']}")
        body = options[0]
    else:
        body = schema
    for field in ("type", "enum", "items", "minimum", "maximum", "pattern"):
        if field in body:
            out[field] = body[field]
    if nullable:
        out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    out["default"] = schema.get("default")
    out["markdownDescription"] = schema.get("description", "")
    machine = key.rsplit(".", 1)[-1] in KEY_ROUTING or key in RUNS_CODE
    out["scope"] = "machine" if machine else "window"
    return out


def properties() -> dict[str, dict[str, Any]]:
    """Every ``fastedit.*`` setting, in the schema's order, then the extension's own."""
    schema = Settings.model_json_schema(by_alias=True)
    defs: dict[str, Any] = schema["$defs"]
    out: dict[str, dict[str, Any]] = {}

    def walk(node: dict[str, Any], prefix: str) -> None:
        for name, prop in node["properties"].items():
            key = f"{prefix}.{name}"
            if "$ref" in prop:
                walk(defs[prop["$ref"].rsplit("/", 1)[-1]], key)
            else:
                out[key] = _leaf(prop, key, defs)

    walk(schema, "fastedit")
    out.update(CLIENT_SETTINGS)
    for order, value in enumerate(out.values()):
        value["order"] = order
    return out


def configuration() -> dict[str, Any]:
    return {"title": "Fast Edit", "properties": properties()}


def render(package: dict[str, Any]) -> str:
    package = dict(package)
    package["contributes"] = {**package["contributes"], "configuration": configuration()}
    return json.dumps(package, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if package.json is stale")
    args = parser.parse_args(argv)
    current = PACKAGE_JSON.read_text(encoding="utf-8")
    wanted = render(json.loads(current))
    if current == wanted:
        return 0
    if args.check:
        sys.stderr.write(f"{PACKAGE_JSON} is out of date: run {Path(__file__).name}\n")
        return 1
    PACKAGE_JSON.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
