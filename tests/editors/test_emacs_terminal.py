"""Emacs 28 + eglot 1.9 in a real terminal, as a person uses it: every action many times in a row.

The batch tests (test_emacs.py) pump Emacs' event loop themselves, and any request they send
releases messages Emacs has read and not yet parsed; so they never saw a job hang. Here Emacs runs
in tmux (its own socket, HOME and XDG directories) with the README's manual setup in its
init.el, keys are typed with ``tmux send-keys`` and the screen is read back with ``capture-pane``:
while a job runs the test sends nothing to Emacs (a status request through eglot would release
stuck messages and hide a hang). Each action runs several times in a row (``ROUNDS``), offline and
with the stub model, fastedit-lsp alone and beside jedi-language-server through rassumfrassum; after
each job its text and its end message must be on the screen, then one undo takes it back (offline,
write tests runs again on the module it wrote; with the model, one undo in the module's window
takes its tests back). With the model, the built-in user action ``docstring`` (``C-c / a``) runs
too. The commands that start no job run a few times each (``FEW``): revert (offline), cancel (a
model's stream held open), the mode keys (fast, standard, auto) and next-edit accept. Deadlines are
hang guards only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.editors.emacs_driver import ELISP, JSONRPC_CODE, emacs, skip_or_fail
from tests.support.editors.polling import poll
from tests.support.harness import checkers_config
from tests.support.summary_figures import section_lines

WIDTH, HEIGHT = 120, 36
#: A hang guard: a job's text lands in well under a second; a first start loads three servers.
TIMEOUT = 60.0
#: Jobs in a row per action, fastedit-lsp alone and beside jedi-language-server. Alone is where
#: the hang fixed in 67a73f9 shows. With that fix reverted (fastedit.el's job commands sent by a
#: synchronous ``jsonrpc-request`` again, nothing else changed) the offline test hung in 25 runs
#: of 25, at its 2nd to 4th job (complete the rest; the first job never hung); with 5 rounds, 1
#: run of 3 ran its 20 jobs without a hang, hence 10. The model test (10 rounds) hung on it in 3
#: runs of 5 (at its 3rd, 5th and 40th job). fastedit.el from before that fix (67a73f9^) hung in
#: 5 runs of 5 (2nd to 4th job). Beside jedi (through rass) the reverted code ran 80 jobs without
#: a hang: those rounds check the actions through rass in a terminal (as test_emacs.py's batch
#: tests do each once).
#: ``FASTEDIT_EMACS_ROUNDS=20`` runs the full soak of issue 30 (20 jobs in a row per action, alone
#: and beside jedi; CONTRIBUTING, "Emacs soak"): about four times the suite's rounds.
ROUNDS = {"alone": 10, "beside-jedi": 2}
if os.environ.get("FASTEDIT_EMACS_ROUNDS"):
    ROUNDS = dict.fromkeys(ROUNDS, int(os.environ["FASTEDIT_EMACS_ROUNDS"]))
#: A person's short pause before pressing an action's key (see ``_job``), in seconds. On the
#: reverted code a pause of 1.0, 0.6, 0.3 or 0 s each caught the hang (its first at the 4th, the
#: 2nd to 5th, the 2nd, the 2nd to 7th job, in 1, 10, 5 and 5 runs of 20 rounds): Emacs' own
#: requests during a shorter pause did not hide it.
THINK = 0.3
#: Rounds of the commands that start no job (revert, cancel, the mode keys, next-edit accept):
#: each goes through the same never-awaited request as a job's key, so a few rounds check it in
#: a terminal without adding much to the suite's time (issue 31).
FEW = {"alone": 3, "beside-jedi": 1}

#: The README's manual setup (editors/emacs/README.md, Install: Manual), with the user's own
#: server or none. Early-init keeps Debian's native compiler from popping up warnings about
#: its own packages over the buffer.
EARLY_INIT = "(setq native-comp-deferred-compilation nil)\n"
INIT = """(setq inhibit-startup-screen t make-backup-files nil create-lockfiles nil
      auto-save-default nil)
