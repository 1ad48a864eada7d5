;;; emacs_driver.el --- Batch helpers for tests/editors/test_emacs.py -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by `emacs --batch' before a test's scenario.  It sets eglot up
;; as a user would with fastedit.el (rass composing the user's server,
;; here jedi-language-server, with fastedit-lsp, all from the venv of
;; FASTEDIT_TEST_PY), and offers helpers:
;; wait on a condition while the event loop runs, press keys, record
;; observations that the Python test asserts on.  Environment:
;; FASTEDIT_TEST_PY (the venv's python), FASTEDIT_TEST_OUT (the JSON
;; file the observations go to).  Every prompt (y-or-n-p, yes-or-no-p)
;; is recorded; stdin is /dev/null, so a prompt also fails at once
;; instead of blocking.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'subr-x)
(require 'eglot)
(require 'fastedit)

(setq eglot-sync-connect t
      eglot-autoshutdown t
      python-indent-guess-indent-offset nil
      make-backup-files nil
      create-lockfiles nil)

(defvar fe-py (getenv "FASTEDIT_TEST_PY"))
(defvar fe-observations nil "Alist of what the scenario saw, in order.")
(defvar fe-prompts nil "Every yes/no prompt shown.")
(defvar fe-started nil "Ids of the jobs fastedit's commands started.")

(defun fe--record-prompt (prompt &rest _)
  "Record PROMPT."
  (push (substring-no-properties prompt) fe-prompts))
(advice-add 'y-or-n-p :before #'fe--record-prompt)
(advice-add 'yes-or-no-p :before #'fe--record-prompt)
(advice-add 'fastedit--started :filter-return
            (lambda (id) (push id fe-started) id))

(defun fe--boundary-after-chunk (&rest _)
  "Put an undo boundary in every buffer, as interactive Emacs would.
The command loop adds one after every command (moving the cursor
while a job streams is enough) and a timer every 10 s; batch runs
no command between chunks, so without this a test could not tell
a job joined into one undo step from one that never was split."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (undo-boundary))))
(advice-add 'fastedit--apply :after #'fe--boundary-after-chunk)

(defvar fe-bin (file-name-directory fe-py) "The venv's scripts.")
(setq fastedit-server-command (list fe-py "-m" "fastedit_lsp")
      fastedit-rass-command (list (expand-file-name "rass" fe-bin)))
(fastedit-eglot-setup 'python-mode
                      (list (expand-file-name "jedi-language-server" fe-bin)))

(defun fe--test-checkers (options)
  "OPTIONS with verify.checkers from FASTEDIT_TEST_CHECKERS (the harness's
default, JSON), unless `fastedit-settings' names its own."
  (let ((checkers (getenv "FASTEDIT_TEST_CHECKERS"))
        (verify (plist-get fastedit-settings :verify)))
    (if (or (null checkers) (plist-member verify :checkers))
        options
      (list :fastedit
            (plist-put (copy-sequence fastedit-settings) :verify
                       (plist-put (copy-sequence verify) :checkers
                                  (json-parse-string checkers :array-type 'array)))))))
(advice-add 'fastedit--initialization-options :filter-return #'fe--test-checkers)

(defun fe-observe (key value)
  "Record VALUE under KEY for the Python side."
  (push (cons key value) fe-observations)
  value)

(defun fe-wait (what pred &optional timeout)
  "Run the event loop until PRED is non-nil (its value), or fail naming WHAT.
TIMEOUT defaults to 60 seconds: generous for a loaded machine."
  (let ((deadline (+ (float-time) (or timeout 60)))
        value)
    (while (and (not (setq value (funcall pred)))
                (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (funcall pred) (error "Timed out waiting for %s" what))))

(defun fe-key (keys)
  "Press KEYS (a `kbd' string) as the user would, then wait for the replies.
fastedit's commands return before the server's reply; the scenario
looks once every reply they asked for came."
  (execute-kbd-macro (kbd keys))
  (when-let ((server (eglot-current-server)))
    (fe-wait "the replies to fastedit's commands"
             (lambda () (zerop (or (fastedit--get :pending server) 0))))))

(defun fe-open (file text)
  "Visit FILE holding TEXT, connect eglot as `M-x eglot' would, wait for it."
  (with-temp-file file (insert text))
  (find-file file)
  (apply #'eglot (eglot--guess-contact))
  (fe-wait "fastedit-mode in the buffer" (lambda () fastedit-mode)))

(defun fe-command (command &optional argument timeout)
  "Send fastedit's COMMAND with ARGUMENT straight to the server; its reply.
TIMEOUT in seconds for the reply."
  (jsonrpc-request (eglot-current-server) :workspace/executeCommand
                   (list :command command
                         :arguments (if argument (vector argument) []))
                   :timeout (or timeout 60)))

(defun fe-job (id)
  "The record of job ID once finished, and once this buffer knows it is."
  (let ((record (fe-command "fastedit.wait" (list :jobId id :timeoutMs 50000))))
    (fe-wait (format "the end of %s in the buffer" id)
             (lambda () (not (member id fastedit--running))))
    record))

(defvar fe--taken 0 "How many of the started jobs the scenario has taken.")

(defun fe-last-started ()
  "The id of the job the last key started, once the server's reply came.
fastedit's keys return before the reply (it is asked for asynchronously)."
  (fe-wait "the reply that starts the job" (lambda () (> (length fe-started) fe--taken)))
  (setq fe--taken (length fe-started))
  (car fe-started))

(defun fe-lighter ()
  "The text of `fastedit-mode's mode-line construct.
`format-mode-line' gives \"\" in batch: evaluate the construct itself."
  (let ((construct (cadr (assq 'fastedit-mode minor-mode-alist))))
    (substring-no-properties
     (if (eq (car-safe construct) :eval) (eval (cadr construct) t) construct))))

(defvar fe--snapshots nil)

(defun fe--snapshot ()
  "Record the buffer's text; transparent to `undo' chaining."
  (interactive)
  (push (buffer-string) fe--snapshots)
  (setq this-command last-command))
(global-set-key (kbd "<f12>") #'fe--snapshot)

(defun fe-undo (n)
  "Press `C-/' N times in a row, as one undo chain; the text after each."
  (setq fe--snapshots nil)
  (fe-key (string-join (make-list n "C-/ <f12>") " "))
  (vconcat (reverse fe--snapshots)))

(defun fe-finish ()
  "Write the observations and prompts as JSON, stop the server, exit 0."
  (fe-observe "prompts" (vconcat (reverse fe-prompts)))
  (with-temp-file (getenv "FASTEDIT_TEST_OUT")
    (let ((json-encoding-pretty-print nil))
      (insert (json-encode (reverse fe-observations)))))
  ;; eglot 1.9 gives `shutdown' 1.5 s; through rass it waits for jedi too, which a loaded
  ;; 2-core machine once exceeded after every observation was written (a "Timed out" exit).
  (when-let ((server (eglot-current-server)))
    (condition-case err
        (eglot-shutdown server nil 10)
      (error
       ;; Say which server did not answer: the end of the JSON-RPC log and of the servers'
       ;; stderr (rass logs each server's replies there).
       (message "fastedit-test: shutdown failed: %S" err)
       (with-current-buffer (jsonrpc-events-buffer server)
         (message "%s" (buffer-substring-no-properties
                        (max (point-min) (- (point-max) 3000)) (point-max))))
       (dolist (buffer (buffer-list))
         (when (string-match-p "stderr" (buffer-name buffer))
           (with-current-buffer buffer
             (message "-- %s:\n%s" (buffer-name buffer)
                      (buffer-substring-no-properties
                       (max (point-min) (- (point-max) 3000)) (point-max))))))
       (kill-emacs 3))))
  (kill-emacs 0))

(provide 'emacs_driver)
;;; emacs_driver.el ends here
