"""The HTTP client's TLS context: certifi's certificates read at the first handshake, and
verification as strict as httpx's default (``backends/trust.py``)."""

from __future__ import annotations

import ssl
import threading

import certifi
import httpx

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
