"""The parse check on held-out correct answers from code nobody here wrote, per language.

Each sample takes a real file, cuts out a piece of it (whole lines, or from the middle of a line
to a later point: what "complete the rest" or "edit selection" would have to write), and checks
the original piece as the draft against the file without it. The piece is the right answer, so
the check must pass it (floor: 99 % per language). The same cut with a bracket removed from or
added to the piece measures what the check catches (printed, with a lower floor).

The files are read where the machine has them installed, never copied into the repository:
Python from the running interpreter's stdlib; the others from packages ``.ci/run`` installs —
npm's own sources (Node), code-server's node_modules (TypeScript; editors/vscode's e2e setup),
``@tanstack/react-router``'s ``src/*.tsx`` (TSX; npm, unpacked by ``.ci/run``), Debian's
``golang-golang-x-text-dev`` (Go), ``librust-regex-syntax-dev`` (Rust), ``openjdk-17-source``
(Java, its ``src.zip``), the examples of ``zlib1g-dev`` and ``nettle-dev`` and mypy's mypyc
runtime (C), code-server's native modules (C++), and the C# files that ship inside npm packages
(node-gyp); ``libc6-dev`` and ``libstdc++-12-dev`` headers are measured without a floor. A
language whose sources are missing is skipped with the package to install (and fails when
``CI=true``).
"""

from __future__ import annotations

import glob
import os
import random
import shutil
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fastedit_lsp.engines import parse as ts_parse
from tests.support.summary_figures import section_lines

#: Samples per language, files per language, and the largest file read.
SAMPLES = 240
FILES = 60
MAX_BYTES = 120_000
#: Floor: correct answers that pass, in every language (the issue asks 99 %). C and C++ reach it
#: because a draft that fails is compared again with preprocessor branches and macro uses set
#: aside (engines/preprocessor.py), and far errors count against a draft only when it leaves the
#: document's brackets unbalanced; before that, 93.5 % and 97.9 %.
PASS_FLOOR = 0.99
#: Broken drafts caught where the code around was clean: a regression guard a few points under
#: what was measured (C 78.6 %, C# 91.8 %, C++ 80.8 %, Go 75.6 %, Java 42.0 %, JavaScript
#: 73.7 %, Python 78.0 %, Rust 85.6 %, TypeScript 76.9 %, TSX 69.2 %).
CATCH_FLOORS = {
    "c": 0.72,
    "c_sharp": 0.85,
    "cpp": 0.75,
    "go": 0.70,
    "java": 0.38,
    "javascript": 0.68,
    "python": 0.72,
    "rust": 0.80,
    "typescript": 0.70,
    "tsx": 0.62,
}

HOME = Path.home()
VSCODE_E2E = HOME / ".cache" / "fastedit" / "vscode-e2e"
#: npm packages ``.ci/run`` unpacks for the corpora (no install scripts).
NPM_CORPORA = HOME / ".cache" / "fastedit" / "corpora"


def _npm_root() -> Path | None:
    npm = shutil.which("npm")
    if npm is None:
        return None
    real = Path(os.path.realpath(npm))
    for parent in real.parents:
        if parent.name == "npm" and parent.parent.name == "node_modules":
            return parent
    return None


def _files(patterns: list[str]) -> list[str]:
    """The files ``patterns`` match, in an order that does not depend on where they are
    installed: by root (the patterns' fixed part, in the order given), then by path below it.

    Sorted by whole path, a checkout whose venv sorted before ``/usr`` (a clone under /tmp)
    drew other samples than one under /work, and C passed 181/184 there, 201/201 here.
    """
    groups: dict[str, set[str]] = {}
    for pattern in patterns:
        root = pattern.split("*", 1)[0]
        groups.setdefault(root, set()).update(
            p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)
        )
    ordered: list[str] = []
    for root, found in groups.items():
        ordered.extend(sorted(found, key=lambda p, root=root: os.path.relpath(p, root)))
    seen: set[str] = set()
    out: list[str] = []
    for path in ordered:
        if path not in seen and os.path.getsize(path) <= MAX_BYTES:
            seen.add(path)
            out.append(path)
    return out


