"""The one HTTP client of the model servers: proxies, trusted certificates, timeouts, limits.

Every model request (streams, the model list, the doctor's probes) goes through one
``httpx.AsyncClient`` made here, so that all of them honour the same network:

* **Proxies** as httpx reads them from the environment (``trust_env``): ``HTTP_PROXY``,
  ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (curl's rules: ``localhost``, an address, a
  domain and its subdomains, ``*`` for none). The ``network.proxy`` setting replaces the
  environment's proxy for every model server; ``NO_PROXY`` still exempts its hosts.
* **Trusted certificates** as httpx reads them: certifi's bundle, or ``SSL_CERT_FILE`` /
  ``SSL_CERT_DIR`` instead of it (their standard meaning); ``network.caFile`` is *added* to that
  trust (a private CA, a TLS-inspecting company network), so public providers keep working.

:func:`proxy_for` says which proxy a URL goes through, mirroring those rules, for the messages
that name it (a loopback server reached through a proxy) and for ``fastedit-lsp doctor``.
"""

from __future__ import annotations

import ipaddress
import os
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit
from urllib.request import getproxies

from .base import BackendError

if TYPE_CHECKING:
    import httpx

    from .aio_transport import AiohttpTransport

#: Idle connections older than this are closed, not reused: uvicorn (vLLM, llama-cpp-python)
#: and Node close theirs after 5 s, so a client keeping them longer meets the keep-alive race
#: more often.
KEEPALIVE_SECONDS = 4.0
#: Connections open at once, per client; a released one stays in the pool (idle) until
#: KEEPALIVE_SECONDS, so this also bounds the idle ones.
MAX_CONNECTIONS = 20
#: The proxy schemes httpx speaks without an extra package.
_PROXY_SCHEMES = ("http", "https")
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


@dataclass(frozen=True)
class Network:
    """The ``network`` settings the client is made from (``None``: the environment's)."""

    proxy: str | None = None
    ca_file: str | None = None


@dataclass(frozen=True)
class Proxy:
    """A proxy a URL goes through, and which setting or variable named it."""

    url: str
    source: str

    @property
    def shown(self) -> str:
        """The proxy's URL without its password."""
        return redact(self.url)


def redact(url: str) -> str:
    """``url`` with a password replaced by ``***`` (proxy URLs may hold credentials)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    except ValueError:
        return "<a proxy URL that cannot be read>"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def environment_proxies(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{"http": ..., "https": ..., "all": ..., "no": ...}`` as httpx reads them (urllib's
    ``getproxies``: upper and lower case, and the system's settings on Windows and macOS)."""
    if environ is not None:
        found: dict[str, str] = {}
        for name, value in environ.items():
            lower = name.lower()
            if value and lower.endswith("_proxy") and lower[:-6] in ("http", "https", "all", "no"):
                found[lower[:-6]] = value
        return found
    return {k: v for k, v in getproxies().items() if k in ("http", "https", "all", "no") and v}