(add-to-list 'load-path "{elisp}")
(require 'fastedit)
(fastedit-eglot-setup 'python-mode {other})
(add-hook 'python-mode-hook #'eglot-ensure)
"""

#: Text that must never be on the screen: a Lisp error, a prompt, eglot's raw JSON-RPC error, a
#: server that did not answer or died. (The user's server may say a syntax error: not ours.)
ERRORS = (
    "jsonrpc",
    "did not answer",
    "Server died",
    "(y or n)",
    "Proceed?",
    "error in process",
    "Error running timer",
    "Wrong type argument",
    "Debugger entered",
    # The lighter with an empty route (issue 30: "FE[auto>]" in the source's mode line after write
    # tests, from the job's first record, sent before it had a route).
    "FE[auto>]",
    "FE[fast>]",
    "FE[standard>]",
)


def test_a_jsonrpc_error_code_is_told_from_a_numbered_temporary_folder() -> None:
    """The screen check looked for "-32": pytest's 32nd temporary folder on the machine
    (``/tmp/pytest-of-root/pytest-32/``, in Emacs' "Find file:" line) failed four tests of a
    correct main in a soak."""
    for shown in ("jsonrpc-error -32603", "(-32803) the region is busy", "code -32700."):
        assert JSONRPC_CODE.search(shown), shown
    for path in ("Find file: /tmp/pytest-of-root/pytest-32/popen-gw0/calc.py", "pytest-32601/x"):
        assert JSONRPC_CODE.search(path) is None, path


VALIDATORS = """import re

# regex: ISO date pattern
#   match: 2024-01-31
#   match: 1999-12-01
#   reject: 2024-1-31
#   reject: 24-01-31


def is_iso_date(text: str) -> bool:
    return ISO_DATE_PATTERN.fullmatch(text) is not None


def is_email(text: str) -> bool:
    return EMAIL_PATTERN.fullmatch(text) is not None


def is_version(text: str) -> bool:
    return VERSION_PATTERN.fullmatch(
"""
#: Lines (1-based) of the comment block and of the unfinished line.
REGEX_LINE, UNFINISHED_LINE = 3, 19
COMPLETED = "    return VERSION_PATTERN.fullmatch(text) is not None"
PATTERN = 'ISO_DATE_PATTERN = re.compile(r"'
BROKEN = "x = 1\nif x\n    print(x)\n"
CALC = (
    'def double(n: int) -> int:\n    """Twice n.\n\n    >>> double(2)\n    4\n    """\n'
    "    return n * 2\n"
)
REWRITE = "def is_email(text: str) -> bool:\n    return bool(EMAIL_PATTERN.fullmatch(text))\n"


class Terminal:
    """One tmux server (its own socket name) running one Emacs in a 120×36 window."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = f"fastedit-emacs-{uuid.uuid4().hex[:12]}"
        self.env = env
        #: Each job's title and seconds from its last key to its end message on the screen.
        self.jobs: list[tuple[str, float]] = []

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, f"tmux {args}: {done.stderr}"
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "emacs")

    def cursor(self) -> tuple[int, int]:
        """The terminal cursor: (column, row), 0-based; row 0 is the menu bar."""
        x, y = self.tmux("display-message", "-p", "-t", "emacs", "#{cursor_x},#{cursor_y}").split(
            ","
        )
        return int(x), int(y)

    def keys(self, *keys: str) -> None:
        """Press keys as tmux names them (``C-c``, ``/``, ``Enter``)."""
        self.tmux("send-keys", "-t", "emacs", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "emacs", "-l", text)

    def check(self, screen: str | None = None) -> None:
        """Fail on a prompt or an error anywhere on the screen (``screen``: one just read)."""
        screen = self.screen() if screen is None else screen
        for text in ERRORS:
            assert text not in screen, f"{text!r} on the screen:\n{screen}"
        code = JSONRPC_CODE.search(screen)
        assert code is None, f"{code.group()!r} on the screen:\n{screen}"

    def wait(self, predicate: Callable[[str], bool], what: str) -> str:
        """The screen once ``predicate`` holds for it, checking it for errors at every look."""
        seen: list[str] = []

        def look() -> str | None:
            screen = self.screen()
            seen[:] = [screen]
            self.check(screen)  # every screen looked at, one tmux call per look
            return screen if predicate(screen) else None

        try:
            return poll(look, what, TIMEOUT, interval=0.05)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{seen[0] if seen else ''}") from None

    def echo_area(self) -> str:
        return self.screen().rstrip("\n").split("\n")[-1]

    def goto_line(self, line: int) -> None:
        self.keys("M-g", "g")
        self.type(str(line))
        self.keys("Enter")


@pytest.fixture(scope="module")
def terminal_tools() -> None:
    emacs()  # skips (fails in CI) without emacs + eglot, rass and jedi-language-server
    if shutil.which("tmux") is None:
        skip_or_fail("tmux is not installed (apt-get install tmux)")


@contextmanager
def _emacs(
    tmp_path: Path,
    stub: StubModelServer | None,
    beside: bool,
    *files: tuple[str, str],
) -> Iterator[tuple[Terminal, Path]]:
    """A new user's Emacs in tmux on ``files`` (the first shown): its own HOME, fastedit-lsp
    (and rass, jedi-language-server) on PATH, the stub model or none."""
    home = tmp_path / "home"
    (home / ".emacs.d").mkdir(parents=True)
    (home / ".emacs.d" / "early-init.el").write_text(EARLY_INIT)
    other = '\'("jedi-language-server")' if beside else "nil"
    (home / ".emacs.d" / "init.el").write_text(INIT.format(elisp=ELISP, other=other))
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)  # a project root for eglot
    for name, text in files:
        (project / name).write_text(text)
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("FASTEDIT_", "TMUX", "XDG_")) and not name.endswith("_API_KEY")
    }
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        TERM="xterm-256color",
        # The harness's checkers (none) go where the README's setup leaves room.
        FASTEDIT_CONFIG=checkers_config(tmp_path / "fastedit.toml"),
    )
    if stub is not None:
        env.update(
            FASTEDIT_FAST_BASE_URL=stub.base_url,
            FASTEDIT_FAST_MODEL="stub-fast",
            FASTEDIT_STANDARD_BASE_URL=stub.base_url,
            FASTEDIT_STANDARD_MODEL="stub-strong",
        )
    terminal = Terminal(env)
    terminal.tmux(
        "new-session", "-d", "-s", "emacs", "-x", str(WIDTH), "-y", str(HEIGHT),
        "-c", str(project), emacs(), "-nw", files[0][0],
    )  # fmt: skip
    socket = Path(terminal.tmux("display-message", "-p", "#{socket_path}").strip())
    try:
        # eglot has connected once fastedit's lighter shows the server's mode.
        terminal.wait(lambda s: "FE[auto]" in s, "fastedit's mode in the mode line")
        yield terminal, project
        terminal.check()
    finally:
        subprocess.run(
            ["tmux", "-L", terminal.socket, "kill-server"],
            env=env,
            capture_output=True,
            check=False,
        )
        socket.unlink(missing_ok=True)  # tmux leaves its socket file behind