def _python() -> Iterator[tuple[str, str]]:
    stdlib = sysconfig.get_paths()["stdlib"]
    for path in _files([f"{stdlib}/*.py", f"{stdlib}/*/*.py"]):
        # Files kept broken on purpose (the test suite's bad syntax, Python 2 samples).
        if "/test/" in path or "/lib2to3/" in path or "/idle_test/" in path:
            continue
        yield path, Path(path).read_text(encoding="utf-8", errors="replace")


def _read(paths: list[str]) -> Iterator[tuple[str, str]]:
    for path in paths:
        yield path, Path(path).read_text(encoding="utf-8", errors="replace")


def _javascript() -> Iterator[tuple[str, str]]:
    root = _npm_root()
    if root is None:
        return
    paths = [p for p in _files([f"{root}/**/*.js"]) if ".min." not in p]
    yield from _read(paths)


def _typescript() -> Iterator[tuple[str, str]]:
    paths = _files([f"{VSCODE_E2E}/**/node_modules/**/*.ts"])
    yield from _read([p for p in paths if not p.endswith(".d.ts")])


def _tsx() -> Iterator[tuple[str, str]]:
    yield from _read(_files([f"{NPM_CORPORA}/node_modules/**/*.tsx"]))


def _java() -> Iterator[tuple[str, str]]:
    for archive in sorted(glob.glob("/usr/lib/jvm/*17*/lib/src.zip")):
        if not os.path.exists(archive):
            continue
        with zipfile.ZipFile(archive) as zf:
            names = sorted(
                n
                for n in zf.namelist()
                if n.startswith("java.base/java/util/") and n.endswith(".java")
            )
            for name in names:
                data = zf.read(name)
                if len(data) <= MAX_BYTES:
                    yield f"{archive}!{name}", data.decode("utf-8", "replace")
        return


def _c_sharp() -> Iterator[tuple[str, str]]:
    roots = [str(r) for r in (_npm_root(), VSCODE_E2E) if r is not None]
    yield from _read(_files([f"{root}/**/*.cs" for root in roots]))


def _c() -> Iterator[tuple[str, str]]:
    site = sysconfig.get_paths()["purelib"]
    yield from _read(
        _files(
            [
                "/usr/share/doc/nettle-dev/examples/*.c",
                "/usr/share/doc/zlib1g-dev/examples/*.c",
                f"{site}/mypyc/lib-rt/**/*.c",
            ]
        )
    )


def _cpp() -> Iterator[tuple[str, str]]:
    patterns = [f"{VSCODE_E2E}/**/node_modules/**/*.{ext}" for ext in ("cpp", "cc", "hpp")]
    yield from _read(_files(patterns))


#: System headers: macro soup tree-sitter cannot expand (``__THROW``,
#: ``_GLIBCXX_VISIBILITY(default)``): measured and printed, no floor.
HEADERS = {
    "c": (lambda: _read(_files(["/usr/include/*.h"])), "libc6-dev headers"),
    "cpp": (lambda: _read(_files(["/usr/include/c++/*/bits/*.h"])), "libstdc++-12-dev headers"),
}

SOURCES = {
    "python": (_python, "the Python stdlib"),
    "javascript": (_javascript, "Node's npm (nodejs / editors/vscode/scripts/e2e-setup.sh)"),
    "typescript": (_typescript, "code-server (editors/vscode/scripts/e2e-setup.sh)"),
    "tsx": (_tsx, "@tanstack/react-router 1.170.46's sources (npm, .ci/run)"),
    "go": (
        lambda: _read(_files(["/usr/share/gocode/src/**/*.go"])),
        "golang-golang-x-text-dev",
    ),
    "rust": (
        lambda: _read(_files(["/usr/share/cargo/registry/**/*.rs"])),
        "librust-regex-syntax-dev",
    ),
    "java": (_java, "openjdk-17-source"),
    "c": (_c, "zlib1g-dev and nettle-dev examples, mypy's mypyc runtime"),
    "cpp": (_cpp, "code-server's native modules (spdlog, cpu_features, koffi)"),
    "c_sharp": (_c_sharp, "npm (node-gyp ships C#)"),
}


