"""fastedit.el never waits for a reply where a job's messages can follow it, read from its source.

Emacs 28's jsonrpc (the one Debian 12 ships with eglot 1.9), waiting for a reply with
``jsonrpc-request``, leaves the messages read together with that reply (a job's status and first
``workspace/applyEdit``, written right after it) unparsed until the server writes again: a job
looked hung. So every command of fastedit.el reaches the server with ``jsonrpc-async-request``,
and no function of it, nor any function it calls, asks synchronously: neither
``jsonrpc-request`` nor eglot's own synchronous helpers (``eglot--request``,
``eglot-execute-command``). ``ALLOWED_SYNC`` names the functions that may (none today).

The source is read with a small Emacs Lisp reader (strings, comments and character literals are
not code), each top-level definition's body is searched for the symbols it calls or quotes
(``(f ...)``, ``#'f``, ``'f``), and calls between fastedit.el's own functions are followed, so a
helper that waits taints every command that calls it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

FASTEDIT_EL = Path(__file__).resolve().parents[2] / "editors" / "emacs" / "fastedit.el"

#: Functions that wait for a reply (jsonrpc's, and eglot 1.9's wrappers of it).
SYNCHRONOUS = frozenset(
    {"jsonrpc-request", "eglot--request", "eglot-execute-command", "eglot-execute"}
)
#: The asynchronous request every command uses instead.
ASYNCHRONOUS = "jsonrpc-async-request"
#: fastedit.el's functions allowed to wait for a reply: only something a person asked to see
#: and that no job message follows (none today: even the status is asked without waiting).
ALLOWED_SYNC: frozenset[str] = frozenset()
#: The forms that define a named function (or a method) and its body.
DEFINERS = frozenset({"defun", "defmacro", "cl-defun", "cl-defmethod", "define-minor-mode"})

_TOKEN = re.compile(
    r"""
      (?P<comment>;[^\n]*)
    | (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<char>\?(?:\\(?:[CMSsHA]-)*\\?.|[^\\\s]))
    | (?P<open>\#?\()
    | (?P<close>\))
    | (?P<vopen>\[)
    | (?P<vclose>\])
    | (?P<quote>\#'|'|`|,@|,)
    | (?P<symbol>(?:[^\s()\[\]"';`,\\]|\\.)+)
    | (?P<space>\s+)
    """,
    re.X | re.S,
)

Form = str | list["Form"]


def _tokens(text: str) -> Iterator[tuple[str, str]]:
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        assert match is not None, f"fastedit.el: cannot read at {text[position : position + 40]!r}"
        position = match.end()
        kind = match.lastgroup
        assert kind is not None
        if kind not in ("comment", "space", "char"):
            yield kind, match.group()


def read_forms(text: str) -> list[Form]:
    """The top-level forms of ``text``: lists of symbols, ``"..."`` strings and nested lists.

    A quote becomes ``quote``/``function`` before what it quotes, as ``(quote x)`` reads."""
    stack: list[list[Form]] = [[]]
    for kind, token in _tokens(text):
        if kind in ("open", "vopen"):
            stack.append([])
        elif kind in ("close", "vclose"):
            assert len(stack) > 1, "fastedit.el: unbalanced )"
            done = stack.pop()
            stack[-1].append(done)
        elif kind == "quote":
            stack[-1].append("function" if token == "#'" else "quote")
        elif kind == "string":
            stack[-1].append(token)  # kept with its quotes: never taken for a symbol
        else:
            stack[-1].append(token)
    assert len(stack) == 1, "fastedit.el: unbalanced ("
    return stack[0]


def _symbols(form: Form) -> Iterator[str]:
    """Every symbol in ``form`` (called, quoted or passed), strings left out."""
    if isinstance(form, list):
        for item in form:
            yield from _symbols(item)
    elif not form.startswith('"'):
        yield form


@cache
def definitions() -> dict[str, set[str]]:
    """fastedit.el's named functions, each with the symbols its definition mentions."""
    found: dict[str, set[str]] = {}
    for form in read_forms(FASTEDIT_EL.read_text(encoding="utf-8")):
        if isinstance(form, list) and len(form) > 2 and form[0] in DEFINERS:
            name = form[1]
            if isinstance(name, str):
                found.setdefault(name, set()).update(_symbols(form[2:]))
    return found


def reaches(name: str, targets: frozenset[str] | set[str]) -> list[str] | None:
    """A call path from ``name`` through fastedit.el's functions to one of ``targets``."""
    defined = definitions()
    paths: dict[str, list[str]] = {name: [name]}
    queue = [name]
    while queue:
        current = queue.pop(0)
        for symbol in sorted(defined.get(current, ())):
            if symbol in targets:
                return [*paths[current], symbol]
            if symbol in defined and symbol not in paths:
                paths[symbol] = [*paths[current], symbol]
                queue.append(symbol)
    return None


def _commands() -> list[str]:
    """fastedit.el's interactive commands (``(interactive ...)`` in their body)."""
    commands = []
    for form in read_forms(FASTEDIT_EL.read_text(encoding="utf-8")):
        if (
            isinstance(form, list)
            and len(form) > 2
            and form[0] == "defun"
            and any(isinstance(f, list) and f[:1] == ["interactive"] for f in form[3:])
        ):
            commands.append(str(form[1]))
    return commands


def test_the_reader_reads_strings_comments_and_characters_as_no_code() -> None:
    forms = read_forms(
        '(defun a () "calls (jsonrpc-request x)" ; (jsonrpc-request y)\n'
        "  (list ?\\( ?\\\" ?\\) ?x) (jsonrpc-async-request s :m nil :success-fn #'b))\n"
        "(defun b (r) [1 (eglot--request s)] 'c)"
    )
    assert forms[0][:2] == ["defun", "a"]
    assert set(_symbols(forms[0])) == {
        "defun", "a", "list", "jsonrpc-async-request", "s", ":m", "nil", ":success-fn",
        "function", "b",
    }  # fmt: skip
    assert set(_symbols(forms[1])) >= {"eglot--request", "quote", "c"}


def test_no_function_of_fastedit_el_waits_for_a_reply() -> None:
    waiting = {
        name: path
        for name in definitions()
        if name not in ALLOWED_SYNC and (path := reaches(name, SYNCHRONOUS)) is not None
    }
    assert waiting == {}, "a synchronous request (call path): " + repr(waiting)


def test_every_command_that_talks_to_the_server_asks_without_waiting() -> None:
    # The scan is not vacuous: fastedit.el's commands are read, and those that start jobs,
    # change the mode, cancel, revert or report reach the asynchronous request.
    commands = _commands()
    job_commands = {
        "fastedit-complete-rest",
        "fastedit-generate-regex",
        "fastedit-generate-tests",
        "fastedit-fix-syntax",
        "fastedit-edit-selection",
        "fastedit-run",
        "fastedit-cancel",
        "fastedit-revert",
        "fastedit-revert-hunk",
        "fastedit-toggle-fast-mode",
        "fastedit-set-mode",
        "fastedit-status",
    }
    assert job_commands <= set(commands), sorted(job_commands - set(commands))
    silent = [name for name in sorted(job_commands) if reaches(name, {ASYNCHRONOUS}) is None]
    assert silent == [], f"commands that never reach {ASYNCHRONOUS}: {silent}"
    assert reaches("fastedit-complete-rest", {ASYNCHRONOUS}) == [
        "fastedit-complete-rest",
        "fastedit--start",
        "fastedit--execute",
        ASYNCHRONOUS,
    ]
