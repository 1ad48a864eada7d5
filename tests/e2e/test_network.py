"""The real server behind a proxy and with a private CA: a job's request goes through the proxy
(which sees it) unless NO_PROXY exempts the host; a model server whose certificate a CA made at
test time signed is trusted through SSL_CERT_FILE or network.caFile, and without either the job
fails with the certificate message and nothing is inserted; ``doctor`` shows the proxy and the
CA in use and probes through them."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.harness import Editor, hermetic_env
from tests.support.network_servers import LocalCA, ModelServer, Proxy, make_ca

from .conftest import MakeEditor

URI = "file:///tmp/fastedit-e2e/network.py"
TEXT = "def one():\n    return \n"
CURSOR = TEXT.index("return ") + len("return ")


def model_env(base_url: str) -> dict[str, str]:
    return {
        "FASTEDIT_FAST_BASE_URL": base_url,
        "FASTEDIT_FAST_MODEL": "m",
        "FASTEDIT_STANDARD_BASE_URL": base_url,
        "FASTEDIT_STANDARD_MODEL": "m",
    }


async def complete(editor: Editor, uri: str = URI) -> dict[str, Any]:
    editor.open(uri, TEXT)
    return await editor.run(
        "fastedit.completeRest", {"uri": uri, "position": editor.pos(uri, CURSOR)}
    )


def push_settings(editor: Editor, config: Path, network: str) -> None:
    """Rewrite the settings file with ``network`` (TOML lines of its ``[fastedit.network]``) and
    push the editor's settings (``didChangeConfiguration``), which makes the server read the
    file again. ``network.*`` may come from the file, never from the editor's own settings."""
    config.write_text(f"[fastedit]\n[fastedit.network]\n{network}\n", encoding="utf-8")
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"fastedit": {"mode": "fast"}})
    )


@pytest.fixture
def ca(tmp_path: Path) -> LocalCA:
    return make_ca(tmp_path)


async def test_a_jobs_request_goes_through_the_environments_proxy(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    stub.script(Answer(text="1"))
    async with Proxy().running() as proxy:
        editor = await make_editor(env={"HTTP_PROXY": proxy.url})
        record = await complete(editor)
        assert record["state"] == "done", record
    assert editor.text(URI) == TEXT[:CURSOR] + "1" + TEXT[CURSOR:]
    assert f"POST {stub.base_url}/chat/completions HTTP/1.1".encode() in proxy.seen


async def test_no_proxy_keeps_the_loopback_model_off_the_proxy(
    make_editor: MakeEditor, stub: StubModelServer
) -> None:
    stub.script(Answer(text="1"))
    async with Proxy().running() as proxy:
        editor = await make_editor(env={"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"})
        record = await complete(editor)
        assert record["state"] == "done", record
    assert proxy.seen == []


async def test_a_private_ca_given_in_ssl_cert_file_is_trusted(
    make_editor: MakeEditor, ca: LocalCA
) -> None:
    async with ModelServer(context=ca.server_context()).running() as server:
        env = {**model_env(server.base_url), "SSL_CERT_FILE": str(ca.pem)}
        editor = await make_editor(env=env, model=False)
        record = await complete(editor)
    assert record["state"] == "done", record
    assert editor.text(URI) == TEXT[:CURSOR] + "ok" + TEXT[CURSOR:]


async def test_a_private_ca_given_in_network_ca_file_is_trusted(
    make_editor: MakeEditor, ca: LocalCA
) -> None:
    async with ModelServer(context=ca.server_context()).running() as server:
        editor = await make_editor(
            env=model_env(server.base_url),
            model=False,
            init_options={"network": {"caFile": str(ca.pem)}},
        )
        record = await complete(editor)
    assert record["state"] == "done", record
    assert editor.text(URI) == TEXT[:CURSOR] + "ok" + TEXT[CURSOR:]


async def test_an_untrusted_certificate_fails_the_job_saying_how_to_trust_it(
    make_editor: MakeEditor, ca: LocalCA
) -> None:
    async with ModelServer(context=ca.server_context()).running() as server:
        editor = await make_editor(
            env=model_env(server.base_url), model=False, init_options={"failover": []}
        )
        record = await complete(editor)
    assert record["state"] == "failed", record
    assert "not trusted" in record["error"]
    assert "network.caFile" in record["error"]
    assert editor.text(URI) == TEXT  # nothing inserted
    assert server.seen == []  # no request was sent over the refused connection


async def test_doctor_shows_the_proxy_and_ca_and_probes_through_them(
    stub: StubModelServer, ca: LocalCA
) -> None:
    async with Proxy().running() as proxy:
        out = await asyncio.to_thread(
            subprocess.run,
            ["fastedit-lsp", "doctor"],
            capture_output=True,
            text=True,
            env=hermetic_env(
                HTTP_PROXY=proxy.url,
                SSL_CERT_FILE=str(ca.pem),
                FASTEDIT_FAST_BASE_URL=stub.base_url,
                FASTEDIT_FAST_MODEL="stub-fast",
            ),
            timeout=60,
        )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"HTTP_PROXY = {proxy.url}" in out.stdout
    assert f"trusted certificates: SSL_CERT_FILE={ca.pem}" in out.stdout
    assert f"via: proxy {proxy.url} (HTTP_PROXY)" in out.stdout
    assert f"GET {stub.base_url}/models HTTP/1.1".encode() in proxy.seen
    assert f"POST {stub.base_url}/chat/completions HTTP/1.1".encode() in proxy.seen


# -- the client is kept per network settings and follows their change ----------------------------


async def test_a_proxy_set_in_the_settings_file_later_carries_the_next_jobs_request(
    make_editor: MakeEditor, stub: StubModelServer, tmp_path: Path
) -> None:
    """The HTTP client is made once per network settings (its proxies and certificates read
    then), not per job: a ``network.proxy`` that arrives with a settings change makes a new one,
    and the next job's request goes through that proxy."""
    stub.script(Answer(text="1"), Answer(text="1"))
    config = tmp_path / "fastedit.toml"
    config.write_text("[fastedit]\n", encoding="utf-8")
    async with Proxy().running() as proxy:
        editor = await make_editor(env={"FASTEDIT_CONFIG": str(config)})
        assert (await complete(editor))["state"] == "done"
        assert proxy.seen == []  # directly, and the client is kept for the next job
        push_settings(editor, config, f'proxy = "{proxy.url}"')
        second = URI.replace("network.py", "network_2.py")
        record = await complete(editor, second)
        assert record["state"] == "done", record
    assert editor.text(second) == TEXT[:CURSOR] + "1" + TEXT[CURSOR:]
    assert proxy.seen == [f"POST {stub.base_url}/chat/completions HTTP/1.1".encode()]


async def test_a_ca_file_set_in_the_settings_file_later_is_trusted_by_the_next_job(
    make_editor: MakeEditor, ca: LocalCA, tmp_path: Path
) -> None:
    config = tmp_path / "fastedit.toml"
    config.write_text("[fastedit]\n", encoding="utf-8")
    async with ModelServer(context=ca.server_context()).running() as server:
        env = {**model_env(server.base_url), "FASTEDIT_CONFIG": str(config)}
        editor = await make_editor(env=env, model=False, init_options={"failover": []})
        first = await complete(editor)
        assert first["state"] == "failed" and "not trusted" in first["error"], first
        push_settings(editor, config, f"caFile = {str(ca.pem)!r}")
        second = URI.replace("network.py", "network_2.py")
        record = await complete(editor, second)
    assert record["state"] == "done", record
    assert editor.text(second) == TEXT[:CURSOR] + "ok" + TEXT[CURSOR:]
