"""The HTTP client's TLS context, whose trusted certificates are read at its first handshake.

httpx's default context reads certifi's bundle when the client is made: ~27 ms of CPU (the
warm-up's longest step after the imports; a first job arriving then waited for it). A session
whose models all speak plain HTTP (a local server: Ollama, llama.cpp, vLLM) never needs it. So
the context here starts without trusted certificates and reads the same bundle (certifi's, as
httpx does) before its first handshake; when a profile uses https, the warm-up reads it as its
last step, off the event loop (``load_verify_locations`` releases the GIL while it reads).
Verification is as strict as httpx's default: the hostname checked, a certificate required.
"""

from __future__ import annotations

import ssl
import threading
from typing import Any


class DeferredTrust(ssl.SSLContext):
    """A client TLS context (``PROTOCOL_TLS_CLIENT``) that loads certifi's certificates at its
    first ``wrap_bio``/``wrap_socket`` (or at :meth:`load_trust`)."""

    _lock: threading.Lock
    _loaded: bool

    def __new__(cls) -> DeferredTrust:
        context = super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)
        context._lock = threading.Lock()
        context._loaded = False
        return context

    def __init__(self) -> None:
        # ssl.SSLContext's protocol goes to __new__; its defaults for a client are kept:
        # check_hostname on, CERT_REQUIRED.
        pass

    @property
    def trust_loaded(self) -> bool:
        return self._loaded

    def load_trust(self) -> None:
        """Read the trusted certificates now, once (safe from any thread)."""
        if self._loaded:
            return
        with self._lock:
            if not self._loaded:
                import certifi

                self.load_verify_locations(cafile=certifi.where())
                self._loaded = True

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self.load_trust()
        return super().wrap_bio(*args, **kwargs)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self.load_trust()
        return super().wrap_socket(*args, **kwargs)


_shared: DeferredTrust | None = None


def shared() -> DeferredTrust:
    """The process' context (its HTTP clients share one set of trusted certificates)."""
    global _shared
    if _shared is None:
        _shared = DeferredTrust()
    return _shared