def _press(
    terminal: Terminal, keys: tuple[str, ...], landed: Callable[[str], bool], what: str
) -> float:
    """Clear the echo area, pause as a person does, press ``keys``, wait for ``what``; when
    the keys were pressed (``time.monotonic``)."""
    terminal.keys("C-l")  # redraws and clears the echo area; nothing is sent to the server
    terminal.wait(lambda _: "fastedit:" not in terminal.echo_area(), "a clear echo area")
    # A person's pause before the key, not a wait for something. While the job runs the test sends
    # Emacs nothing: any output of the server then (an answer to a status request) would release
    # the messages a hung job was stuck on, and hide the hang.
    time.sleep(THINK)
    terminal.keys(*keys)
    pressed = time.monotonic()
    terminal.wait(landed, what)
    return pressed


def _job(
    terminal: Terminal, keys: tuple[str, ...], landed: Callable[[str], bool], title: str
) -> None:
    """``_press`` a job's keys, then wait for its text and its end message (the time from
    the keys to that message is kept: :func:`_figures`)."""
    pressed = _press(terminal, keys, landed, f"the text of {title}")
    terminal.wait(lambda s: f"fastedit: {title} done" in s, f"the end of {title}")
    terminal.jobs.append((title, time.monotonic() - pressed))


def _figures(request: pytest.FixtureRequest, terminal: Terminal, name: str) -> None:
    """Print (never assert) how long each action's jobs took from the key to the end message
    on the screen, as a person waits for them (the screen read every 50 ms): a job held until
    other output came, as eglot's synchronous request once did beside jedi-language-server
    (~1.2 s on every other job), shows as a max far above the median."""
    by_title: dict[str, list[float]] = {}
    for title, seconds in terminal.jobs:
        by_title.setdefault(title, []).append(seconds * 1000)
    lines = section_lines(request, "Emacs in a terminal: a job's key to its end on the screen")
    for title, times in by_title.items():
        times.sort()
        lines.append(
            f"{name}, {title}: {len(times)} jobs, median {times[len(times) // 2]:,.0f} ms, "
            f"max {times[-1]:,.0f} ms"
        )


