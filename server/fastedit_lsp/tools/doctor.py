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
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from ..backends.network import Network, proxy_for
from ..settings import (
    ProfileName,
    Resolved,
    ResolvedProfile,
    load,
    resolve_profile,
    settings_rows,
    source_of,
)

if TYPE_CHECKING:
    from ..backends.factory import Backends


def report(
    out: TextIO,
    environ: Mapping[str, str],
    *,
    probe: bool = True,
    editor_settings: str | None = None,
) -> int:
    """Write the report; return 0 when everything checked works, else 1.

    ``editor_settings``: a JSON file with the editor's ``fastedit`` section (what the editor
    sends as initializationOptions), which the doctor cannot see otherwise.
    """
    out.write(f"fastedit-lsp {__version__} (Python {sys.version.split()[0]})\n\n")
    init: Any = None
    if editor_settings is not None:
        try:
            with open(editor_settings, encoding="utf-8") as f:
                init = json.load(f)
        except (OSError, ValueError) as exc:
            out.write(f"--settings {editor_settings}: cannot read it: {exc}\n")
            return 1
        if isinstance(init, dict) and isinstance(init.get("fastedit"), dict):
            init = init["fastedit"]
    else:
        out.write("(editor-side settings are not visible here; pass them with --settings FILE)\n\n")
    resolved = load(environ, init)
    ok = _settings(out, resolved)
    ok = _network(out, resolved, environ) and ok
    ok = _profiles(out, resolved, environ, probe=probe) and ok
    ok = _internals(out) and ok
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


def _network_of(resolved: Resolved) -> Network:
    from ..backends.network import Network

    settings = resolved.settings.network
    return Network(settings.proxy, settings.ca_file)


def _network(out: TextIO, resolved: Resolved, environ: Mapping[str, str]) -> bool:
    """The proxies and trusted certificates every model request uses (as the server's client
    reads them: the doctor runs in the editor's environment only when started from it)."""
    from ..backends.base import BackendError
    from ..backends.network import environment_proxies, new_client, redact, trust_in_use

    network = _network_of(resolved)
    out.write("network:\n")
    found = environment_proxies(environ)
    if network.proxy:
        out.write(f"  proxy: {redact(network.proxy)} (network.proxy)\n")
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            used = "" if not network.proxy else " (replaced by network.proxy)"
            out.write(f"  {scheme.upper()}_PROXY = {redact(found[scheme])}{used}\n")
    if not network.proxy and not any(found.get(s) for s in ("http", "https", "all")):
        out.write("  proxy: none (requests go directly)\n")
    if found.get("no"):
        out.write(f"  NO_PROXY = {found['no']}\n")
    out.write(f"  trusted certificates: {trust_in_use(network, environ)}\n")
    try:
        client = new_client(network)
    except BackendError as exc:
        out.write(f"  problem: {exc}\n\n")
        return False
    asyncio.run(client.aclose())
    out.write("\n")
    return True


def _profiles(out: TextIO, resolved: Resolved, environ: Mapping[str, str], *, probe: bool) -> bool:
    ok = True
    out.write("profiles:\n")
    names: tuple[ProfileName, ...] = ("fast", "standard", "apply")
    for name in names:
        profile = resolve_profile(name, resolved.settings, environ)
        if profile.name != name:  # an unset apply profile: the fast one merges plans
            out.write(f"  {name}: unset (the {profile.name} profile merges plans)\n")
            continue
        if profile.is_local:
            why = profile.fallback_reason or "profile set to local"
            out.write(f"  {name}: offline engine ({why})\n")
            configured = getattr(resolved.settings.profiles, name).provider not in (None, "local")
            if configured:
                # A provider was asked for but cannot be used: say what to fix.
                out.write(f"    fix: {why}\n")
                ok = False
            continue
        key = "set" if profile.api_key is not None else "not set"
        out.write(
            f"  {name}: {profile.provider} {profile.base_url} model "
            f"{profile.model or '(first listed)'}; key {key} ({profile.key_hint})\n"
        )
        if probe and profile.base_url:
            through = proxy_for(profile.base_url, _network_of(resolved))
            via = f"proxy {through.shown} ({through.source})" if through else "direct"
            out.write(f"    via: {via}\n")
            lines, good = asyncio.run(_probe(profile, _network_of(resolved)))
            for line in lines:
                out.write(f"    {line}\n")
            ok = ok and good
    out.write("\n")
    return ok


async def _probe(profile: ResolvedProfile, network: Network) -> tuple[list[str], bool]:
    """List the models, then time one short streamed answer: TTFT and tokens per second, through
    the server's own client (its proxies and trusted certificates)."""
    from ..backends.base import BackendError
    from ..backends.factory import Backends

    backends = Backends(network=lambda: network)
    try:
        return await _probe_with(profile, network, backends)
    except BackendError as exc:  # the client itself (a proxy or CA file it cannot use)
        return [f"failed: {exc}"], False
    finally:
        await backends.close()


