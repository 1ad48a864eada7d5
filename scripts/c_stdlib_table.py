"""Regenerate ``server/fastedit_lsp/engines/names/c_stdlib.txt`` from a C/C++ toolchain.

The table says which names a system header can bring: for every file the preprocessor enters
when it includes one of the listed headers (the C standard library's, common POSIX ones, and
every header of libstdc++), the identifiers of its preprocessed text (macros kept with
``-dD``, so token-pasted names such as ``sinf`` appear expanded) and the files it includes
directly. The names check takes the closure of a header's includes: a superset of what the
header declares (every word counts, a parameter's name too: a name is never flagged wrongly
for that). Reserved names (``__x``, ``_X``) are left out: the check never flags them.

Only the preprocessor runs (``gcc -E``), on a one-line file including the header; nothing is
compiled. Usage::

    python scripts/c_stdlib_table.py            # needs gcc and g++ (Debian: libc6-dev,
                                                # libstdc++-12-dev)

The committed table was made on Debian bookworm (glibc 2.36, GCC 12's libstdc++), with
``_GNU_SOURCE`` defined (the most names: a superset of every feature set).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "server/fastedit_lsp/engines/names/c_stdlib.txt"
C_HEADERS = [
    "assert.h",
    "complex.h",
    "ctype.h",
    "errno.h",
    "fenv.h",
    "float.h",
    "inttypes.h",
    "iso646.h",
    "limits.h",
    "locale.h",
    "math.h",
    "setjmp.h",
    "signal.h",
    "stdalign.h",
    "stdarg.h",
    "stdatomic.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "stdnoreturn.h",
    "string.h",
    "tgmath.h",
    "threads.h",
    "time.h",
    "uchar.h",
    "wchar.h",
    "wctype.h",
    "aio.h",
    "alloca.h",
    "arpa/inet.h",
    "byteswap.h",
    "cpio.h",
    "dirent.h",
    "dlfcn.h",
    "endian.h",
    "err.h",
    "error.h",
    "execinfo.h",
    "fcntl.h",
    "fnmatch.h",
    "ftw.h",
    "getopt.h",
    "glob.h",
    "grp.h",
    "iconv.h",
    "langinfo.h",
    "libgen.h",
    "libintl.h",
    "malloc.h",
    "memory.h",
    "monetary.h",
    "mqueue.h",
    "net/if.h",
    "netdb.h",
    "netinet/in.h",
    "netinet/tcp.h",
    "nl_types.h",
    "paths.h",
    "poll.h",
    "pthread.h",
    "pwd.h",
    "regex.h",
    "sched.h",
    "search.h",
    "semaphore.h",
    "spawn.h",
    "strings.h",
    "sys/auxv.h",
    "sys/epoll.h",
    "sys/eventfd.h",
    "sys/file.h",
    "sys/inotify.h",
    "sys/ioctl.h",
    "sys/ipc.h",
    "sys/mman.h",
    "sys/msg.h",
    "sys/param.h",
    "sys/prctl.h",
    "sys/random.h",
    "sys/resource.h",
    "sys/select.h",
    "sys/sem.h",
    "sys/sendfile.h",
    "sys/shm.h",
    "sys/socket.h",
    "sys/stat.h",
    "sys/statvfs.h",
    "sys/syscall.h",
    "sys/sysinfo.h",
    "sys/time.h",
    "sys/timeb.h",
    "sys/times.h",
    "sys/types.h",
    "sys/uio.h",
    "sys/un.h",
    "sys/utsname.h",
    "sys/wait.h",
    "syslog.h",
    "tar.h",
    "termios.h",
    "ucontext.h",
    "ulimit.h",
    "unistd.h",
    "utime.h",
    "utmp.h",
    "wordexp.h",
]
CXX_ROOT = Path("/usr/include/c++")
#: Where a file's key starts (the include directories, longest first); C++'s own headers
#: are keyed ``c++:name`` (libstdc++ has its own ``math.h``, ``stdlib.h``).
ROOTS = (
    ("/usr/include/x86_64-linux-gnu/c++/12/", "c++:"),
    ("/usr/include/c++/12/", "c++:"),
    ("/usr/lib/gcc/x86_64-linux-gnu/12/include/", ""),
    ("/usr/include/x86_64-linux-gnu/", ""),
    ("/usr/include/", ""),
)
MARKER = re.compile(r'^# \d+ "([^"]+)"((?: \d)*)')
WORD = re.compile(r"[A-Za-z_]\w*")


def key(path: str) -> str | None:
    for root, prefix in ROOTS:
        if path.startswith(root):
            return prefix + path[len(root) :]
    return None


def preprocess(
    header: str, compiler: str, words: dict[str, set[str]], edges: dict[str, set[str]]
) -> None:
    language = "c++" if compiler == "g++" else "c"
    found = subprocess.run(
        [compiler, "-E", "-dD", "-D_GNU_SOURCE", "-x", language, "-"],
        input=f"#include <{header}>\n",
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        sys.stderr.write(f"skipped {header}: {found.stderr.strip()[:200]}\n")
        return
    stack: list[str | None] = [None]
    for line in found.stdout.splitlines():
        marker = MARKER.match(line)
        if marker:
            file, flags = key(marker.group(1)), marker.group(2).split()
            if "1" in flags:
                if stack[-1] is not None and file is not None:
                    edges.setdefault(stack[-1], set()).add(file)
                stack.append(file)
            elif "2" in flags:
                stack.pop()
                if not stack:
                    stack.append(None)
            else:
                stack[-1] = file if len(stack) > 1 else None
            if file is not None:
                words.setdefault(file, set())
            continue
        current = stack[-1]
        if current is None:
            continue
        words[current].update(
            w for w in WORD.findall(line) if not (w.startswith("__") or re.match("_[A-Z]", w))
        )


def main() -> None:
    words: dict[str, set[str]] = {}
    edges: dict[str, set[str]] = {}
    for header in C_HEADERS:
        preprocess(header, "gcc", words, edges)
    cxx = sorted(CXX_ROOT.glob("*/"))[-1]
    for path in sorted(cxx.iterdir()):
        if path.is_file() and "." not in path.name:
            preprocess(path.name, "g++", words, edges)
    lines = [
        "# Names each system header's file may bring (a superset: every word of its preprocessed",
        "# text) and the files it includes (after '<'), made by scripts/c_stdlib_table.py",
    ]
    for file in sorted(words):
        includes = " ".join(sorted(edges.get(file, ())))
        lines.append(f"{file} < {includes}")
        lines.append(" ".join(sorted(words[file])))
    OUT.write_text("\n".join(lines) + "\n")
    sys.stderr.write(f"{len(words)} files, {sum(len(w) for w in words.values())} names\n")


if __name__ == "__main__":
    main()
