"""The model client on real loopback sockets: a kept-alive connection reset as the request
arrives, TLS with a CA made at test time (trusted through SSL_CERT_FILE, SSL_CERT_DIR and
network.caFile, or not), a forward and a CONNECT proxy (and NO_PROXY), and the messages that
name what to do when one of them fails."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from fastedit_lsp.backends import network
from fastedit_lsp.backends.base import BackendError, ChatMessage, ChatRequest, StreamInfo
from fastedit_lsp.backends.network import (
    Network,
    new_client,
    prepare,
    proxy_for,
    tls_context,
)
from fastedit_lsp.backends.openai import OpenAICompatibleBackend
from fastedit_lsp.backends.ratelimit import RateLimits
from fastedit_lsp.settings import load
from tests.support.network_servers import (
    CERT_VARIABLES,
    PROXY_VARIABLES,
    LocalCA,
    ModelServer,
    Proxy,
    make_ca,
    read_request,
)

REQUEST = ChatRequest(messages=(ChatMessage("user", "say ok"),), max_tokens=8)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or certificate variable but those a test sets."""
    for name in (*PROXY_VARIABLES, *CERT_VARIABLES):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def ca(tmp_path: Path) -> LocalCA:
    return make_ca(tmp_path)


def backend(
    client: httpx.AsyncClient, base_url: str, network: Network | None = None
) -> OpenAICompatibleBackend:
    return OpenAICompatibleBackend(
        client,
        provider="openai-compatible",
        base_url=base_url,
        model="m",
        api_key=None,
        timeout_ms=5_000,
        rate_limits=RateLimits(),
        backoff=lambda attempt: 0.0,
        network=network,
    )


async def answer(base_url: str, network: Network | None = None) -> str:
    network = network or Network()
    async with new_client(network) as client:
        texts = [t async for t in backend(client, base_url, network).stream(REQUEST, StreamInfo())]
    return "".join(texts)


async def failure(base_url: str, network: Network | None = None) -> tuple[BackendError, list[str]]:
    network = network or Network()
    texts: list[str] = []
    async with new_client(network) as client:
        with pytest.raises(BackendError) as caught:
            async for text in backend(client, base_url, network).stream(REQUEST, StreamInfo()):
                texts.append(text)
    return caught.value, texts


# --- keep-alive ----------------------------------------------------------------------------------


async def test_a_reset_of_a_kept_alive_connection_as_the_request_arrives_is_sent_again() -> None:
    """uvicorn and Node close idle connections after 5 s; one reset (RST) just as the next
    request arrives loses nothing: the request goes again, once, on a new connection."""
    async with ModelServer(reset_requests={2}).running() as server, new_client() as client:
        first = [t async for t in backend(client, server.base_url).stream(REQUEST, StreamInfo())]
        second = [t async for t in backend(client, server.base_url).stream(REQUEST, StreamInfo())]
    assert "".join(first) == "".join(second) == "ok"
    # The second request came on the kept connection, was reset, and went again on a new one.
    assert [number for number, _ in server.seen] == [1, 1, 2]


async def test_a_reset_of_a_new_connection_is_not_sent_again() -> None:
    async with ModelServer(reset_requests={1}).running() as server:
        error, texts = await failure(server.base_url)
    assert error.kind == "dropped"
    assert texts == []
    assert len(server.seen) == 1


# --- the client's requests ---------------------------------------------------------------------

#: The options ``httpx.AsyncClient.stream()`` passes to ``build_request`` besides the content,
#: headers and extensions (httpx 0.28).
STREAM_OPTIONS: dict[str, Any] = {
    "data": None,
    "files": None,
    "json": None,
    "params": None,
    "cookies": None,
    "timeout": httpx.USE_CLIENT_DEFAULT,
    "extensions": {"timeout": {"read": 2.0}},
}


