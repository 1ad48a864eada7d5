"""The one ``httpx.AsyncClient`` of the model requests, without two costs httpx pays per request.

httpx's client does, for every request, two things whose result depends only on what it was made
with, or that model servers seldom need:

* it parses the request's URL text again (``build_request``: 30–40 µs, RFC 3986 checks in pure
  Python), although a backend asks the same few URLs again and again. Here a URL given as text
  is parsed once per client (:meth:`ModelClient.build_request`), the parsed ``httpx.URL`` reused
  (httpx's URLs are immutable);
* it reads every response's headers into an ``email.message.Message`` and a ``urllib`` request
  for its cookie jar (``Cookies.extract_cookies``: about 40 µs), to find that a model API set no
  cookie. Here a response's cookies are read only when it sets one (:class:`_SetCookies`); those
  it sets are kept and sent back exactly as httpx does.

Everything else is httpx's, unchanged: the request's building and headers, its routing through
the client's mounts (the proxies), auth, redirects, timeouts, the response.
"""

from __future__ import annotations

from typing import Any

import httpx

#: Parsed URLs kept per client; the model servers' few URLs, so this is a bound, not a budget.
URL_CACHE_SIZE = 64


class _SetCookies(httpx.Cookies):
    """httpx's cookie jar, that reads a response only when it sets a cookie (``Set-Cookie``;
    ``Set-Cookie2`` is ignored by the jar's default policy anyway)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


class ModelClient(httpx.AsyncClient):
    """``httpx.AsyncClient`` with its URLs parsed once and cookies read only when set (see the
    module docstring); made by :func:`.network.new_client`."""

    def __init__(self, **options: Any) -> None:
        cookies = options.pop("cookies", None)
        super().__init__(**options)
        self._set_cookies = _SetCookies(cookies)
        self._urls: dict[str, httpx.URL] = {}

    @property
    def cookies(self) -> httpx.Cookies:
        return self._set_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._set_cookies = _SetCookies(cookies)

    def build_request(self, method: str, url: httpx.URL | str, **options: Any) -> httpx.Request:
        if isinstance(url, str):
            url = self.url(url)
        return super().build_request(method, url, **options)

    def url(self, text: str) -> httpx.URL:
        """``httpx.URL(text)``, parsed once per client."""
        parsed = self._urls.get(text)
        if parsed is None:
            parsed = httpx.URL(text)
            if len(self._urls) >= URL_CACHE_SIZE:
                self._urls.clear()
            self._urls[text] = parsed
        return parsed