def _undo(terminal: Terminal, gone: Callable[[str], bool], what: str) -> None:
    terminal.keys("C-/")
    terminal.wait(gone, f"one undo to take back {what}")


def _soak_offline_actions(terminal: Terminal, rounds: int) -> None:
    for _ in range(rounds):
        terminal.goto_line(UNFINISHED_LINE)
        _job(
            terminal,
            ("C-e", "C-c", "/", "c"),
            lambda s: COMPLETED in s,
            "Complete the rest",
        )
        _undo(terminal, lambda s: COMPLETED not in s, "the completion")
    for _ in range(rounds):
        terminal.goto_line(REGEX_LINE)
        _job(terminal, ("C-c", "/", "r"), lambda s: PATTERN in s, "Generate regex")
        _undo(terminal, lambda s: PATTERN not in s, "the pattern")


def _soak_revert(terminal: Terminal, rounds: int) -> None:
    """Complete the rest, then fastedit's revert (C-c / u) takes the text back and says so."""
    for _ in range(rounds):
        terminal.goto_line(UNFINISHED_LINE)
        _job(terminal, ("C-e", "C-c", "/", "c"), lambda s: COMPLETED in s, "Complete the rest")
        _press(
            terminal,
            ("C-c", "/", "u"),
            lambda s: COMPLETED not in s and terminal.echo_area() == "fastedit: reverted",
            "the revert said and the completion gone",
        )


def _mode_line(screen: str, buffer: str) -> str:
    """The mode line of ``buffer``'s window on ``screen`` ("" if no window shows it)."""
    return next((row for row in screen.split("\n") if f" {buffer} " in row and "FE" in row), "")


def _soak_modes(terminal: Terminal, rounds: int) -> None:
    """The mode keys, each said and shown in the lighter: the fast toggle (C-c / f) there and
    back, then C-c / m to standard and to auto."""

    def mode(name: str) -> Callable[[str], bool]:
        return lambda s: (
            f"FE[{name}" in _mode_line(s, "validators.py")
            and terminal.echo_area() == f"fastedit: {name} mode"
        )

    for _ in range(rounds):
        _press(terminal, ("C-c", "/", "f"), mode("fast"), "fast mode")
        _press(terminal, ("C-c", "/", "f"), mode("auto"), "auto mode again")
        for name in ("standard", "auto"):
            terminal.keys("C-c", "/", "m")
            terminal.wait(lambda s: "fastedit mode:" in s, "the mode prompt")
            terminal.type(name)
            _press(terminal, ("Enter",), mode(name), f"{name} mode")


#: A loop whose variable the user renames on its first line: next-edit suggests the others.
RENAME = """def total(items, scale):
    count = 0
    for item in items:
        count += item * scale
    return count
"""


