"""``fastedit-lsp doctor``: resolved settings and their sources, backend probes, a serve check.

Writes a human-readable report to a stream (the CLI passes stdout: the server is not running in
this process). Keys are never printed, only whether they are set and where they are read from.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from . import __version__
from .settings import ProfileName, Resolved, load, resolve_profile, settings_rows, source_of


def report(out: TextIO, environ: Mapping[str, str], *, probe: bool = True) -> int:
    """Write the report; return 0 when everything checked works, else 1."""
    resolved = load(environ)
    out.write(f"fastedit-lsp {__version__} (Python {sys.version.split()[0]})\n\n")
    ok = _settings(out, resolved)
    ok = _profiles(out, resolved, environ, probe=probe) and ok
    ok = _serve(out) and ok
    out.write("\nall checks passed\n" if ok else "\nsome checks failed (see above)\n")
    return 0 if ok else 1


def _settings(out: TextIO, resolved: Resolved) -> bool:
    out.write("settings (value, source):\n")
    flat = resolved.settings.model_dump(by_alias=True)
    for key, _, _ in settings_rows():
        path = key.removeprefix("fastedit.")
        value: Any = flat
        for part in path.split("."):
            value = value[part]
        if isinstance(value, list | tuple):
            value = ", ".join(map(str, value))
        elif value is None:
            value = "unset"
        out.write(f"  {key} = {value}  ({source_of(resolved, path)})\n")
    for problem in resolved.problems:
        out.write(f"  problem: {problem}\n")
    out.write("\n")
    return not resolved.problems


def _profiles(out: TextIO, resolved: Resolved, environ: Mapping[str, str], *, probe: bool) -> bool:
    ok = True
    out.write("profiles:\n")
    names: tuple[ProfileName, ...] = ("fast", "standard")
    for name in names:
        profile = resolve_profile(name, resolved.settings, environ)
        if profile.is_local:
            why = profile.fallback_reason or "profile set to local"
            out.write(f"  {name}: offline engine ({why})\n")
            continue
        key = "set" if profile.api_key is not None else "not set"
        out.write(
            f"  {name}: {profile.provider} {profile.base_url} model "
            f"{profile.model or '(first listed)'}; key {key} ({profile.key_hint})\n"
        )
        if probe and profile.base_url:
            line, good = asyncio.run(_probe(profile.base_url, profile.api_key, profile.provider))
            out.write(f"    probe: {line}\n")
            ok = ok and good
    out.write("\n")
    return ok


async def _probe(base_url: str, api_key: Any, provider: str) -> tuple[str, bool]:
    import httpx

    from .backends.base import BackendError
    from .backends.openai import list_models

    started = time.monotonic()
    async with httpx.AsyncClient(trust_env=False) as client:
        try:
            models = await list_models(client, base_url, api_key, provider=provider)
        except BackendError as exc:
            return f"failed: {exc}", False
    elapsed = (time.monotonic() - started) * 1000
    shown = ", ".join(models[:5]) + (" ..." if len(models) > 5 else "")
    return f"GET {base_url}/models answered in {elapsed:.0f} ms: {shown or 'no models'}", True


def _serve(out: TextIO) -> bool:
    """Start ``serve --stdio`` as an editor would and run initialize/shutdown/exit."""
    line, good = asyncio.run(_serve_check())
    out.write(f"server:\n  {line}\n")
    return good


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def _read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while True:
        header = await reader.readline()
        if not header:
            raise EOFError("the server closed its output")
        if header in (b"\r\n", b"\n"):
            break
        name, _, value = header.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(await reader.readexactly(length))
    return message


async def _serve_check() -> tuple[str, bool]:
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "fastedit_lsp",
        "serve",
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(
            _frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"processId": None, "rootUri": None, "capabilities": {}},
                }
            )
        )
        while (message := await asyncio.wait_for(_read_message(proc.stdout), 20)).get("id") != 1:
            pass
        elapsed = (time.monotonic() - started) * 1000
        commands = message["result"]["capabilities"]["executeCommandProvider"]["commands"]
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        while (await asyncio.wait_for(_read_message(proc.stdout), 20)).get("id") != 2:
            pass
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        code = await asyncio.wait_for(proc.wait(), 20)
    except (TimeoutError, EOFError, KeyError, ValueError) as exc:
        proc.kill()
        await proc.wait()
        return f"serve --stdio failed: {type(exc).__name__}: {exc}", False
    return (
        f"serve --stdio answered initialize in {elapsed:.0f} ms with {len(commands)} commands; "
        f"shutdown and exit OK (exit code {code})",
        code == 0,
    )
