"""Running the project's own checkers (ruff, mypy, pyright, go vet, tsc) on a draft's shadow
copies, never on the user's file on disk, and only programs the user trusts (invariant 7).

Which program runs: by default the first one of that name on ``PATH`` *outside* the workspace
(a ``.venv/bin`` or ``node_modules/.bin`` inside it is the repository's code, and so is any
``PATH`` entry under the workspace: an activated virtual environment). With
``verify.trustWorkspaceTools``, or for a checker named in ``verify.checkers``, the workspace's
own ``.venv/bin``, ``venv/bin`` and ``node_modules/.bin`` are looked in first. Untrusted, a
checker also runs with the workspace's entries taken off ``PATH``: ``#!/usr/bin/env node`` (pyright,
tsc) and the interpreter pyright asks for its search paths are then found outside it too.

How each resolves like the original without touching it:

- ruff reads the text on stdin (``--stdin-filename`` the document's path: the project's
  configuration and per-file rules apply); it runs no code of the project.
- mypy checks the document's path with ``--shadow-file`` naming a temporary copy, with a
  configuration file of its own: the project's ``[mypy]`` settings minus ``plugins`` and
  ``python_executable`` (both name code or an interpreter to run), imports followed silently,
  a cache of its own in the temporary directory.
- go vet, pyright and tsc run in a *mirror* (:func:`mirror`): a temporary folder of symlinks to
  the module's or the workspace's entries where only the edited file is a real copy, so imports,
  ``node_modules``, ``tsconfig.json``/``pyrightconfig.json`` resolve as in the original.
  pyright is given ``--pythonpath``, an interpreter on ``PATH`` outside the workspace (else it
  starts the first ``python3`` on ``PATH``: an activated ``.venv``'s); tsc runs with
  ``--noEmit --incremental false --composite false`` (else it writes its ``.tsbuildinfo``
  through the mirror's symlinks into the project).

The comparison of what they found is pure (``engines.checkers``).
"""

from __future__ import annotations

import asyncio
import configparser
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..engines.checkers import (
    PROGRAM,
    CheckerRun,
    Finding,
    Shadow,
    parse_mypy,
    parse_pyright,
    parse_ruff,
    parse_tsc,
    parse_vet,
)
from .processes import run_process, user_code_env

#: Where a workspace keeps its own tools (run only when the user allows it).
WORKSPACE_BINS = (".venv/bin", "venv/bin", ".venv/Scripts", "node_modules/.bin")
#: How long a checker may run at most (its result then comes after the job, if at all).
PROCESS_SECONDS = 60.0
#: mypy settings that name code or an interpreter to run: never taken from the project.
MYPY_UNSAFE = ("plugins", "python_executable")


def _inside(path: str, root: str | None) -> bool:
    if not root:
        return False
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def find(name: str, root: str | None, *, trusted: bool, path: str | None = None) -> str | None:
    """The program ``name`` to run: the workspace's own first when ``trusted``, else the first
    on ``PATH`` outside ``root`` (relative ``PATH`` entries are never searched)."""
    if trusted and root:
        for folder in WORKSPACE_BINS:
            found = shutil.which(name, path=os.path.join(root, folder))
            if found:
                return found
    entries = (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep)
    for entry in entries:
        if not entry or not os.path.isabs(entry) or _inside(entry, root):
            continue
        found = shutil.which(name, path=entry)
        if found and not _inside(found, root):
            return found
    return None


def wanted(language: str, available: Sequence[str], listed: Sequence[str] | None) -> list[str]:
    """The checkers to run for ``language``: all that apply, or those the user listed."""
    if listed is None:
        return list(available)
    return [name for name in available if name in listed]


async def run_checkers(
    shadow: Shadow,
    root: str | None,
    names: Sequence[str],
    *,
    trust_workspace: bool,
    listed: Sequence[str] | None,
) -> list[CheckerRun]:
    """Each checker in ``names`` on both texts of ``shadow``, side by side."""
    # One environment per trust, built when a checker runs: it was built per checker, skipped
    # ones too (three copies of the environment per Python draft's check).
    envs: dict[bool, dict[str, str]] = {}

    def env(trusted: bool) -> dict[str, str]:
        if trusted not in envs:
            envs[trusted] = checker_env(root, trusted=trusted)
        return envs[trusted]

    runs = [
        _one(
            name,
            shadow,
            root,
            trusted=trust_workspace or (listed is not None and name in listed),
            env_of=env,
        )
        for name in names
    ]
    return list(await asyncio.gather(*runs))


