"""The HTTP client's TLS context: certifi's certificates read at the first handshake, and
verification as strict as httpx's default (``backends/trust.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
import threading
from pathlib import Path

import certifi
import httpx
import pytest

from fastedit_lsp.backends.factory import new_http_client
from fastedit_lsp.backends.trust import DeferredTrust, shared


def _cas(context: ssl.SSLContext) -> int:
    return int(context.cert_store_stats()["x509_ca"])


def test_the_certificates_are_read_at_the_first_handshake_not_before() -> None:
    context = DeferredTrust()
    assert not context.trust_loaded
    assert _cas(context) == 0
    context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="api.example.com")
    assert context.trust_loaded
    # The same certificates as httpx's default context (certifi's bundle).
    assert _cas(context) == _cas(ssl.create_default_context(cafile=certifi.where())) > 0


def test_verification_is_as_strict_as_httpx_default() -> None:
    context = DeferredTrust()
    default = httpx.create_ssl_context()
    assert context.check_hostname is default.check_hostname is True
    assert context.verify_mode == default.verify_mode == ssl.CERT_REQUIRED
    assert context.minimum_version >= default.minimum_version


def test_threads_loading_at_once_read_the_bundle_once() -> None:
    context = DeferredTrust()
    reads: list[str] = []
    load = context.load_verify_locations

    def counted(*args: object, **kwargs: object) -> None:
        reads.append("read")
        load(*args, **kwargs)  # type: ignore[arg-type]

    context.load_verify_locations = counted  # type: ignore[method-assign]
    threads = [threading.Thread(target=context.load_trust) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert reads == ["read"]
    assert context.trust_loaded


def test_the_servers_http_client_uses_the_shared_context() -> None:
    client = new_http_client()
    pool = client._transport._pool  # type: ignore[attr-defined]
    assert pool._ssl_context is shared()


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that no authority signed, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    command = [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
    ]
    subprocess.run(
        [*command, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_a_server_whose_certificate_no_authority_signed_is_refused(
    self_signed: tuple[Path, Path],
) -> None:
    cert, key = self_signed
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.read(1024)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=served)
    port = server.sockets[0].getsockname()[1]
    client = new_http_client()
    try:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(f"https://127.0.0.1:{port}/")
    finally:
        await client.aclose()
        server.close()
        await server.wait_closed()
    assert shared().trust_loaded  # the handshake read the bundle first
