"""Next-edit suggestions in real Emacs (batch) with fastedit.el and eglot, through rassumfrassum
beside jedi-language-server, offline: a rename typed at one place shows the next occurrence as an
overlay, ``C-c / n`` applies it as one undo step and the next one follows, ``C-c / d``
dismisses one, ``C-c / N`` turns them off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.editors.emacs_driver import emacs, hermetic_env, run_scenario

SOURCE = """def total(items, scale):
    count = 0
    for item in items:
        count += item * scale
    log(count, "sum")
    return count
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    emacs()  # skip (or fail in CI) before starting anything when Emacs cannot run
    return hermetic_env(tmp_path)


def test_a_rename_shows_the_next_occurrence_and_one_key_applies_it_in_one_undo_step(
    tmp_path: Path, env: dict[str, str]
) -> None:
    scenario = f"""
(fe-open "calc.py" {json.dumps(SOURCE)})
(goto-char (point-min))
(forward-line 1)
(forward-char 4)
(delete-char 5)
(insert "acc")
(fe-wait "a suggestion" (lambda () fastedit--next-edit))
(let ((overlay (car fastedit--next-edit)))
  (fe-observe "line" (line-number-at-pos (overlay-start overlay)))
  (fe-observe "replaced" (buffer-substring-no-properties (overlay-start overlay)
                                                         (overlay-end overlay)))
  (fe-observe "shown" (substring-no-properties (overlay-get overlay 'after-string)))
  (fe-observe "hint" (substring-no-properties
                      (overlay-get (overlay-get overlay 'fastedit-hint) 'after-string))))
(fe-observe "before-accept" (buffer-string))
(fe-key "C-c / n")
(fe-observe "after-accept" (buffer-substring-no-properties (point-min) (point-max)))
(fe-wait "the next suggestion" (lambda () fastedit--next-edit))
(fe-observe "next-line" (line-number-at-pos (overlay-start (car fastedit--next-edit))))
(fe-key "C-c / d")
(fe-observe "after-dismiss" (and fastedit--next-edit t))
(fe-observe "undo" (fe-undo 1))
(fe-observe "status" (plist-get (fe-command "fastedit.status") :nextEdit))
(fe-key "C-c / N")
(fe-observe "enabled" (plist-get (plist-get (fe-command "fastedit.status") :nextEdit) :enabled))
(fe-finish)
"""
    seen = run_scenario(tmp_path, scenario, env)
    renamed = SOURCE.replace("count = 0", "acc = 0")
    # The new text, and the key that accepts it.
    assert (seen["line"], seen["replaced"], seen["shown"]) == (4, "count", "acc")
    assert seen["hint"] == "  [C-c / n accepts]"  # at the end of the line: the key that accepts
    assert seen["before-accept"] == renamed  # shown, not applied
    accepted = renamed.replace("count += item", "acc += item")
    assert seen["after-accept"] == accepted
    assert seen["next-line"] == 5
    assert seen["after-dismiss"] is None
    assert seen["undo"] == [renamed]  # one undo removes the accepted edit, not the user's
    assert seen["status"]["accepted"] == 1 and seen["status"]["dismissed"] == 1
    assert seen["enabled"] is False
    assert seen["prompts"] == []


def test_the_next_edit_timer_waits_for_no_reply_and_a_server_shut_down_answers_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # The timer asked synchronously: firing after fastedit had answered eglot's shutdown (rass
    # still waiting for jedi), its request was never answered, so eglot's shutdown waited
    # jsonrpc's 10 s request timeout and then killed the servers ("exited with status 9"). Now
    # the timer does not wait for its reply, and the server answers any request after shutdown
    # with an error at once.
    scenario = f"""
(fe-open "calc.py" {json.dumps(SOURCE)})
(let ((server (eglot-current-server)))
  (jsonrpc-request server :shutdown nil :timeout 60)   ; every server answered
  (fastedit--next-edit-request (current-buffer))       ; the timer fires now
  (fe-observe "waiting" (hash-table-count (jsonrpc--request-continuations server)))
  (fe-wait "the answer" (lambda () (zerop (hash-table-count
                                             (jsonrpc--request-continuations server)))))
  (fe-observe "suggestion" (and fastedit--next-edit t))
  (jsonrpc-notify server :exit nil))
(fe-observe "prompts" [])
(with-temp-file (getenv "FASTEDIT_TEST_OUT")
  (insert (json-encode (reverse fe-observations))))
(kill-emacs 0)
"""
    seen = run_scenario(tmp_path, scenario, env)
    assert seen["waiting"] == 1  # the timer returned with its request in flight
    assert seen["suggestion"] is None