async def _one(
    name: str,
    shadow: Shadow,
    root: str | None,
    *,
    trusted: bool,
    env_of: Callable[[bool], dict[str, str]],
) -> CheckerRun:
    clock = time.perf_counter()
    program, cwd, skipped = await asyncio.to_thread(_plan, name, shadow, root, trusted)
    try:
        if skipped is not None or program is None:
            run = CheckerRun(name, skipped=skipped)
        elif name == "ruff":
            run = await _ruff(program, shadow, cwd, env_of(trusted))
        elif name == "go vet":
            run = await _vet(program, shadow, env_of(trusted))
        elif name == "pyright":
            run = await _pyright(program, shadow, root, trusted, env_of(trusted))
        elif name == "tsc":
            run = await _tsc(program, shadow, root, env_of(trusted))
        else:
            run = await _mypy(program, shadow, cwd, env_of(trusted))
    except (OSError, ValueError) as exc:
        run = CheckerRun(name, skipped=f"{name} failed: {exc}")
    run.ms = (time.perf_counter() - clock) * 1000
    return run


def _plan(
    name: str, shadow: Shadow, root: str | None, trusted: bool
) -> tuple[str | None, str, str | None]:
    """The program to run, its working directory, or why it does not run (file system reads:
    in a worker thread)."""
    folder = os.path.dirname(shadow.path)
    cwd = root or (folder if os.path.isdir(folder) else tempfile.gettempdir())
    if name not in PROGRAM:
        return None, cwd, f"{name} is not a checker fastedit runs"
    program = find(PROGRAM[name], root, trusted=trusted)
    if program is None:
        where = "in the workspace or on PATH" if trusted else "on PATH outside the workspace"
        return None, cwd, f"{name} not found {where}"
    if name == "mypy" and not os.path.isfile(shadow.path):
        return None, cwd, "the file is not on disk (mypy resolves the project from it)"
    if name == "go vet" and _go_module(shadow.path) is None:
        return None, cwd, "no go.mod above the file (go vet resolves the package from it)"
    if name == "pyright" and not os.path.isdir(folder):
        return None, cwd, "the file's folder is not on disk (pyright resolves the project from it)"
    if name == "tsc" and _above(shadow.path, ("tsconfig.json",), None) is None:
        return None, cwd, "no tsconfig.json above the file (tsc resolves the project from it)"
    return program, cwd, None