@pytest.mark.parametrize(
    "options",
    [
        {"content": b'{"a": 1}', "headers": {"Authorization": "Bearer k", "Accept": "x/y"}},
        {"headers": {"accept-encoding": "identity"}, "timeout": httpx.Timeout(3.0, connect=1.0)},
        {"content": b"", "headers": {}, "extensions": {"trace": None, "timeout": {"read": 2.0}}},
        {"headers": {"A": "1"}, "params": {"q": "1"}},  # built by httpx itself
        # What ``client.stream()`` passes: every option, the unused ones as None.
        {**STREAM_OPTIONS, "content": b"{}", "headers": {"Authorization": "Bearer k"}},
    ],
)
async def test_the_model_client_builds_a_request_exactly_as_httpx_does(
    options: dict[str, Any],
) -> None:
    """The model client builds its requests from URLs parsed once and headers merged once: the
    same method, URL, headers (names, values, order), body and extensions as httpx's client."""
    url = "https://api.example.test/v1/chat/completions"
    async with new_client() as ours, httpx.AsyncClient(trust_env=False) as plain:
        plain.timeout = ours.timeout
        for _ in range(2):  # the second from what the first kept
            mine, theirs = (
                ours.build_request("POST", url, **options),
                plain.build_request("POST", url, **options),
            )
            assert (mine.method, mine.url) == (theirs.method, theirs.url)
            assert mine.headers.raw == theirs.headers.raw
            assert mine.read() == theirs.read()
            assert mine.extensions == theirs.extensions


async def test_a_streamed_model_request_is_built_from_what_the_client_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``client.stream()`` passes every option of ``build_request``, the unused ones as None:
    such a request is still a plain one, never handed to httpx's own ``build_request`` (which
    parses the URL and merges the headers again: about 50 µs of every model request)."""
    built: list[str] = []
    real = httpx.AsyncClient.build_request

    def counted(self: httpx.AsyncClient, method: str, url: Any, **options: Any) -> httpx.Request:
        built.append(str(url))
        return real(self, method, url, **options)

    monkeypatch.setattr(httpx.AsyncClient, "build_request", counted)
    url = "https://api.example.test/v1/chat/completions"
    async with new_client() as ours:
        options = {**STREAM_OPTIONS, "content": b"{}", "headers": {"Authorization": "Bearer k"}}
        request = ours.build_request("POST", url, **options)
        assert request.url == httpx.URL(url) and request.headers["authorization"] == "Bearer k"
        assert built == []
        ours.build_request("POST", url, **{**options, "params": {"q": "1"}})
        assert built == [url]  # anything more is httpx's to build


# --- cookies --------------------------------------------------------------------------------------


async def test_a_cookie_the_model_server_sets_is_sent_back_and_none_is_invented() -> None:
    """The client reads a response's cookies only when it sets one (httpx read every response
    into its cookie jar); what one sets is kept and sent with the next requests, once."""
    cookies: list[list[bytes]] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (request := await read_request(reader)) is not None:
            lines = request[0].split(b"\r\n")
            cookies.append([line for line in lines if line.lower().startswith(b"cookie:")])
            sets = b"set-cookie: sid=abc; Path=/\r\n" if len(cookies) == 2 else b""
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n" + sets + b"\r\nok")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/models"
    try:
        async with new_client() as client:
            for _ in range(4):
                assert (await client.get(url)).text == "ok"
            assert dict(client.cookies) == {"sid": "abc"}
    finally:
        server.close()
    assert cookies == [[], [], [b"cookie: sid=abc"], [b"cookie: sid=abc"]]


# --- TLS with a private CA -----------------------------------------------------------------------


async def test_a_private_ca_is_trusted_through_network_ca_file(ca: LocalCA) -> None:
    async with ModelServer(context=ca.server_context()).running() as server:
        assert await answer(server.base_url, Network(ca_file=str(ca.pem))) == "ok"


async def test_a_private_ca_is_trusted_through_ssl_cert_file(
    ca: LocalCA, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(ca.pem))
    async with ModelServer(context=ca.server_context()).running() as server:
        assert await answer(server.base_url) == "ok"


async def test_a_private_ca_is_trusted_through_ssl_cert_dir(
    ca: LocalCA, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_DIR", str(ca.directory))
    async with ModelServer(context=ca.server_context()).running() as server:
        assert await answer(server.base_url) == "ok"


async def test_an_untrusted_certificate_says_so_and_how_to_trust_its_ca(ca: LocalCA) -> None:
    async with ModelServer(context=ca.server_context()).running() as server:
        error, texts = await failure(server.base_url)
    assert texts == []
    assert error.kind == "connect"
    assert "certificate of localhost" in error.message
    assert "not trusted" in error.message
    assert "network.caFile" in error.message
    assert "SSL_CERT_FILE" in error.message


async def test_the_certificates_are_read_only_where_tls_is_spoken(
    ca: LocalCA, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client of plain-http model servers (a local model) never reads the trusted
    certificates; for an https server the warm-up's ``prepare`` reads them once, before the
    first request, which then finds them read."""
    made: list[Network] = []
    real = network.tls_context

    def counted(settings: Network) -> Any:
        made.append(settings)
        return real(settings)

    monkeypatch.setattr(network, "tls_context", counted)
    async with ModelServer().running() as server, new_client() as client:
        prepare(client, server.base_url)
        texts = [t async for t in backend(client, server.base_url).stream(REQUEST, StreamInfo())]
    assert "".join(texts) == "ok"
    assert made == []

    monkeypatch.setenv("SSL_CERT_FILE", str(ca.pem))
    async with ModelServer(context=ca.server_context()).running() as server, new_client() as client:
        prepare(client, server.base_url)
        assert made == [Network()]
        texts = [t async for t in backend(client, server.base_url).stream(REQUEST, StreamInfo())]
    assert "".join(texts) == "ok"
    assert made == [Network()]