def _soak_next_edit_accept(terminal: Terminal, rounds: int) -> None:
    """Rename ``count`` to ``acc`` on its first line, accept the two suggested renames with
    C-c / n, then rename it back the same way."""
    terminal.keys("C-x", "C-f")
    terminal.type("total.py")
    terminal.keys("Enter")
    terminal.wait(lambda s: "total.py" in s and "FE[auto" in s, "total.py under fastedit")
    for _ in range(rounds):
        for old, new in (("count", "acc"), ("acc", "count")):
            terminal.goto_line(2)
            terminal.keys("M-f", "M-b", "M-d")
            terminal.type(new)
            for shown, accepted in (
                (f"        {old}{new} += item", f"        {new} += item"),
                (f"    return {old}{new}", f"    return {new}\n"),
            ):
                # The suggestion comes by itself after the typing: nothing is sent meanwhile.
                terminal.wait(lambda s, shown=shown: shown in s, f"the suggestion {shown!r}")
                _press(
                    terminal,
                    ("C-c", "/", "n"),
                    lambda s, accepted=accepted: accepted in s,
                    f"the accepted {accepted.strip()!r}",
                )


def _soak_fix_syntax(terminal: Terminal, rounds: int) -> None:
    terminal.keys("C-x", "C-f")
    terminal.type("broken.py")
    terminal.keys("Enter")
    terminal.wait(lambda s: "broken.py" in s and "FE[auto" in s, "broken.py under fastedit")
    fixed = re.compile(r"^if x:\s*$", re.M)
    for _ in range(rounds):
        terminal.goto_line(2)
        _job(terminal, ("C-c", "/", "s"), lambda s: fixed.search(s) is not None, "Fix syntax")
        _undo(terminal, lambda s: fixed.search(s) is None, "the fix")


def _visit(terminal: Terminal, name: str) -> None:
    """Show ``name``'s buffer in the selected window (C-x b), under fastedit."""
    terminal.keys("C-x", "b")
    terminal.type(name)
    terminal.keys("Enter")
    terminal.wait(lambda s: name in s and "FE[auto" in s, f"{name} under fastedit")


def _soak_write_tests(terminal: Terminal, rounds: int) -> None:
    """Write tests on one function again and again: the first job writes the module (shown in
    another window), each later one finds its tests there; every job's end is said."""
    terminal.keys("C-x", "C-f")
    terminal.type("calc.py")
    terminal.keys("Enter")
    terminal.wait(lambda s: "calc.py" in s and "FE[auto" in s, "calc.py under fastedit")
    for _ in range(rounds):
        _visit(terminal, "calc.py")
        terminal.goto_line(1)
        _job(terminal, ("C-c", "/", "t"), lambda s: "def test_" in s, "Write tests")
        # The lighters after a real job (issue 30): the module's has the offline engine's time,
        # the source's none of it (nor an empty route: ``ERRORS``).
        terminal.wait(
            lambda s: (
                re.search(r"FE\[auto>local offline · [\d,]+ ms\]", _mode_line(s, "test_calc.py"))
                is not None
                and "FE[auto]" in _mode_line(s, "calc.py")
            ),
            "the lighters of the module and the source",
        )


# Four jobs per round (FEW more): a guard of 120 s per round (1,200 s at the suite's 10 rounds, over
# its 180 s default), far above the ~3 s a round takes; each job has its own hang guard (TIMEOUT).
@pytest.mark.timeout(120 * max(ROUNDS.values()))
@pytest.mark.parametrize("variant", ROUNDS)
def test_offline_actions_run_again_and_again_without_a_hang(
    terminal_tools: None, tmp_path: Path, variant: str, request: pytest.FixtureRequest
) -> None:
    files = ("validators.py", VALIDATORS), ("broken.py", BROKEN), ("calc.py", CALC)
    files += (("total.py", RENAME),)
    rounds = ROUNDS[variant]
    with _emacs(tmp_path, None, variant == "beside-jedi", *files) as (terminal, _project):
        _soak_offline_actions(terminal, rounds)
        _soak_revert(terminal, FEW[variant])
        _soak_modes(terminal, FEW[variant])
        _soak_fix_syntax(terminal, rounds)
        _soak_write_tests(terminal, rounds)
        _soak_next_edit_accept(terminal, FEW[variant])
    _figures(request, terminal, f"offline, {variant}")


#: The docstring preset's rewrite of ``is_email`` (lines 14-15 of VALIDATORS), as a model
#: answers it; the file's last line is unfinished (a person half-way through is_version).
DOCUMENTED = (
    "def is_email(text: str) -> bool:\n"
    '    """Whether text is an email address."""\n'
    "    return EMAIL_PATTERN.fullmatch(text) is not None\n"
)
#: A model's tests for calc.py's ``double``.
MODEL_TESTS = (
    "from calc import double\n\n\n"
    "def test_double_of_two():\n    assert double(2) == 4\n\n\n"
    "def test_double_of_a_negative_number():\n    assert double(-3) == -6\n"
)


