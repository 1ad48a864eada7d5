"""Real Python files for the offline engine's corpora: the running interpreter's stdlib."""

from __future__ import annotations

import sysconfig
from pathlib import Path


def stdlib_modules(count: int, min_lines: int, max_lines: int) -> list[str]:
    """The first ``count`` top-level stdlib modules, by name, of ``min_lines``..``max_lines``."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    texts = []
    for path in sorted(stdlib.glob("*.py")):
        if path.name.startswith("_sysconfigdata"):  # generated, differs between builds
            continue
        text = path.read_text(encoding="utf-8")
        if min_lines <= text.count("\n") <= max_lines:
            texts.append(text)
    return texts[:count]