def _bypassed(host: str, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` exempts ``host`` (httpx's reading of curl's rules)."""
    host = host.lower().strip("[]")
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if "://" in entry:
            entry = urlsplit(entry).hostname or ""
            if entry == host:
                return True
            continue
        if _is_address(entry) or entry == "localhost":
            if entry.strip("[]") == host:
                return True
            continue
        if host.endswith(entry):  # "example.com" covers it and its subdomains, as httpx reads it
            return True
    return False


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def proxy_for(
    url: str, network: Network = Network(), environ: Mapping[str, str] | None = None
) -> Proxy | None:
    """The proxy a request to ``url`` goes through, or None when it goes directly."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return None
    found = environment_proxies(environ)
    if host and _bypassed(host, found.get("no", "")):
        return None
    if network.proxy:
        return Proxy(network.proxy, "network.proxy")
    for scheme in (parts.scheme.lower(), "all"):
        value = found.get(scheme)
        if value:
            url_of = value if "://" in value else f"http://{value}"
            return Proxy(url_of, f"{scheme.upper()}_PROXY")
    return None


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (``localhost``, ``127.x``, ``::1``)."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def trust_in_use(network: Network = Network(), environ: Mapping[str, str] | None = None) -> str:
    """The certificates the client trusts, in words (for ``doctor``)."""
    env = os.environ if environ is None else environ
    if env.get("SSL_CERT_FILE"):
        base = f"SSL_CERT_FILE={env['SSL_CERT_FILE']}"
    elif env.get("SSL_CERT_DIR"):
        base = f"SSL_CERT_DIR={env['SSL_CERT_DIR']}"
    else:
        base = "certifi's bundle"
    return f"{base} + network.caFile={network.ca_file}" if network.ca_file else base


def tls_context(network: Network) -> ssl.SSLContext:
    """httpx's default context (``SSL_CERT_FILE``, ``SSL_CERT_DIR`` or certifi) with
    ``network.caFile`` added; raises :class:`BackendError` for a CA file that cannot be read."""
    import httpx

    try:
        context = httpx.create_ssl_context(trust_env=True)
    except (OSError, ssl.SSLError) as exc:  # SSL_CERT_FILE or SSL_CERT_DIR that cannot be read
        variable = "SSL_CERT_FILE" if os.environ.get("SSL_CERT_FILE") else "SSL_CERT_DIR"
        raise BackendError(
            "connect",
            f"{variable}={os.environ.get(variable, '')!r} cannot be read as PEM certificates "
            f"({getattr(exc, 'strerror', None) or exc}). Point it at a CA bundle (PEM), or "
            "unset it to trust certifi's bundle.",
        ) from None
    if network.ca_file:
        path = os.path.expanduser(network.ca_file)
        try:
            context.load_verify_locations(cafile=path)
        except (OSError, ssl.SSLError) as exc:
            raise BackendError(
                "connect",
                f"network.caFile {network.ca_file!r} cannot be read as PEM certificates "
                f"({getattr(exc, 'strerror', None) or exc}). Give the path of the CA's "
                "certificate (PEM).",
            ) from None
    return context


class _Trust:
    """The client's TLS context (:func:`tls_context`), made on first use: by the warm-up's
    thread when a model server speaks TLS, else by the first connection that does (a client of
    plain-``http`` servers never reads the certificates)."""

    def __init__(self, network: Network) -> None:
        self._network = network
        self._context: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    def __call__(self) -> ssl.SSLContext:
        context = self._context
        if context is None:
            with self._lock:
                if self._context is None:
                    self._context = tls_context(self._network)
                context = self._context
        return context


def _check_proxy(url: str, source: str) -> None:
    try:
        scheme = urlsplit(url).scheme.lower() if "://" in url else "http"
    except ValueError:
        scheme = ""
    if scheme in _PROXY_SCHEMES:
        return
    if scheme.startswith("socks"):
        raise BackendError(
            "connect",
            f"{source} is a {scheme}:// proxy ({redact(url)}), which fastedit-lsp does not "
            "speak: use an http:// or https:// proxy (most SOCKS tools offer one, e.g. "
            "`ssh -D` with an HTTP front such as privoxy), or unset it.",
        )
    raise BackendError(
        "connect", f"{source} ({redact(url)}) is not an http:// or https:// proxy URL."
    )


def new_client(network: Network = Network()) -> httpx.AsyncClient:
    """The client of every model request (see the module docstring): httpx's, on aiohttp's wire
    (:mod:`.aio_transport`), with one pool per proxy routed by httpx's ``mounts`` as httpx routes
    the environment's proxies, its URLs parsed once and cookies read only when a response sets
    one (:mod:`.model_client`). Its TLS context reads the trusted certificates (~21 ms of CPU)
    when first needed (:func:`prepare`: the warm-up's thread), or now with ``network.caFile``,
    so that a CA file that cannot be read is said at once."""
    import httpx

    from .aio_transport import AiohttpTransport
    from .model_client import ModelClient

    if network.proxy:
        _check_proxy(network.proxy, "network.proxy")
    else:
        for scheme, value in environment_proxies().items():
            if scheme != "no":
                _check_proxy(value, f"{scheme.upper()}_PROXY")
    trust = _Trust(network)
    if network.ca_file:
        trust()

    def transport(proxy: str | None = None) -> AiohttpTransport:
        return AiohttpTransport(
            trust,
            proxy=proxy,
            max_connections=MAX_CONNECTIONS,
            keepalive_seconds=KEEPALIVE_SECONDS,
        )

    found = environment_proxies()
    proxies = (
        {"all": network.proxy}
        if network.proxy
        else {k: v for k, v in found.items() if k in ("http", "https", "all")}
    )
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {
        f"{scheme}://": transport(url if "://" in url else f"http://{url}")
        for scheme, url in proxies.items()
    }
    for raw in found.get("no", "").split(","):
        entry = raw.strip()
        if entry == "*":  # no proxy for any host
            mounts = {}
            break
        if entry and mounts:
            mounts[_no_proxy_pattern(entry)] = None  # None: the direct transport
    return ModelClient(
        timeout=httpx.Timeout(30.0, connect=5.0),
        # The proxies and certificates are read above, from the environment and the settings.
        trust_env=False,
        transport=transport(),
        mounts=mounts or None,
        follow_redirects=False,
    )


def _no_proxy_pattern(entry: str) -> str:
    """A ``NO_PROXY`` entry as an httpx mount pattern (as httpx maps the environment's)."""
    if "://" in entry:
        return entry
    if _is_address(entry) and ":" in entry.strip("[]"):
        return f"all://[{entry.strip('[]')}]"
    if _is_address(entry) or entry.lower() == "localhost":
        return f"all://{entry}"
    return f"all://*{entry}"


def _route(client: httpx.AsyncClient, url: str) -> AiohttpTransport | None:
    """The transport httpx sends a request to ``url`` through (httpx's own routing by its
    mounts: direct or a proxy's), or None when it is not one of ours (a test's
    ``MockTransport``) or the URL is not one."""
    import httpx

    from .aio_transport import AiohttpTransport

    route = getattr(client, "_transport_for_url", None)
    try:
        transport = route(httpx.URL(url)) if callable(route) else None
    except httpx.InvalidURL:
        return None
    return transport if isinstance(transport, AiohttpTransport) else None


def prepare(client: httpx.AsyncClient, url: str) -> None:
    """Make what a request to ``url`` needs before it is sent: the TLS context, when TLS is
    spoken on its way (blocking: the warm-up calls it in a thread)."""
    transport = _route(client, url)
    if transport is not None:
        transport.prepare(url)


async def preconnect(client: httpx.AsyncClient, url: str, seconds: float = 5.0) -> None:
    """Open a connection to ``url``'s server on the transport httpx would send a request there
    through (direct or a proxy's), nothing sent (:meth:`.AiohttpTransport.preconnect`); nothing
    when that transport is not one of ours (a test's ``MockTransport``)."""
    transport = _route(client, url)
    if transport is not None:
        await transport.preconnect(url, seconds)


def pool_counts(client: httpx.AsyncClient) -> dict[str, int]:
    """The client's open connections and, of those, idle ones (``fastedit/debugStats``), over
    its transports (the direct one and one per proxy)."""
    from .aio_transport import AiohttpTransport

    transports = [getattr(client, "_transport", None)]
    transports += list(getattr(client, "_mounts", {}).values())
    open_, idle = 0, 0
    for transport in transports:
        if isinstance(transport, AiohttpTransport):
            opened, idled = transport.counts()
            open_, idle = open_ + opened, idle + idled
    return {"open": open_, "idle": idle}