def _soak_docstring(terminal: Terminal, rounds: int) -> None:
    """The built-in user action ``docstring`` (C-c / a, its id at the prompt) on is_email."""
    docstring = '    """Whether text is an email address."""'
    for _ in range(rounds):
        terminal.goto_line(15)
        terminal.keys("C-c", "/", "a")
        terminal.wait(lambda s: "fastedit action:" in s, "the action prompt")
        terminal.type("docstring")
        _job(terminal, ("Enter",), lambda s: docstring in s, "Action")
        _undo(terminal, lambda s: docstring not in s, "the docstring")


ERASE_MESSAGES = (
    "(with-current-buffer (messages-buffer) (let ((inhibit-read-only t)) (erase-buffer)))"
)


def _soak_cancel(terminal: Terminal, stub: StubModelServer, rounds: int) -> None:
    """Complete the rest with a model whose stream stalls after its first text: cancel (C-c / k)
    stops it and says so, and one undo takes back what landed."""
    stub.default = Answer(tokens=["text) is not None", "  # never", " finished"], stall_after=2)
    streamed = COMPLETED + "  # never"
    for _ in range(rounds):
        asked = len(stub.requests)
        terminal.goto_line(UNFINISHED_LINE)
        _press(terminal, ("C-e", "C-c", "/", "c"), lambda s: streamed in s, "the streamed text")
        # *Messages* emptied (in Emacs alone), so that what it shows below is this job's.
        terminal.keys("M-:")
        terminal.type(ERASE_MESSAGES)
        terminal.keys("Enter")
        _press(
            terminal,
            ("C-c", "/", "k"),
            # The reply ("cancelled job-N") or the job's end, whichever Emacs shows last.
            lambda s: "cancelled" in terminal.echo_area() and streamed in s,
            "the cancel said",
        )
        # The job ended cancelled (the echo area shows its end or the reply, whichever came
        # last): in *Messages*, shown beside (C-h e) and closed again (C-x 1).
        terminal.keys("C-h", "e")
        terminal.wait(lambda s: "fastedit: Complete the rest cancelled" in s, "the job's end")
        terminal.keys("C-x", "1")
        terminal.wait(lambda s: "*Messages*" not in s, "the one window again")
        # The stub, not Emacs, is asked: the job stopped its model's stream.
        poll(
            lambda asked=asked: (
                stub.requests[asked:] and all(r.client_closed for r in stub.requests[asked:])
            ),
            "the model's stream closed",
            TIMEOUT,
        )
        _undo(terminal, lambda s: COMPLETED not in s, "the cancelled job's text")


def _soak_model_tests(terminal: Terminal, rounds: int) -> None:
    """Write tests with the model on one function: its tests stream into the test module (a new
    buffer, shown in the other window); one undo there takes them back, so every round writes
    them anew where the user sees them."""
    terminal.keys("C-x", "C-f")
    terminal.type("calc.py")
    terminal.keys("Enter")
    terminal.wait(lambda s: "calc.py" in s and "FE[auto" in s, "calc.py under fastedit")
    test = "def test_double_of_a_negative_number():"
    for _ in range(rounds):
        terminal.goto_line(1)
        _job(terminal, ("C-c", "/", "t"), lambda s: test in s, "Write tests")
        terminal.keys("C-x", "o")  # to test_calc.py's window
        _undo(terminal, lambda s: test not in s, "the tests")
        terminal.keys("C-x", "o")  # back to calc.py


