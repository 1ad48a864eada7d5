"""fastedit-lsp in lsp-mode 8 (Debian ``elpa-lsp-mode``), a client beyond the bundled three.

Headless Emacs (batch) with lsp-mode set up as the README says (fastedit as an add-on client for
Python), against the real server and the loopback stub model: a code action streams its edits,
commands run through ``lsp-workspace-command-execute``, revert restores the text, and nothing
lands in ``*Warnings*`` or ``*Messages*`` as a warning: lsp-mode warns "Unknown notification" for
every notification it does not know, and it does not declare fastedit's opt-in capability.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fastedit_lsp.tools.stub import Answer, StubModelServer
from tests.support.editors.emacs_driver import (
    BEYOND_ASCII,
    SESSION_TIMEOUT,
    _tail,
    hermetic_env,
    scenario_env,
    skip_or_fail,
)

#: The user's setup as docs/clients.md gives it.
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "editors" / "lsp-mode.el"

ORIGINAL = "import os\n\nvalue = "
ANSWER = "max(1, 2, 3)"  # a builtin: its name resolves (the names check)

#: The user's init, as the README has it (plus what keeps a batch session quiet and hermetic).
INIT = r"""
(require 'lsp-mode)
(require 'lsp-modeline)
(require 'lsp-headerline)
(require 'lsp-diagnostics)
(require 'lsp-completion)
(setq lsp-client-packages nil          ; no other Python server in this test
      lsp-session-file (expand-file-name "lsp-session" user-emacs-directory)
      lsp-auto-guess-root t
      lsp-enable-snippet nil
      lsp-keep-workspace-alive nil
      lsp-restart 'ignore
      python-indent-guess-indent-offset nil
      make-backup-files nil
      create-lockfiles nil)
;; Emacs' own Python checkers, absent here, warn in *Warnings*: not lsp-mode's or fastedit's.
(add-hook 'python-mode-hook
          (lambda () (remove-hook 'flymake-diagnostic-functions #'python-flymake t)))
(with-eval-after-load 'flymake-proc
  (remove-hook 'flymake-diagnostic-functions #'flymake-proc-legacy-flymake))
;; The user's setup, examples/editors/lsp-mode.el (docs/clients.md has the same), loaded as
;; written; then the client's command and options pointed at this checkout's server and the
;; harness's verify.checkers (none), as the other editors get them.
(load fe-example nil t)
(let ((client (gethash 'fastedit lsp-clients)))
  (setf (lsp--client-new-connection client)
        (lsp-stdio-connection (list (getenv "FASTEDIT_TEST_PY") "-m" "fastedit_lsp"))
        (lsp--client-initialization-options client)
        (lambda ()
          (list :verify (list :checkers (json-parse-string (getenv "FASTEDIT_TEST_CHECKERS")
                                                           :array-type 'array))))))

(defvar fe-observations nil)
(defun fe-observe (key value) (push (cons key value) fe-observations) value)
(defun fe-wait (what pred &optional timeout)
  (let ((deadline (+ (float-time) (or timeout 60))) value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (funcall pred) (error "Timed out waiting for %s" what))))
(defun fe-command (command &optional argument)
  "Run COMMAND and wait for its answer, asynchronously: lsp-mode 8's synchronous requests drop
the messages that arrive in the same read as their answer (a running job's edit then goes
unanswered), which this test's own status and wait calls must not cause."
  (let ((fe-answer nil) (fe-done nil))
    (lsp-request-async "workspace/executeCommand"
                       (list :command command :arguments (if argument (vector argument) []))
                       (lambda (result) (setq fe-answer result fe-done t))
                       :error-handler (lambda (err) (setq fe-answer err fe-done 'error))
                       :mode 'detached)
    (fe-wait (format "the answer to %s" command) (lambda () fe-done))
    (if (eq fe-done 'error) (error "%s failed: %S" command fe-answer) fe-answer)))
(defun fe-last-job ()
  (let ((jobs (gethash "jobs" (fe-command "fastedit.status"))))
    (gethash "jobId" (aref jobs (1- (length jobs))))))
(defun fe-wait-job (id)
  (let ((record (fe-command "fastedit.wait" (ht ("jobId" id) ("timeoutMs" 50000)))))
    (fe-wait "the job's last edit in the buffer"
             (lambda () (equal (buffer-string) (fe-expected record))))
    record))
(defun fe-code-action (title &optional menu-key)
  "Run the code action TITLE through lsp-mode's own command and menu (MENU-KEY: observe it)."
  (let ((last-nonmenu-event ?\r))
    (fe-wait "the code actions"
             (lambda () (seq-find (lambda (a) (equal (gethash "title" a) title))
                                  (lsp-code-actions-at-point))))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt collection &rest _)
                 (when menu-key
                   (fe-observe menu-key
                               (mapcar (lambda (c) (if (consp c) (car c) c)) collection)))
                 title)))
      (call-interactively #'lsp-execute-code-action))))
(defvar fe-expected-text nil)
(defun fe-expected (_record) fe-expected-text)
(defun fe-finish ()
  (fe-observe "messages" (with-current-buffer "*Messages*" (buffer-string)))
  (fe-observe "warnings" (if (get-buffer "*Warnings*")
                             (with-current-buffer "*Warnings*" (buffer-string))
                           ""))
  (with-temp-file (getenv "FASTEDIT_TEST_OUT")
    (insert (json-encode (reverse fe-observations))))
  (kill-emacs 0))
"""


#: Prints lsp-mode's version (from its header) once it loads.
VERSION = """(progn (require 'lsp-mode) (require 'lisp-mnt) (require 'find-func)
  (princ (with-temp-buffer (insert-file-contents (find-library-name "lsp-mode")) (lm-version))))"""


@functools.cache
def _lsp_mode_problem() -> str | None:
    emacs = shutil.which("emacs")
    if emacs is None:
        return "emacs is not installed (apt-get install --no-install-recommends emacs-nox)"
    probe = subprocess.run(
        [emacs, "--batch", "--eval", VERSION],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0 or not probe.stdout.startswith("8."):
        return (
            "lsp-mode 8 does not load in emacs (apt-get install --no-install-recommends "
            f"elpa-lsp-mode): {probe.stdout[-100:]} {probe.stderr[-300:]}"
        )
    return None


@pytest.fixture
def env(tmp_path: Path, stub: StubModelServer) -> dict[str, str]:
    if (problem := _lsp_mode_problem()) is not None:
        skip_or_fail(problem)
    return hermetic_env(
        tmp_path,
        FASTEDIT_FAST_BASE_URL=stub.base_url,
        FASTEDIT_FAST_MODEL="stub-fast",
        FASTEDIT_STANDARD_BASE_URL=stub.base_url,
        FASTEDIT_STANDARD_MODEL="stub-strong",
    )


def run(tmp_path: Path, env: dict[str, str], body: str, original: str = ORIGINAL) -> dict[str, Any]:
    """Open ``work.py`` holding ``original`` in lsp-mode (cursor at its end), run ``body``."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "work.py").write_text(original, encoding="utf-8")
    script = tmp_path / "scenario.el"
    script.write_text(
        ";; -*- coding: utf-8 -*-\n"
        + f"(defvar fe-example {json.dumps(str(EXAMPLE))})\n"
        + INIT
        + """
(find-file "work.py")
(lsp)
(fe-wait "lsp-mode's fastedit workspace"
         (lambda () (seq-find (lambda (w) (eq (lsp--workspace-status w) 'initialized))
                              (lsp-workspaces))))
(goto-char (point-max))
"""
        + body
        + "\n(fe-finish)\n",
        encoding="utf-8",
    )
    out = tmp_path / "observations.json"
    emacs = shutil.which("emacs")
    assert emacs is not None
    full_env = scenario_env(env, out)
    try:
        done = subprocess.run(
            [emacs, "--batch", "-l", str(script)],
            cwd=work,
            env=full_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            encoding="utf-8",
            errors="replace",  # Emacs' messages, read only when a session fails
            timeout=SESSION_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"emacs did not finish in {SESSION_TIMEOUT} s:\n{_tail(exc.stderr)}")
    if done.returncode != 0 or not out.exists():
        pytest.fail(f"emacs exited with {done.returncode}:\n{_tail(done.stderr)}")
    observations: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return observations


def test_lsp_mode_streams_a_code_action_runs_commands_and_reverts_without_a_warning(
    tmp_path: Path, env: dict[str, str], stub: StubModelServer
) -> None:
    stub.script(Answer(text=ANSWER, token_size=2, tps=20))
    seen = run(
        tmp_path,
        env,
        f"""
(call-interactively #'fastedit-lsp-toggle)  ; the example's command
(fe-observe "toggled" (fe-wait "the toggle's message"
                               (lambda () (with-current-buffer "*Messages*"
                                            (save-excursion
                                              (goto-char (point-max))
                                              (and (re-search-backward
                                                    "fastedit: \\\\([a-z]+\\\\) mode" nil t)
                                                   (match-string 1)))))))
(fe-observe "set" (gethash "mode" (fe-command "fastedit.setMode" (ht ("mode" "auto")))))
;; lsp-mode's own command and menu; the action picked by its title.
(fe-code-action "Complete the rest (fastedit)" "menu")
(setq fe-expected-text {json.dumps(ORIGINAL + ANSWER)})
(let ((id (fe-last-job)))
  (fe-observe "record" (fe-wait-job id))
  (fe-observe "streamed" (buffer-string))
  (fe-observe "reverted" (gethash "reverted" (fe-command "fastedit.revert" (ht ("jobId" id)))))
  (fe-wait "the revert" (lambda () (equal (buffer-string) {json.dumps(ORIGINAL)})))
  (fe-observe "after-revert" (buffer-string)))
;; What a client without fastedit/status reads instead.
(fe-observe "status-mode" (gethash "mode" (fe-command "fastedit.status")))
""",
    )
    assert seen["toggled"] == "fast" and seen["set"] == "auto"
    assert "Complete the rest (fastedit)" in seen["menu"]
    record = seen["record"]
    assert record["kind"] == "completeRest" and record["state"] == "done", record
    assert record["metrics"]["edits"] >= 2, record
    assert seen["streamed"] == ORIGINAL + ANSWER
    assert seen["reverted"] is True and seen["after-revert"] == ORIGINAL
    assert seen["status-mode"] == "auto"
    # The example's setup says how the job ended, as the bundled integrations do.
    assert "fastedit: Complete the rest done · stub-fast · " in seen["messages"], seen["messages"]
    # No popup: lsp-mode warned "Unknown notification: fastedit/status" for each status.
    assert "Unknown notification" not in seen["messages"], seen["messages"]
    assert "Warning" not in seen["messages"], seen["messages"]
    assert seen["warnings"] == "", seen["warnings"]


#: Run by a busy Emacs (``call-process`` reads nothing from the language server meanwhile): wait
#: until the stub model has served a whole answer, and a moment more for the server to send it on.
WAIT_FOR_THE_MODEL = """
import json, sys, time, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
deadline = time.monotonic() + 60  # a hang guard
while time.monotonic() < deadline:
    with opener.open(sys.argv[1].removesuffix("/v1") + "/_stub/requests") as reply:
        if any(request["completed"] for request in json.load(reply)):
            break
    time.sleep(0.02)
time.sleep(0.5)
"""


def test_lsp_mode_gets_every_edit_when_it_reads_the_commands_answer_with_the_jobs_edits(
    tmp_path: Path, env: dict[str, str], stub: StubModelServer
) -> None:
    # Emacs busy (a long command, a garbage collection) while a job starts: when it reads again,
    # the answer to the action's command and the job's first edit come in one read. lsp-mode 8's
    # waiting requests drop what follows their answer in that read, so the edit went unanswered
    # and the job stopped after 30 s ("the editor did not answer"). The example's setup sends
    # fastedit's commands without waiting.
    stub.script(Answer(text=ANSWER, token_size=4, tps=200))
    seen = run(
        tmp_path,
        env,
        f"""
(defun fe-busy (&rest _)
  (call-process (getenv "FASTEDIT_TEST_PY") nil nil nil "-c" {json.dumps(WAIT_FOR_THE_MODEL)}
                (getenv "FASTEDIT_FAST_BASE_URL")))
(defun fe-busy-once (method params &rest _)
  (when (and (equal method "workspace/executeCommand")
             (equal (plist-get params :command) "fastedit.completeRest"))
    (advice-remove 'lsp-request-async #'fe-busy-once)
    (run-at-time 0 nil #'fe-busy)))
(advice-add 'lsp-request-async :before #'fe-busy-once)
(fe-code-action "Complete the rest (fastedit)")
(setq fe-expected-text {json.dumps(ORIGINAL + ANSWER)})
(fe-observe "record" (fe-wait-job (fe-last-job)))
(fe-observe "streamed" (buffer-string))
""",
    )
    record = seen["record"]
    assert record["state"] == "done", json.dumps(record)[:3000]
    assert seen["streamed"] == ORIGINAL + ANSWER
    assert "did not answer" not in seen["messages"], seen["messages"]


def test_lsp_mode_reads_text_beyond_ascii_exactly(
    tmp_path: Path, env: dict[str, str], stub: StubModelServer
) -> None:
    # Text beyond ASCII, the emoji two UTF-16 units (core/json_codec.py writes it escaped).
    original, answer = BEYOND_ASCII
    stub.script(Answer(text=answer, token_size=2, tps=40))
    seen = run(
        tmp_path,
        env,
        f"""
(fe-code-action "Complete the rest (fastedit)")
(setq fe-expected-text {json.dumps(original + answer, ensure_ascii=False)})
(fe-observe "record" (fe-wait-job (fe-last-job)))
(fe-observe "streamed" (buffer-string))
""",
        original,
    )
    assert seen["record"]["state"] == "done", json.dumps(seen["record"])[:3000]
    assert seen["streamed"] == original + answer
    assert "Warning" not in seen["messages"], seen["messages"]