def _samples(language: str, files: list[tuple[str, str]]) -> list[tuple[str, int, int]]:
    """(text, start, end): the piece ``text[start:end]`` is the held-out answer."""
    rng = random.Random(f"parse-check/{language}")
    chosen = files if len(files) <= FILES else rng.sample(files, FILES)
    out: list[tuple[str, int, int]] = []
    per_file = max(1, -(-SAMPLES // max(1, len(chosen))))
    for _path, text in chosen:
        lines = text.splitlines(keepends=True)
        if len(lines) < 8:
            continue
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        for _ in range(per_file):
            first = rng.randrange(len(lines))
            if not lines[first].strip():
                continue
            last = min(len(lines) - 1, first + rng.randrange(6))
            if rng.random() < 0.5:
                # Whole lines (the cursor at the start of a line).
                start, end = starts[first], starts[last + 1]
            else:
                # From inside a line to inside a later one.
                content = lines[first].rstrip("\r\n")
                start = starts[first] + rng.randrange(len(content) + 1)
                tail = lines[last].rstrip("\r\n")
                end = max(start, starts[last] + rng.randrange(len(tail) + 1))
            if text[start:end].strip():
                out.append((text, start, end))
    return out[:SAMPLES]


def _break(piece: str, rng: random.Random) -> str | None:
    """The piece with one bracket removed (or an opener added when it has none)."""
    closers = [i for i, c in enumerate(piece) if c in ")]}"]
    if closers:
        i = rng.choice(closers)
        return piece[:i] + piece[i + 1 :]
    openers = [i for i, c in enumerate(piece) if c in "([{"]
    if openers:
        i = rng.choice(openers)
        return piece[:i] + piece[i + 1 :]
    return None


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> list[str]:
    return section_lines(request, "parse check corpus")


def _measure(language: str, files: list[tuple[str, str]]) -> tuple[int, int, int, int, list[str]]:
    """(samples, passed, broken drafts where the code around was clean, caught, failures)."""
    samples = _samples(language, files)
    rng = random.Random(f"parse-check-break/{language}")
    passed = caught = broken = 0
    failures: list[str] = []
    for text, start, end in samples:
        before = ts_parse.parse(language, text[:start] + text[end:])
        piece = text[start:end]
        verdict = ts_parse.check_edit(before, start, start, piece)
        if verdict.ok:
            passed += 1
        elif len(failures) < 5:
            failures.append(f"{verdict.message} | {piece[:60]!r}")
        bad = _break(piece, rng)
        # Only where the user's code around the cut parses: elsewhere a draft may leave the
        # code as broken as it was (that is the rule), so a missed bracket there is not missed.
        if bad is not None and not before.problems(*ts_parse.around(before, start, start)):
            broken += 1
            caught += not ts_parse.check_edit(before, start, start, bad).ok
    return len(samples), passed, broken, caught, failures


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_correct_answers_pass_and_broken_ones_fail(language: str, figures: list[str]) -> None:
    make, package = SOURCES[language]
    files = list(make())
    if len(files) < 2:
        message = f"no {language} sources installed: install {package}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    count, passed, broken, caught, failures = _measure(language, files)
    share = passed / count
    catch = caught / broken if broken else 1.0
    catch_floor = CATCH_FLOORS[language]
    figures.append(
        f"{language}: {passed}/{count} correct answers pass ({share:.1%}, floor "
        f"{PASS_FLOOR:.0%}); a bracket removed, in clean code: {caught}/{broken} caught "
        f"({catch:.1%}, floor {catch_floor:.0%}); {len(files)} files from {package}"
    )
    figures.extend(f"  rejected: {failure}" for failure in failures)
    assert count >= 100
    assert share >= PASS_FLOOR
    assert catch >= catch_floor


@pytest.mark.parametrize("language", sorted(HEADERS))
def test_system_headers_are_measured(language: str, figures: list[str]) -> None:
    """Printed only: unexpandable macros make correct header code look broken to tree-sitter."""
    make, package = HEADERS[language]
    files = list(make())
    if len(files) < 2:
        pytest.skip(f"no {package}")
    count, passed, broken, caught, _failures = _measure(language, files)
    figures.append(
        f"{language} ({package}, no floor): {passed}/{count} correct answers pass "
        f"({passed / count:.1%}); {caught}/{broken} broken ones caught"
    )
    assert count >= 50
