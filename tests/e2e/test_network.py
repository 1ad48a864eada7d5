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


async def complete(editor: Editor) -> dict[str, Any]:
    editor.open(URI, TEXT)
    return await editor.run(
        "fastedit.completeRest", {"uri": URI, "position": editor.pos(URI, CURSOR)}
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
