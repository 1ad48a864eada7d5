"""Byte-compile a checkout's package, as ``pip install .`` does at install time.

Where ``PYTHONDONTWRITEBYTECODE`` is set, a server started from an editable checkout compiles
every module it imports again, in every process; the bench and the test suite write the
bytecode once before they start servers. Stale bytecode is never read (Python checks each file's
source against it: mtime and size), and a folder that cannot be written (an install owned by
another user) is left as it is, silently.
"""

from __future__ import annotations

import compileall
from pathlib import Path


def byte_compile(package: Path) -> None:
    """Write the bytecode of every module under ``package`` whose bytecode is missing or stale."""
    compileall.compile_dir(package, quiet=2, workers=1)
