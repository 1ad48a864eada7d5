"""The model backends: the wire formats, the HTTP client and what keeps a provider usable."""

import sys

# httpx's package imports its command line (``httpx._main``: click and pygments when they are
# installed, for its ``httpx`` console script), which the server never runs: a third of httpx's
# import time (40 of 113 ms at load 6, ``python -X importtime``), paid by the warm-up before the
# first job of a session. Every module here that imports httpx comes through this package
# first; httpx then defines its stand-in ``main`` that says the CLI's dependencies are missing.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