# Six jobs per round (FEW more): a guard of 120 s per round (1,200 s at the suite's 10 rounds, over
# its 180 s default), far above the ~3 s a round takes; each job has its own hang guard (TIMEOUT).
@pytest.mark.timeout(120 * max(ROUNDS.values()))
@pytest.mark.parametrize("variant", ROUNDS)
def test_model_actions_run_again_and_again_without_a_hang(
    terminal_tools: None,
    tmp_path: Path,
    stub: StubModelServer,
    variant: str,
    request: pytest.FixtureRequest,
) -> None:
    files = ("validators.py", VALIDATORS), ("broken.py", BROKEN), ("calc.py", CALC)
    rounds = ROUNDS[variant]
    with _emacs(tmp_path, stub, variant == "beside-jedi", *files) as (terminal, _project):
        stub.default = Answer(text="text) is not None", token_size=3, tps=200)
        for _ in range(rounds):
            terminal.goto_line(UNFINISHED_LINE)
            _job(
                terminal,
                ("C-e", "C-c", "/", "c"),
                lambda s: COMPLETED in s,
                "Complete the rest",
            )
            _undo(terminal, lambda s: COMPLETED not in s, "the completion")
        _soak_cancel(terminal, stub, FEW[variant])
        stub.default = Answer(text=r"\d{4}-\d{2}-\d{2}", token_size=3, tps=200)
        for _ in range(rounds):
            terminal.goto_line(REGEX_LINE)
            _job(terminal, ("C-c", "/", "r"), lambda s: PATTERN in s, "Generate regex")
            _undo(terminal, lambda s: PATTERN not in s, "the pattern")
        stub.default = Answer(text=f"```python\n{REWRITE}```\n", token_size=4, tps=400)
        rewritten = "return bool(EMAIL_PATTERN.fullmatch(text))"
        for _ in range(rounds):
            terminal.goto_line(14)
            terminal.keys("C-Space", "C-n", "C-n")
            terminal.keys("C-c", "/", "e")
            terminal.wait(lambda s: "Edit the selection:" in s, "the instruction prompt")
            terminal.type("cast to bool")
            _job(terminal, ("Enter",), lambda s: rewritten in s, "Edit selection")
            _undo(terminal, lambda s: rewritten not in s, "the rewrite")
        stub.default = Answer(text=f"```python\n{DOCUMENTED}```\n", token_size=4, tps=400)
        _soak_docstring(terminal, rounds)
        stub.default = Answer(text="```python\nx = 1\nif x:\n    print(x)\n```\n", tps=400)
        _soak_fix_syntax(terminal, rounds)
        stub.default = Answer(text=f"```python\n{MODEL_TESTS}```\n", token_size=4, tps=400)
        _soak_model_tests(terminal, rounds)
    _figures(request, terminal, f"model, {variant}")


def test_the_cursor_ends_after_the_completed_text_and_the_pattern(
    terminal_tools: None, tmp_path: Path
) -> None:
    with _emacs(tmp_path, None, False, ("validators.py", VALIDATORS)) as (terminal, _project):
        terminal.goto_line(UNFINISHED_LINE)
        _job(terminal, ("C-e", "C-c", "/", "c"), lambda s: COMPLETED in s, "Complete the rest")
        screen = terminal.screen().split("\n")
        column, row = terminal.cursor()
        assert screen[row] == COMPLETED and column == len(COMPLETED), (column, row, screen)
        # The next typing lands after the completion, not in front of it.
        terminal.type("  # ok")
        terminal.wait(lambda s: COMPLETED + "  # ok" in s, "the typing after the completion")
        terminal.goto_line(REGEX_LINE)
        _job(terminal, ("C-c", "/", "r"), lambda s: PATTERN in s, "Generate regex")
        screen = terminal.screen().split("\n")
        column, row = terminal.cursor()
        assert screen[row].startswith(PATTERN) and column == len(screen[row].rstrip()), (
            column,
            row,
            screen,
        )


