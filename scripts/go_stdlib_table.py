"""Regenerate ``server/fastedit_lsp/engines/names/go_stdlib.txt`` from a Go toolchain.

The table lists, for every standard-library package, its exported package-level names
(functions, constants, variables, types), read from the API files a Go distribution ships
(``$GOROOT/api/go1*.txt``: the Go 1 compatibility record, one line per exported name). Nothing
of Go runs. Usage::

    python scripts/go_stdlib_table.py [GOROOT]   # default: `go env GOROOT`, else /usr/lib/go

The committed table was made from Debian bookworm's golang-1.19 (go1.19.8).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

LINE = re.compile(r"^pkg ([\w./]+)(?: \([^)]*\))?, (?:func|const|var|type) (\w+)")
OUT = Path(__file__).resolve().parents[1] / "server/fastedit_lsp/engines/names/go_stdlib.txt"


def goroot() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    try:
        found = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True)
        return Path(found.stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        return Path("/usr/lib/go")


def main() -> None:
    root = goroot()
    version = (root / "VERSION").read_text().split()[0]
    members: dict[str, set[str]] = {}
    for api in sorted((root / "api").glob("go1*.txt")):
        for line in api.read_text().splitlines():
            match = LINE.match(line)
            if match:
                members.setdefault(match.group(1), set()).add(match.group(2))
    lines = [f"# Go standard library exported names, from {version}'s api/go1*.txt"]
    lines += [f"{path} {' '.join(sorted(names))}" for path, names in sorted(members.items())]
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