async def test_an_ssl_cert_file_that_cannot_be_read_is_named_where_tls_is_spoken(
    ca: LocalCA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken SSL_CERT_FILE fails the requests that speak TLS with a message that names it,
    and no longer those to a plain-http server (a local model)."""
    bad = tmp_path / "bundle.pem"
    bad.write_text("not a certificate\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(bad))
    async with ModelServer().running() as server:
        assert await answer(server.base_url) == "ok"
    async with ModelServer(context=ca.server_context()).running() as server:
        error, texts = await failure(server.base_url)
    assert texts == []
    assert error.kind == "connect"
    assert f"SSL_CERT_FILE={str(bad)!r} cannot be read as PEM certificates" in error.message


def test_network_ca_file_is_added_to_the_default_trust(ca: LocalCA) -> None:
    """A public provider keeps working with a private CA given: certifi's CAs stay trusted."""
    default = tls_context(Network()).cert_store_stats()["x509_ca"]
    added = tls_context(Network(ca_file=str(ca.pem))).cert_store_stats()["x509_ca"]
    assert default > 50
    assert added == default + 1


def test_a_ca_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pem"
    with pytest.raises(BackendError) as caught:
        new_client(Network(ca_file=str(missing)))
    assert "network.caFile" in caught.value.message
    assert str(missing) in caught.value.message


# --- proxies -------------------------------------------------------------------------------------


async def test_http_proxy_carries_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    async with Proxy().running() as proxy, ModelServer().running() as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert await answer(server.base_url) == "ok"
    assert proxy.seen == [f"POST {server.base_url}/chat/completions HTTP/1.1".encode()]


async def test_no_proxy_sends_the_request_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    async with Proxy().running() as proxy, ModelServer().running() as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
        assert await answer(server.base_url) == "ok"
    assert proxy.seen == []
    assert len(server.seen) == 1


async def test_a_connect_proxy_tunnels_https(ca: LocalCA, monkeypatch: pytest.MonkeyPatch) -> None:
    async with (
        Proxy().running() as proxy,
        ModelServer(context=ca.server_context()).running() as server,
    ):
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        assert await answer(server.base_url, Network(ca_file=str(ca.pem))) == "ok"
    assert proxy.seen == [f"CONNECT localhost:{server.port} HTTP/1.1".encode()]


async def test_network_proxy_replaces_the_environments_and_keeps_no_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with (
        Proxy().running() as chosen,
        Proxy().running() as environment,
        ModelServer().running() as server,
    ):
        monkeypatch.setenv("HTTP_PROXY", environment.url)
        assert await answer(server.base_url, Network(proxy=chosen.url)) == "ok"
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert await answer(server.base_url, Network(proxy=chosen.url)) == "ok"
    assert len(chosen.seen) == 1  # the second request went directly
    assert environment.seen == []
    assert len(server.seen) == 2


async def test_a_loopback_server_failing_through_a_proxy_names_the_proxy_and_no_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A company proxy cannot reach this machine's loopback: the message says to exempt it."""
    async with Proxy(refuse=True).running() as proxy, ModelServer().running() as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        error, texts = await failure(server.base_url)
    assert texts == []
    assert server.seen == []
    assert f"proxy {proxy.url} (HTTP_PROXY)" in error.message
    assert "NO_PROXY" in error.message


async def test_a_proxy_that_is_down_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    async with Proxy().running() as proxy:
        down = proxy.url  # closed when the block ends
    async with ModelServer().running() as server:
        monkeypatch.setenv("HTTP_PROXY", down)
        error, _ = await failure(server.base_url)
    assert error.kind == "connect"
    assert f"through the proxy {down} (HTTP_PROXY)" in error.message
    assert "NO_PROXY" in error.message


def test_a_socks_proxy_is_refused_with_its_scheme_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(BackendError) as caught:
        new_client()
    assert "ALL_PROXY" in caught.value.message
    assert "socks5://" in caught.value.message


def test_a_proxys_password_is_never_shown() -> None:
    proxy = proxy_for("https://api.example.test/v1", Network(proxy="http://me:s3cret@p:3128"))
    assert proxy is not None
    assert "s3cret" not in proxy.shown
    assert proxy.source == "network.proxy"


@pytest.mark.parametrize(
    ("no_proxy", "url", "proxied"),
    [
        ("", "http://127.0.0.1:8080/v1", True),
        ("127.0.0.1", "http://127.0.0.1:8080/v1", False),
        ("localhost", "http://localhost:8080/v1", False),
        ("example.com", "https://api.example.com/v1", False),
        ("example.com", "https://example.com/v1", False),
        (".example.com", "https://api.example.com/v1", False),
        ("other.com", "https://api.example.com/v1", True),
        ("*", "https://api.example.com/v1", False),
        ("::1", "http://[::1]:8080/v1", False),
    ],
)
def test_no_proxy_is_read_as_httpx_reads_it(no_proxy: str, url: str, proxied: bool) -> None:
    environ = {"ALL_PROXY": "http://proxy:3128", "NO_PROXY": no_proxy}
    assert (proxy_for(url, environ=environ) is not None) is proxied


# --- settings ------------------------------------------------------------------------------------


def test_network_settings_are_not_taken_from_workspace_settings() -> None:
    """Like baseUrl: a repository's settings could send the key through its own proxy."""
    network = {"network": {"proxy": "http://evil:3128", "caFile": "/tmp/evil.pem"}}
    resolved = load({}, None, network)
    assert resolved.settings.network.proxy is None
    assert resolved.settings.network.ca_file is None
    assert any("fastedit.network.proxy" in w for w in resolved.warnings)
    trusted = load({}, network, None)
    assert trusted.settings.network.proxy == "http://evil:3128"
    assert trusted.settings.network.ca_file == "/tmp/evil.pem"