def checker_env(
    root: str | None, *, trusted: bool, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A checker's environment: the user's code's (no API keys); untrusted, without the
    ``PATH`` entries inside the workspace (or relative)."""
    env = user_code_env([], environ)
    if not trusted:
        entries = env.get("PATH", "").split(os.pathsep)
        kept = [e for e in entries if e and os.path.isabs(e) and not _inside(e, root)]
        env["PATH"] = os.pathsep.join(kept)
    return env


async def _ruff(program: str, shadow: Shadow, cwd: str, env: dict[str, str]) -> CheckerRun:
    argv = [program, "check", "--no-cache", "--no-fix", "--output-format", "json", "--exit-zero"]
    argv += ["--stdin-filename", shadow.path, "-"]

    async def findings(text: str) -> list[Finding]:
        code, out = await run_process(
            argv,
            cwd=cwd,
            seconds=PROCESS_SECONDS,
            env=env,
            capture=True,
            stdin=text.encode(),
            stderr=False,
        )
        if code is None:
            raise ValueError(f"no answer in {PROCESS_SECONDS:.0f} s")
        if code != 0:
            raise ValueError(f"exit code {code}")
        return parse_ruff(out.decode(errors="replace"))

    before, after = await asyncio.gather(findings(shadow.before), findings(shadow.after))
    return CheckerRun("ruff", before, after)


async def _mypy(program: str, shadow: Shadow, cwd: str, env: dict[str, str]) -> CheckerRun:
    cache = Path(tempfile.gettempdir()) / "fastedit-mypy" / _digest(cwd)
    with tempfile.TemporaryDirectory(prefix="fastedit-mypy-") as work:
        config = await asyncio.to_thread(_mypy_config, cwd, Path(work))

        async def findings(text: str, tag: str) -> list[Finding]:
            copy = Path(work) / f"{tag}_{os.path.basename(shadow.path)}"
            await asyncio.to_thread(copy.write_text, text, encoding="utf-8")
            argv = [program, "--config-file", str(config), "--cache-dir", str(cache / tag)]
            argv += ["--follow-imports", "silent", "--show-error-codes", "--no-error-summary"]
            argv += ["--no-pretty", "--no-color-output", "--hide-error-context"]
            argv += ["--shadow-file", shadow.path, str(copy), shadow.path]
            code, out = await run_process(
                argv, cwd=cwd, seconds=PROCESS_SECONDS, env=env, capture=True
            )
            text_out = out.decode(errors="replace")
            if code is None:
                raise ValueError(f"no answer in {PROCESS_SECONDS:.0f} s")
            if code not in (0, 1):
                first = text_out.strip().splitlines()[:1]
                raise ValueError(f"exit code {code}: {first[0] if first else ''}")
            return parse_mypy(text_out, shadow.path)

        before, after = await asyncio.gather(
            findings(shadow.before, "before"), findings(shadow.after, "after")
        )
    return CheckerRun("mypy", before, after)


#: go vet's environment: the installed toolchain only (a go.mod's ``toolchain`` line would download
#: and run another), no module download, no C compiler (cgo), no workspace file.
GO_ENV = {"GOTOOLCHAIN": "local", "GOPROXY": "off", "CGO_ENABLED": "0", "GOWORK": "off"}


def _go_module(path: str) -> str | None:
    """The folder of the go.mod above ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.isfile(os.path.join(folder, "go.mod")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def mirror(module: str, path: str, text: str, into: str) -> str:
    """A copy of the module ``module`` under ``into`` made of symlinks, where only ``path``
    differs (``text``, a real file): its folders down to ``path`` are real, every other entry
    links to the original. Returns the package folder in the mirror."""
    module = os.path.abspath(module)  # the links' targets
    relative = os.path.relpath(os.path.abspath(path), module)
    parts = relative.split(os.sep)
    source, target = module, into
    for part in [*parts[:-1], ""]:
        for entry in os.listdir(source):
            if entry != part and not (part == "" and entry == parts[-1]):
                os.symlink(os.path.join(source, entry), os.path.join(target, entry))
        if part == "":
            break
        source, target = os.path.join(source, part), os.path.join(target, part)
        os.mkdir(target)
    with open(os.path.join(target, parts[-1]), "w", encoding="utf-8") as handle:
        handle.write(text)
    return target


async def _vet(program: str, shadow: Shadow, env: dict[str, str]) -> CheckerRun:
    module = _go_module(shadow.path)
    assert module is not None
    env = {**env, **GO_ENV}

    async def findings(text: str) -> list[Finding]:
        with tempfile.TemporaryDirectory(prefix="fastedit-vet-") as work:
            package = await asyncio.to_thread(mirror, module, shadow.path, text, work)
            code, out = await run_process(
                [program, "vet", "."], cwd=package, seconds=PROCESS_SECONDS, env=env, capture=True
            )
        said = out.decode(errors="replace")
        if code is None:
            raise ValueError(f"no answer in {PROCESS_SECONDS:.0f} s")
        found = parse_vet(said, shadow.path)
        if code != 0 and not found:
            lines = [x for x in said.splitlines() if not x.startswith("#")][:1]
            raise ValueError(f"exit code {code}: {lines[0] if lines else ''}")
        return found

    before, after = await asyncio.gather(findings(shadow.before), findings(shadow.after))
    return CheckerRun("go vet", before, after)


def _above(path: str, names: Sequence[str], stop: str | None) -> str | None:
    """The first of ``names`` in the folders from ``path``'s up (not above ``stop``)."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        for name in names:
            if os.path.isfile(os.path.join(folder, name)):
                return os.path.join(folder, name)
        parent = os.path.dirname(folder)
        if parent == folder or (stop is not None and _same(folder, stop)):
            return None
        folder = parent


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _top(project: str, root: str | None) -> str:
    """The folder a mirror starts from: the workspace when it holds the project (its
    ``node_modules``, a configuration ``extends`` above the project's), else the project's."""
    return root if root and _inside(project, root) else project


async def _mirrored(
    argv: Sequence[str], shadow: Shadow, text: str, top: str, project: str, env: dict[str, str]
) -> tuple[int | None, str, str, str]:
    """``argv`` run in a mirror of ``top`` where the file holds ``text``, from the mirror's
    ``project`` folder: the exit code, the output (stdout), the edited file's path in the mirror
    and relative to where it ran."""
    with tempfile.TemporaryDirectory(prefix="fastedit-check-") as work:
        file, cwd, relative = await asyncio.to_thread(_lay, top, project, shadow.path, text, work)
        code, out = await run_process(
            argv, cwd=cwd, seconds=PROCESS_SECONDS, env=env, capture=True, stderr=False
        )
    return code, out.decode(errors="replace"), file, relative


def _lay(top: str, project: str, path: str, text: str, work: str) -> tuple[str, str, str]:
    """The mirror of ``top`` in ``work`` (made if missing) with ``path`` holding ``text``: the
    file's path there, the project's folder there, and the file's path from that folder."""
    base = os.path.realpath(work)
    os.makedirs(base, exist_ok=True)
    mirror(top, path, text, base)
    file = os.path.join(base, os.path.relpath(os.path.abspath(path), top))
    cwd = os.path.join(base, os.path.relpath(project, top))
    return file, cwd, os.path.relpath(file, cwd)


#: Where a Python project's root is (pyright's own configuration files first).
PYTHON_ROOTS = ("pyrightconfig.json", "pyproject.toml", "setup.cfg", "setup.py")


async def _pyright(
    program: str, shadow: Shadow, root: str | None, trusted: bool, env: dict[str, str]
) -> CheckerRun:
    marker = await asyncio.to_thread(_above, shadow.path, PYTHON_ROOTS, root)
    project = os.path.dirname(marker) if marker else (root or os.path.dirname(shadow.path))
    top = _top(project, root)
    argv = [program, "--outputjson"]
    if not trusted:
        python = await asyncio.to_thread(_python, root, env)
        if python is not None:
            argv += ["--pythonpath", python]
    env = {**env, "PYTHONSAFEPATH": "1"}
    # Both texts in one pyright (half the time: node's start and typeshed's builtins once), each
    # in a mirror of its own; it runs from the first one's project folder.
    with tempfile.TemporaryDirectory(prefix="fastedit-pyright-") as work:
        old, cwd, _ = await asyncio.to_thread(
            _lay, top, project, shadow.path, shadow.before, os.path.join(work, "before")
        )
        new, _, _ = await asyncio.to_thread(
            _lay, top, project, shadow.path, shadow.after, os.path.join(work, "after")
        )
        code, out = await run_process(
            [*argv, old, new],
            cwd=cwd,
            seconds=PROCESS_SECONDS,
            env=env,
            capture=True,
            stderr=False,
        )
    said = out.decode(errors="replace")
    if code is None:
        raise ValueError(f"no answer in {PROCESS_SECONDS:.0f} s")
    if code not in (0, 1):
        lines = said.strip().splitlines()[:1]
        raise ValueError(f"exit code {code}: {lines[0] if lines else ''}")
    return CheckerRun("pyright", parse_pyright(said, old), parse_pyright(said, new))


def _python(root: str | None, env: dict[str, str]) -> str | None:
    """The interpreter pyright asks for the search paths: on ``PATH`` outside the workspace."""
    for name in ("python3", "python"):
        found = find(name, root, trusted=False, path=env.get("PATH", ""))
        if found:
            return found
    return None


#: tsc's options: type errors only, nothing written (``incremental``/``composite`` write a
#: ``.tsbuildinfo`` even with ``--noEmit``), the files of the program listed (is the edited
#: one of them?), errors one a line.
TSC_ARGS = ("--noEmit", "--incremental", "false", "--composite", "false", "--pretty", "false")


_TSC_CONFIG_ERROR = re.compile(r"^(?:[^(]*tsconfig[^(]*\.json\(\d+,\d+\): )?error TS\d+:")


async def _tsc(program: str, shadow: Shadow, root: str | None, env: dict[str, str]) -> CheckerRun:
    config = await asyncio.to_thread(_above, shadow.path, ("tsconfig.json",), None)
    assert config is not None
    project = os.path.dirname(config)
    top = _top(project, root)

    async def findings(text: str, chosen: str) -> list[Finding] | None:
        argv = [program, *TSC_ARGS, "--listFiles", "--project", _relative(chosen, project)]
        code, said, file, relative = await _mirrored(argv, shadow, text, top, project, env)
        if code is None:
            raise ValueError(f"no answer in {PROCESS_SECONDS:.0f} s")
        if code not in (0, 1, 2):
            lines = said.strip().splitlines()[:1]
            raise ValueError(f"exit code {code}: {lines[0] if lines else ''}")
        lines = said.splitlines()
        # Errors of no file or of the configuration: tsc checks no file's types then.
        unchecked = [x for x in lines if _TSC_CONFIG_ERROR.match(x)][:1]
        if unchecked:
            raise ValueError(f"the project does not load: {unchecked[0]}")
        if file not in {line.strip() for line in lines}:
            return None
        return parse_tsc(said, relative)

    async def both(chosen: str) -> tuple[list[Finding], list[Finding]] | None:
        before, after = await asyncio.gather(
            findings(shadow.before, chosen), findings(shadow.after, chosen)
        )
        return None if before is None or after is None else (before, after)

    found = await both(config)
    if found is None:  # a "solution" tsconfig.json: the file is in a project it references
        referenced = await _referenced_config(program, config, shadow.path, env)
        found = None if referenced is None else await both(referenced)
    if found is None:
        why = "the file is not in its tsconfig.json's program (include, files, references)"
        return CheckerRun("tsc", skipped=why)
    return CheckerRun("tsc", *found)


#: How many projects a tsconfig.json's ``references`` are searched for the file, at most.
TSC_REFERENCES = 8


async def _referenced_config(
    program: str, config: str, path: str, env: dict[str, str]
) -> str | None:
    """The configuration among those ``config`` references whose files include ``path``
    (``tsc --showConfig``: the configuration resolved, its files listed; nothing checked)."""
    for other in _references(await _show_config(program, config, env), config):
        if _lists(await _show_config(program, other, env), other, path):
            return other
    return None


def _relative(path: str, start: str) -> str:
    return os.path.relpath(path, start)


def _references(shown: dict[str, Any] | None, config: str) -> list[str]:
    """The configuration files ``config`` references (``--showConfig``'s ``references``: a
    folder stands for its tsconfig.json), the first :data:`TSC_REFERENCES`."""
    references = shown.get("references") if shown else None
    found = []
    for reference in references[:TSC_REFERENCES] if isinstance(references, list) else ():
        where = reference.get("path") if isinstance(reference, dict) else None
        if isinstance(where, str):
            other = os.path.normpath(os.path.join(os.path.dirname(config), where))
            found.append(other if other.endswith(".json") else os.path.join(other, "tsconfig.json"))
    return found


def _lists(shown: dict[str, Any] | None, config: str, path: str) -> bool:
    """Whether ``--showConfig``'s ``files`` of ``config`` include ``path``."""
    files = shown.get("files") if shown else None
    target = os.path.abspath(path)
    folder = os.path.dirname(config)
    return isinstance(files, list) and any(
        isinstance(f, str) and os.path.normpath(os.path.join(folder, f)) == target for f in files
    )


async def _show_config(program: str, config: str, env: dict[str, str]) -> dict[str, Any] | None:
    """``tsc --showConfig --project config`` read in its folder (tsc only reads the
    configuration and lists the files it includes); None when it cannot."""
    code, out = await run_process(
        [program, "--showConfig", "--project", config],
        cwd=os.path.dirname(config),
        seconds=PROCESS_SECONDS,
        env=env,
        capture=True,
        stderr=False,
    )
    try:
        shown = json.loads(out.decode(errors="replace")) if code == 0 else None
    except json.JSONDecodeError:
        return None
    return shown if isinstance(shown, dict) else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _mypy_config(root: str, work: Path) -> Path:
    """A mypy.ini in ``work``: the project's settings (mypy.ini, .mypy.ini, pyproject.toml,
    setup.cfg: the first that has them) without the ones that name code to run."""
    out = configparser.ConfigParser(interpolation=None)
    sections = _project_mypy(Path(root))
    for name, values in sections.items():
        out[name] = {
            key: _ini(value)
            for key, value in values.items()
            if key.replace("-", "_") not in MYPY_UNSAFE
        }
    if "mypy" not in out:
        out["mypy"] = {}
    path = work / "mypy.ini"
    with path.open("w", encoding="utf-8") as handle:
        out.write(handle)
    return path


def _ini(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _project_mypy(root: Path) -> dict[str, dict[str, Any]]:
    """The project's mypy sections (``mypy``, ``mypy-<module>``), read as text."""
    for name in ("mypy.ini", ".mypy.ini"):
        if (root / name).is_file():
            return _ini_sections(root / name)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}
        tool = data.get("tool", {}).get("mypy")
        if isinstance(tool, dict):
            sections: dict[str, dict[str, Any]] = {}
            overrides = tool.pop("overrides", [])
            sections["mypy"] = tool
            for override in overrides if isinstance(overrides, list) else []:
                modules = override.pop("module", [])
                for module in [modules] if isinstance(modules, str) else modules:
                    sections[f"mypy-{module}"] = override
            return sections
    if (root / "setup.cfg").is_file():
        return _ini_sections(root / "setup.cfg")
    return {}


def _ini_sections(path: Path) -> dict[str, dict[str, Any]]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return {}
    return {
        name: dict(parser[name])
        for name in parser.sections()
        if name == "mypy" or name.startswith("mypy-")
    }