async def _probe_with(
    profile: ResolvedProfile, network: Network, backends: Backends
) -> tuple[list[str], bool]:
    from ..backends.base import BackendError, ChatMessage, ChatRequest, StreamInfo
    from ..backends.openai import OpenAICompatibleBackend, list_models
    from ..backends.ratelimit import RateLimits
    from ..backends.streams import ApiBackend
    from ..backends.tiers import SessionMemory

    assert profile.base_url is not None
    lines: list[str] = []
    client = backends.client
    started = time.monotonic()
    try:
        models = await list_models(
            client,
            profile.base_url,
            profile.api_key,
            provider=profile.provider,
            key_hint=profile.key_hint,
            network=network,
        )
    except BackendError as exc:
        return [f"models: failed: {exc}"], False
    elapsed = (time.monotonic() - started) * 1000
    shown = ", ".join(models[:6]) + (" ..." if len(models) > 6 else "")
    lines.append(f"models ({elapsed:.0f} ms): {shown or 'none listed'}")
    model = profile.model or (models[0] if models else None)
    if model is None:
        return [*lines, f"fix: set profiles.{profile.name}.model"], False
    if profile.model and models and profile.model not in models:
        lines.append(f"warning: {profile.model} is not in the list above")
    api = profile.api_for(model)
    backend: OpenAICompatibleBackend | ApiBackend
    if api != "chat":
        backend = ApiBackend(
            client,
            api=api,
            provider=profile.provider,
            base_url=profile.base_url,
            model=model,
            api_key=profile.api_key,
            timeout_ms=profile.settings.timeout_ms,
            rate_limits=RateLimits(),
            memory=SessionMemory(),
            reasoning_effort=profile.settings.reasoning_effort,
            speed_tier=profile.settings.speed_tier,
            key_hint=profile.key_hint,
            retries=0,
            profile=profile.name,
            network=network,
        )
    else:
        backend = OpenAICompatibleBackend(
            client,
            provider=profile.provider,
            base_url=profile.base_url,
            model=model,
            api_key=profile.api_key,
            timeout_ms=profile.settings.timeout_ms,
            rate_limits=RateLimits(),
            reasoning_effort=profile.settings.reasoning_effort,
            key_hint=profile.key_hint,
            retries=0,
            profile=profile.name,
            speed_tier=profile.settings.speed_tier,
            network=network,
        )
    request = ChatRequest(
        messages=(ChatMessage("user", "Count from 1 to 40, separated by spaces. Only numbers."),),
        max_tokens=128,
        temperature=0,
    )
    info = StreamInfo()
    started = time.monotonic()
    try:
        async for _ in backend.stream(request, info):
            pass
    except BackendError as exc:
        return [*lines, f"stream: failed: {exc}"], False
    ended = time.monotonic()
    tokens = info.completion_tokens or info.deltas
    if info.first_delta_at is None or not tokens:
        return [*lines, f"stream: {model} answered nothing"], False
    ttft = (info.first_delta_at - started) * 1000
    # The decode speed: the tokens after the first over the time from the first to the last.
    span = (info.last_delta_at or ended) - info.first_delta_at
    speed = f"{(tokens - 1) / span:,.0f} tok/s" if span > 0 and tokens > 1 else "instant"
    tier = ""
    if info.tier_asked is not None:
        tier = f", {info.tier_asked} tier asked, {info.tier_served or 'unknown'} served"
    lines.append(
        f"stream: {model} over the {api} API{tier}: {speed}, first token {ttft:.0f} ms, "
        f"{tokens} tokens"
    )
    return lines, True


def _internals(out: TextIO) -> bool:
    """The server's self-check of the pygls/cattrs internals its patches use (the same check
    ``serve`` runs at start-up): a correctness fix that is off fails the doctor."""
    from importlib.metadata import version

    from ..lsp.pygls_internals import PATCHES
    from ..lsp.server import FasteditServer

    internals = FasteditServer().internals
    versions = ", ".join(f"{name} {version(name)}" for name in ("pygls", "lsprotocol", "cattrs"))
    out.write(f"pygls internals ({versions}):\n")
    if not internals.missing:
        out.write(f"  all {len(PATCHES)} patches found the internals they use\n\n")
        return True
    for patch in internals.off("speed"):
        gone = ", ".join(internals.missing[patch.key])
        out.write(f"  speed patch off, pygls' own path instead: {patch.does} ({gone} not found)\n")
    for line in internals.problems():
        out.write(f"  FIX OFF: {line}\n")
    out.write("\n")
    return not internals.off("correctness")


def _serve(out: TextIO) -> bool:
    """Start ``serve --stdio`` as an editor would and run initialize/shutdown/exit."""
    line, good = asyncio.run(_serve_check())
    out.write(f"server:\n  {line}\n")
    return good


async def _serve_check() -> tuple[str, bool]:
    from .lsp_client import LspClient

    started = time.monotonic()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    client = await LspClient.start(env)
    try:
        result = await client.request(
            "initialize", {"processId": None, "rootUri": None, "capabilities": {}}, seconds=20
        )
        elapsed = (time.monotonic() - started) * 1000
        commands = result["capabilities"]["executeCommandProvider"]["commands"]
        client.notify("initialized", {})
    except Exception as exc:
        await client.shutdown()
        return f"serve --stdio failed: {type(exc).__name__}: {exc}", False
    code = await client.shutdown()
    return (
        f"serve --stdio answered initialize in {elapsed:.0f} ms with {len(commands)} commands; "
        f"shutdown and exit OK (exit code {code})",
        code == 0,
    )
