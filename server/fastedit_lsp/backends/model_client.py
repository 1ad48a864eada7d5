"""The one ``httpx.AsyncClient`` of the model requests, without two costs httpx pays per request.

httpx's client does, for every request, two things whose result depends only on what it was made
with, or that model servers seldom need:

* it parses the request's URL text again (``build_request``: 30–40 µs, RFC 3986 checks in pure
  Python), although a backend asks the same few URLs again and again. Here a URL given as text
  is parsed once per client (:meth:`ModelClient.build_request`), the parsed ``httpx.URL`` reused
  (httpx's URLs are immutable);
* it merges the client's own headers (``User-Agent``...) into the request's again
  (``Headers`` copies and case-insensitive searches: 40 µs at load 8), although a backend sends
  the same few sets of headers. Here the merged set is kept per distinct set of the request's
  headers, and the request built from it (:meth:`ModelClient.build_request`) when nothing else
  is asked (no cookie, query parameter or form: what every model request is);
* it reads every response's headers into an ``email.message.Message`` and a ``urllib`` request
  for its cookie jar (``Cookies.extract_cookies``: about 40 µs), to find that a model API set no
  cookie. Here a response's cookies are read only when it sets one (:class:`_SetCookies`); those
  it sets are kept and sent back exactly as httpx does.

Everything else is httpx's, unchanged: the request itself (``httpx.Request``), its routing
through the client's mounts (the proxies), auth, redirects, timeouts, the response; a request
with anything more is built by httpx's own ``build_request``.
"""

from __future__ import annotations

from typing import Any

import httpx

#: Parsed URLs and merged header sets kept per client: the model servers' few URLs and keys, so
#: this is a bound, not a budget.
CACHE_SIZE = 64
#: The ``build_request`` options a model request uses; with any other, httpx builds it.
_PLAIN_OPTIONS = frozenset({"content", "headers", "timeout", "extensions"})


class _SetCookies(httpx.Cookies):
    """httpx's cookie jar, that reads a response only when it sets a cookie (``Set-Cookie``;
    ``Set-Cookie2`` is ignored by the jar's default policy anyway)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


class ModelClient(httpx.AsyncClient):
    """``httpx.AsyncClient`` with its URLs parsed once, its headers merged once per set and
    cookies read only when set (see the module docstring); made by :func:`.network.new_client`,
    which never changes the client's own headers afterwards (the merged sets are kept)."""

    def __init__(self, **options: Any) -> None:
        cookies = options.pop("cookies", None)
        super().__init__(**options)
        self._set_cookies = _SetCookies(cookies)
        self._urls: dict[str, httpx.URL] = {}
        self._merged: dict[tuple[tuple[str, str], ...], httpx.Headers] = {}

    @property
    def cookies(self) -> httpx.Cookies:
        return self._set_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._set_cookies = _SetCookies(cookies)

    def build_request(self, method: str, url: httpx.URL | str, **options: Any) -> httpx.Request:
        """httpx's request for these options; a model request's (see :data:`_PLAIN_OPTIONS`)
        built from its URL parsed once and its headers merged once with the client's."""
        if isinstance(url, str):
            url = self.url(url)
        headers = options.get("headers")
        if (
            # ``stream()`` and ``request()`` pass every option, the unused ones as None.
            {name for name, value in options.items() if value is not None} - _PLAIN_OPTIONS
            or not isinstance(headers, dict)
            or self.cookies
            or self.params
        ):
            return super().build_request(method, url, **options)
        extensions = dict(options.get("extensions") or {})
        if "timeout" not in extensions:
            timeout = options.get("timeout", httpx.USE_CLIENT_DEFAULT)
            chosen = self.timeout if timeout is httpx.USE_CLIENT_DEFAULT else httpx.Timeout(timeout)
            extensions["timeout"] = chosen.as_dict()
        return httpx.Request(
            method,
            url,
            content=options.get("content"),
            headers=self._merged_headers(headers),
            extensions=extensions,
        )

    def url(self, text: str) -> httpx.URL:
        """``httpx.URL(text)``, parsed once per client."""
        parsed = self._urls.get(text)
        if parsed is None:
            parsed = httpx.URL(text)
            if len(self._urls) >= CACHE_SIZE:
                self._urls.clear()
            self._urls[text] = parsed
        return parsed

    def _merged_headers(self, headers: dict[str, str]) -> httpx.Headers:
        """The client's headers with ``headers`` over them, as httpx merges them (its own
        ``Headers.update``), once per distinct set; ``httpx.Request`` copies what it is given."""
        key = tuple(headers.items())
        merged = self._merged.get(key)
        if merged is None:
            merged = httpx.Headers(self.headers)
            merged.update(headers)
            if len(self._merged) >= CACHE_SIZE:
                self._merged.clear()
            self._merged[key] = merged
        return merged
