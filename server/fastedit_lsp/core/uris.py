"""File paths of ``file:`` URIs, for the layers that may not import pygls.

Stdlib only; the same mapping as pygls' ``to_fs_path`` (UNC paths, lower-cased Windows drive
letters, the platform's separator), which the language server layer uses.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlparse

_DRIVE_LETTER_PATH = re.compile(r"^\/[a-zA-Z]:")


def to_fs_path(uri: str) -> str | None:
    """The file path of a ``file:`` URI; None for any other scheme."""
    try:
        parsed = urlparse(uri)
    except (TypeError, ValueError):
        return None
    if unquote(parsed.scheme) != "file":
        return None
    netloc, path = unquote(parsed.netloc), unquote(parsed.path)
    if netloc and path:
        value = f"//{netloc}{path}"
    elif _DRIVE_LETTER_PATH.match(path):
        value = path[1].lower() + path[2:]
    else:
        value = path
    if os.name == "nt":
        value = value.replace("/", "\\")
    return value