def test_a_next_edit_suggestion_shows_its_key_and_the_replaced_text_in_a_terminal(
    terminal_tools: None, tmp_path: Path
) -> None:
    with _emacs(tmp_path, None, False, ("calc.py", RENAME)) as (terminal, _project):
        # Rename "count" to "acc" on line 2: the next occurrence is suggested on line 4.
        terminal.goto_line(2)
        terminal.keys("M-f", "M-b", "M-d")
        terminal.type("acc")
        screen = terminal.wait(lambda s: "accepts]" in s, "the suggestion's key hint")
        line = next(row for row in screen.split("\n") if "+= item" in row)
        # The replaced text and the new one side by side, then the key.
        assert line.startswith("        countacc += item * scale  [C-c / n accepts]"), line
        # The replaced text is drawn apart (a background), not only struck through (which a
        # terminal may not draw: "countacc" would read as one word).
        colours = terminal.tmux("capture-pane", "-p", "-e", "-t", "emacs")
        row = next(r for r in colours.split("\n") if "+= item" in r)
        start = row.index("count")
        assert re.search(r"\x1b\[[0-9;]*4[0-9;]*m$", row[:start]), repr(row)
        terminal.keys("C-c", "/", "n")
        terminal.wait(lambda s: "        acc += item * scale" in s, "the accepted suggestion")


CART = (Path(__file__).parents[2] / "examples" / "javascript" / "cart.js").read_text()
#: Fixes in a row on cart.js. The hang of issue 30 (fastedit.el waiting for the command's reply)
#: hit about 1 job in 4 or 5 here: 3 rounds caught it in 1 run of 3, 10 rounds in 3 of 3.
CART_ROUNDS = 10


def test_a_javascript_syntax_fix_leaves_valid_code_and_no_duplicated_line_in_a_terminal(
    terminal_tools: None, tmp_path: Path
) -> None:
    # Issue 30: fastedit alone, offline, a fix of cart.js once left
    # "sum += itemTotal(item);    sum += itemTotal(item;" (a hung job's half rewrite).
    broken = "    sum += itemTotal(item;"
    assert broken + "\n" in CART
    fixed = CART.replace(broken + "\n", "    sum += itemTotal(item);\n").rstrip("\n").split("\n")

    def shows_fixed(screen: str) -> bool:
        return "\n".join(fixed) in "\n".join(line.rstrip() for line in screen.split("\n"))

    files = ("validators.py", VALIDATORS), ("cart.js", CART)
    with _emacs(tmp_path, None, False, *files) as (terminal, _project):
        # fastedit-lsp alone for JavaScript too, as a user adds it (M-: here, init.el there).
        terminal.keys("M-:")
        terminal.type(
            "(progn (fastedit-eglot-setup 'js-mode nil) (add-hook 'js-mode-hook #'eglot-ensure))"
        )
        terminal.keys("Enter")
        terminal.keys("C-x", "C-f")
        terminal.type("cart.js")
        terminal.keys("Enter")
        terminal.wait(lambda s: "cart.js" in s and "FE[auto" in s, "cart.js under fastedit")
        for _ in range(CART_ROUNDS):
            # The whole buffer selected (C-x h), then the fix: the one line fixed in place.
            _job(terminal, ("C-x", "h", "C-c", "/", "s"), shows_fixed, "Fix syntax")
            screen = terminal.screen()
            assert screen.count("sum += itemTotal(item") == 1, screen
            _undo(terminal, lambda s: broken in s and not shows_fixed(s), "the fix")


#: The README's complete-the-rest line alone: nothing earlier in the open files continues it.
ALONE = "def is_semver(text):\n    return SEMVER_PATTERN.fullmatch(\n"
NOTICE = (
    "fastedit: no model configured: offline, completions only continue code already in your open"
    " files (configure a model for more: fastedit-lsp doctor)"
)


def test_offline_completion_with_nothing_to_complete_says_once_what_it_completes(
    terminal_tools: None, tmp_path: Path
) -> None:
    with _emacs(tmp_path, None, False, ("alone.py", ALONE)) as (terminal, _project):
        terminal.goto_line(2)
        for _ in range(2):
            # completion-at-point (M-TAB): eglot asks, the offline engine has nothing.
            _press(
                terminal,
                ("C-e", "M-Tab"),
                lambda _: "No match" in terminal.echo_area(),
                "the empty answer",
            )
        terminal.keys("C-h", "e")  # *Messages* beside: eglot echoed the server's notice there

        def answered_twice(screen: str) -> bool:
            messages = screen.replace("\\\n", "")  # a long line wraps at the window's edge
            return "No match [2 times]" in messages or messages.count("No match") >= 2

        screen = terminal.wait(answered_twice, "both answers in *Messages*")
        assert screen.replace("\\\n", "").count(NOTICE) == 1, screen
