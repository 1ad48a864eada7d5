;;; fastedit.el --- Streamed AI edits with eglot -*- lexical-binding: t; -*-

;; Copyright (C) 2025 The fastedit-lsp authors

;; Author: The fastedit-lsp authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: convenience, languages, tools
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.

;;; Commentary:

;; fastedit-lsp is a language server that streams an AI model's edits
;; into the buffer: complete the rest, generate a regex, write tests,
;; fix a syntax error, edit the selection.  This package is its eglot
;; glue:
;;
;; - `fastedit-eglot-setup' puts fastedit-lsp into
;;   `eglot-server-programs' for a major mode, beside your own
;;   language server through rassumfrassum (`rass -- <your server> --
;;   fastedit-lsp'), since eglot runs one server per buffer;
;; - `fastedit-mode', turned on in the buffers eglot manages with
;;   fastedit-lsp, has one command per action, the fast-mode toggle,
;;   cancel and revert on the prefix keymap `fastedit-command-map'
;;   (`C-c /' by default, see `fastedit-keymap-prefix'), and a
;;   mode-line lighter with the mode and the speed of the last job;
;; - fastedit's streamed edits are applied without a prompt per chunk,
;;   whatever `eglot-confirm-server-initiated-edits' says (it still
;;   applies to every other server edit), and a job is one undo step
;;   unless you typed while it streamed.
;;
;; Quick start:
;;
;;   (require 'fastedit)
;;   (fastedit-eglot-setup 'python-mode '("pylsp"))
;;   (add-hook 'python-mode-hook #'eglot-ensure)
;;
;; See editors/emacs/README.md for installation, keys and settings.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)

(defgroup fastedit nil
  "Fast, safe, streamed AI edits through eglot and fastedit-lsp."
  :group 'eglot
  :prefix "fastedit-")

;;;; Settings

(defcustom fastedit-server-command '("fastedit-lsp")
  "The command that starts fastedit-lsp (a program and its arguments).
Read each time eglot connects."
  :type '(repeat string))

(defcustom fastedit-rass-command '("rass")
  "The rassumfrassum command that runs fastedit-lsp beside another server.
`fastedit-eglot-setup' composes RASS -- OTHER -- FASTEDIT from it."
  :type '(repeat string))

(defcustom fastedit-settings nil
  "Settings of fastedit-lsp, sent in initializationOptions.
A plist with the server's camelCase names, sent as the `fastedit'
section, for example
  (:mode \"fast\"
   :profiles (:fast (:provider \"cerebras\" :model \"llama3.1-8b\")))
Never put keys here: the server reads them from the environment.
Takes effect when eglot (re)connects."
  :type '(plist :key-type symbol :value-type sexp))

(defvar fastedit-mode-map)

(defun fastedit--set-keymap-prefix (symbol value)
  "Set SYMBOL to VALUE, a key for `fastedit-command-map' in `fastedit-mode'."
  (when (and (boundp symbol) (boundp 'fastedit-mode-map)
             (symbol-value symbol))
    (define-key fastedit-mode-map (kbd (symbol-value symbol)) nil))
  (set-default symbol value)
  (when (and value (boundp 'fastedit-mode-map))
    (define-key fastedit-mode-map (kbd value) 'fastedit-command-map)))

(defcustom fastedit-keymap-prefix "C-c /"
  "The key of `fastedit-command-map' in `fastedit-mode', or nil for none.
The default follows the Emacs key binding conventions: `C-c' and a
letter are yours; `C-c C-<key>', `C-c {', `C-c }', `C-c <', `C-c >',
`C-c :' and `C-c ;' belong to major modes; `C-c' with other
punctuation to minor modes.  No mode shipped with Emacs binds
`C-c /' in a `python-mode' buffer.  To use `C-c f' instead:
  (setq fastedit-keymap-prefix \"C-c f\") ; or customize it"
  :type '(choice (const :tag "None" nil) key-sequence)
  :set #'fastedit--set-keymap-prefix
  :initialize #'custom-initialize-default)

(defface fastedit-streaming '((t :inherit mode-line-emphasis))
  "Face of the mode-line lighter while a job streams.")

;;;; Keymaps

(defvar fastedit-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "f") #'fastedit-toggle-fast-mode)
    (define-key map (kbd "m") #'fastedit-set-mode)
    (define-key map (kbd "c") #'fastedit-complete-rest)
    (define-key map (kbd "r") #'fastedit-generate-regex)
    (define-key map (kbd "t") #'fastedit-generate-tests)
    (define-key map (kbd "s") #'fastedit-fix-syntax)
    (define-key map (kbd "e") #'fastedit-edit-selection)
    (define-key map (kbd "a") #'fastedit-run)
    (define-key map (kbd "h") #'fastedit-revert-hunk)
    (define-key map (kbd "k") #'fastedit-cancel)
    (define-key map (kbd "u") #'fastedit-revert)
    (define-key map (kbd "?") #'fastedit-status)
    (define-key map (kbd "n") #'fastedit-accept-next-edit)
    (define-key map (kbd "d") #'fastedit-dismiss-next-edit)
    (define-key map (kbd "N") #'fastedit-toggle-next-edit)
    map)
  "Keymap of fastedit's commands, on `fastedit-keymap-prefix'.
Bind it elsewhere too, for example:
  (global-set-key (kbd \"C-c f\") \\='fastedit-command-map)")
(fset 'fastedit-command-map fastedit-command-map)

(defvar fastedit-mode-map
  (let ((map (make-sparse-keymap)))
    (when fastedit-keymap-prefix
      (define-key map (kbd fastedit-keymap-prefix) 'fastedit-command-map))
    map)
  "Keymap of `fastedit-mode'.")

;;;; State

(defvar fastedit--server-status (make-hash-table :test #'eq :weakness 'key)
  "What each eglot server said in `fastedit/status'.
A plist (:mode MODE :running IDS :finished IDS): its mode, the ids of
its running jobs, and of its last finished ones (a job's end can be
read before the reply that started it).")

(defvar-local fastedit--follow nil
  "A marker where the running job that moves point left it, or nil.
Complete the rest and generate regex leave point after the text they
wrote, unless the user moved it meanwhile.")

(defvar-local fastedit--running nil
  "Ids of the running fastedit jobs that edit this buffer.")

(defvar-local fastedit--job nil
  "The record of this buffer's last fastedit job (for the mode line).")

(defvar-local fastedit--applying nil
  "Non-nil while fastedit applies one of its edits to this buffer.")

(defvar-local fastedit--undo-group nil
  "The change group of fastedit's edits since the last other change.")

;;;; The minor mode

;;;###autoload
(define-minor-mode fastedit-mode
  "Fast AI edits from fastedit-lsp in this eglot-managed buffer.

\\{fastedit-mode-map}
Commands under `fastedit-keymap-prefix':
\\{fastedit-command-map}"
  :lighter (:eval (fastedit--lighter))
  :keymap fastedit-mode-map
  (if fastedit-mode
      (add-hook 'before-change-functions #'fastedit--before-change nil t)
    (remove-hook 'before-change-functions #'fastedit--before-change t)
    (fastedit--undo-close)
    (setq fastedit--running nil)))

(defun fastedit--server-p (server)
  "Return non-nil if eglot SERVER talks to fastedit-lsp (maybe via rass)."
  (let ((provider (plist-get (eglot--capabilities server)
                             :executeCommandProvider)))
    (and (seq-contains-p (plist-get provider :commands) "fastedit.status")
         t)))

(defun fastedit-maybe-enable ()
  "Turn `fastedit-mode' on if eglot manages this buffer with fastedit-lsp.
Turn it off otherwise.  For `eglot-managed-mode-hook'."
  (let ((server (and (bound-and-true-p eglot--managed-mode)
                     (eglot-current-server))))
    (fastedit-mode (if (and server (fastedit--server-p server)) 1 -1))))

(defvar fastedit-keys-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map fastedit-mode-map)
    map)
  "Keymap of `fastedit-keys-mode': `fastedit-mode-map's keys.")

(define-minor-mode fastedit-keys-mode
  "Keys of fastedit in the buffers of the modes given `fastedit-eglot-setup'.
Before eglot connects, or when fastedit-lsp is not running, a key says
why instead of falling through to another command (`C-c /' undefined,
then `c' typed into the buffer)."
  :keymap fastedit-keys-mode-map)

;;;; Composing the server command

(defvar fastedit--said nil
  "The last messages fastedit said, whole, newest first (at most 10).
`fastedit-status' lists them in the *fastedit* buffer.")

(defun fastedit--say (text)
  "Show TEXT in the echo area and keep it for the *fastedit* buffer."
  (setq fastedit--said (seq-take (cons text fastedit--said) 10))
  (message "%s" text))

(defvar fastedit--contacts nil
  "The contacts `fastedit-eglot-setup' installed (skipped when guessing).")

(defun fastedit--initialization-options (_server)
  "The initializationOptions: `fastedit-settings' as the `fastedit' section."
  (if fastedit-settings
      (list :fastedit fastedit-settings)
    (make-hash-table)))

(defconst fastedit--install-advice
  "install it with `pip install .' in a clone of fastedit-lsp, or set `fastedit-server-command'"
  "How to get fastedit-lsp, as `fastedit-lsp editors' and the README say.")

(defun fastedit--missing (command)
  "Non-nil if COMMAND's program (its first word) is not found."
  (let ((program (car command)))
    (not (and (stringp program)
              (if (string-match-p "/" program)
                  (file-executable-p (expand-file-name program))
                (executable-find program))))))

(defun fastedit--checked-other (other-server)
  "OTHER-SERVER if it and rass are found, else nil with a one-line message.
Also says so when fastedit-lsp itself is not found."
  (when (fastedit--missing fastedit-server-command)
    (message "fastedit: %s not found: %s" (car fastedit-server-command)
             fastedit--install-advice))
  (cond ((null other-server) nil)
        ((fastedit--missing other-server)
         (message "fastedit: %s not found: fastedit-lsp runs alone (install it, or drop it from `fastedit-eglot-setup')"
                  (car other-server))
         nil)
        ((fastedit--missing fastedit-rass-command)
         (message "fastedit: %s not found: fastedit-lsp runs alone, without %s (pip install rassumfrassum)"
                  (car fastedit-rass-command) (car other-server))
         nil)
        (t other-server)))

(defun fastedit-eglot-contact (&optional other-server)
  "An eglot contact running fastedit-lsp beside OTHER-SERVER through rass.
OTHER-SERVER is a command (a list of strings); nil runs fastedit-lsp
alone.  The contact sends `fastedit-settings' as initializationOptions."
  (append (if other-server
              (append fastedit-rass-command (list "--") other-server
                      (list "--") fastedit-server-command)
            fastedit-server-command)
          (list :initializationOptions #'fastedit--initialization-options)))

(defun fastedit--mode-entry (mode)
  "The contact `eglot-server-programs' has for MODE, not fastedit's own."
  (cl-loop for (modes . contact) in eglot-server-programs
           for names = (mapcar (lambda (m) (if (consp m) (car m) m))
                               (if (or (symbolp modes)
                                       (keywordp (cadr modes)))
                                   (list modes)
                                 modes))
           when (and (memq mode names)
                     (not (memq contact fastedit--contacts)))
           return contact))

(defun fastedit--command-of (contact interactive)
  "The program and arguments of eglot CONTACT, or nil if it has none.
A function is called with INTERACTIVE; a class and keyword arguments
are dropped."
  (let ((contact (if (functionp contact)
                     (funcall contact interactive)
                   contact)))
    (when (and (consp contact) (symbolp (car contact))
               (not (keywordp (car contact))))
      (setq contact (cdr contact)))
    (when (and (consp contact) (stringp (car contact)))
      (let ((command (seq-take-while #'stringp contact)))
        ;; (HOST PORT) and :autoport contacts cannot be composed.
        (and (= (length command)
                (or (cl-position-if #'keywordp contact) (length contact)))
             command)))))

(defun fastedit--guess-other (original mode interactive)
  "The command of ORIGINAL, MODE's own contact, or nil with a warning.
INTERACTIVE is passed to a contact function."
  (condition-case err
      (or (fastedit--command-of original interactive)
          (progn (display-warning
                  'fastedit
                  (format "No server command for %s: fastedit-lsp runs alone"
                          mode))
                 nil))
    (error (display-warning
            'fastedit (format "%s: fastedit-lsp runs alone"
                              (error-message-string err)))
           nil)))

;;;###autoload
(defun fastedit-eglot-setup (modes &optional other-server)
  "Make eglot run fastedit-lsp for MODES (a major mode or a list of them).
OTHER-SERVER is your own language server for MODES, run beside
fastedit-lsp through rassumfrassum: a command (a list of strings),
the symbol `guess' for the server `eglot-server-programs' now gives
MODES, or nil to run fastedit-lsp alone.  Also turns `fastedit-mode'
on in the buffers eglot then manages.  When eglot connects, a program
not found is said in one line, and fastedit-lsp runs alone without
OTHER-SERVER (or rass) rather than fail.  Returns the contact."
  (let* ((mode (if (consp modes) (car modes) modes))
         (original (and (eq other-server 'guess) (fastedit--mode-entry mode)))
         (contact
          (lambda (&optional interactive)
            (fastedit-eglot-contact
             (fastedit--checked-other
              (if (eq other-server 'guess)
                  (fastedit--guess-other original mode interactive)
                other-server))))))
    (push contact fastedit--contacts)
    (setf (alist-get modes eglot-server-programs nil nil #'equal) contact)
    (dolist (m (if (consp modes) modes (list modes)))
      (let ((m (if (consp m) (car m) m)))
        (when (and (symbolp m) (not (keywordp m)))
          (add-hook (intern (format "%s-hook" m)) #'fastedit-keys-mode))))
    (add-hook 'eglot-managed-mode-hook #'fastedit-maybe-enable)
    contact))

;;;; Talking to the server

(defun fastedit--server ()
  "Return this buffer's eglot server if it talks to fastedit-lsp."
  (let ((server (eglot-current-server)))
    (unless (and server (fastedit--server-p server))
      (if (fastedit--missing fastedit-server-command)
          (user-error "fastedit: %s not found: %s" (car fastedit-server-command)
                      fastedit--install-advice)
        (user-error "No fastedit-lsp server here (see `fastedit-eglot-setup')")))
    server))

(defun fastedit--flush ()
  "Send the server what was typed in its buffers and not reported yet.
Otherwise eglot 1.9 reports them after 0.5 s of idle time only, and an
edit made in another buffer just before a job (an undo in the test
module's window) reached the server after the job had started, as an
edit of the text being written: the job stopped."
  (when (bound-and-true-p eglot--managed-mode)
    (dolist (buffer (eglot--managed-buffers (eglot-current-server)))
      (when (buffer-live-p buffer)
        (with-current-buffer buffer
          (eglot--signal-textDocument/didChange))))))

(defun fastedit--uri ()
  "This buffer's document URI, as eglot reports it."
  (plist-get (eglot--TextDocumentIdentifier) :uri))

(defun fastedit--version ()
  "This buffer's document version, as eglot reports it."
  (plist-get (eglot--VersionedTextDocumentIdentifier) :version))

(defun fastedit--execute (command &optional argument then)
  "Send fastedit's COMMAND with ARGUMENT (a plist); call THEN with its reply.
THEN runs in this buffer (if it is still live).  Never waits for the
reply: Emacs 28's jsonrpc, waiting for a reply, leaves the messages read
with it (a job's status and first edit) unread until the server writes
again, so a job looked hung.  Pending changes are sent first.  An error
is shown as a sentence."
  (let ((server (fastedit--server))
        (buffer (current-buffer)))
    (fastedit--flush)
    (fastedit--put :pending (1+ (or (fastedit--get :pending server) 0)) server)
    (let ((settled nil))
      (cl-flet ((settle ()
                  (unless settled
                    (setq settled t)
                    (fastedit--put :pending
                                   (max 0 (1- (or (fastedit--get :pending server) 1)))
                                   server))))
        (jsonrpc-async-request
         server :workspace/executeCommand
         (list :command command :arguments (if argument (vector argument) []))
         :success-fn
         (lambda (reply)
           (settle)
           (when (and then (buffer-live-p buffer))
             (with-current-buffer buffer
               (funcall then reply))))
         :error-fn
         (lambda (error)
           (settle)
           ;; Said here as a sentence; eglot's mode line need not show it too.
           (setf (jsonrpc-last-error server) nil)
           (when (buffer-live-p buffer)
             (with-current-buffer buffer
               (setq fastedit--follow nil)))
           (fastedit--say (fastedit--error-sentence command error)))
         :timeout-fn
         (lambda ()
           (settle)
           (message "fastedit: the server did not answer %s in time"
                    (fastedit--command-title command))))))
    nil))

(defconst fastedit--titles
  '(("fastedit.completeRest" . "complete the rest")
    ("fastedit.generateRegex" . "generate regex")
    ("fastedit.generateTests" . "write tests")
    ("fastedit.fixSyntax" . "fix syntax")
    ("fastedit.editSelection" . "edit selection")
    ("fastedit.run" . "the action")
    ("fastedit.revert" . "revert")
    ("fastedit.revertHunk" . "revert the change")
    ("fastedit.cancel" . "cancel"))
  "What each fastedit command is called in messages.")

(defun fastedit--command-title (command)
  "COMMAND's name in a message."
  (or (cdr (assoc command fastedit--titles))
      (string-remove-prefix "fastedit." command)))

(defun fastedit--error-sentence (command error)
  "The message for ERROR, a JSON-RPC error object, in reply to COMMAND.
The server's own text, without its command-name prefix or code."
  (let* ((text (or (plist-get error :message) "unknown error"))
         (text (replace-regexp-in-string "\\`fastedit\\.[A-Za-z]+: " "" text)))
    (format "fastedit: %s: %s" (fastedit--command-title command) text)))

(defun fastedit--position (&optional pos)
  "The LSP position of POS (default point)."
  (eglot--pos-to-lsp-position pos))

(defun fastedit--range (beg end)
  "The LSP range from BEG to END."
  (list :start (fastedit--position beg) :end (fastedit--position end)))

(defun fastedit--target-range ()
  "The range of the active region, else the empty range at point."
  (if (use-region-p)
      (fastedit--range (region-beginning) (region-end))
    (fastedit--range (point) (point))))

(defun fastedit--start (command argument &optional follow)
  "Start fastedit's job COMMAND on this buffer with ARGUMENT.
FOLLOW: leave point after the text the job writes (unless moved).
Returns at once; the job's id comes with the reply (`fastedit--started')."
  (setq fastedit--follow (and follow (point-marker)))
  (fastedit--execute command (append (list :uri (fastedit--uri)) argument)
                     (lambda (reply) (fastedit--started (plist-get reply :jobId))))
  (deactivate-mark)
  (force-mode-line-update)
  nil)

(defun fastedit--started (id)
  "Note job ID, which the server started for this buffer."
  (when (and id (not (member id (fastedit--get :finished))))
    (cl-pushnew id fastedit--running :test #'equal)
    (fastedit--put :running (cons id (fastedit--get :running))))
  (force-mode-line-update)
  id)

;;;; Commands

;;;###autoload
(defun fastedit-complete-rest ()
  "Stream the rest of the code at point."
  (interactive)
  (fastedit--start "fastedit.completeRest"
                   (list :position (fastedit--position)) t))

;;;###autoload
(defun fastedit-generate-regex ()
  "Write a regex from the match:/reject: comment at point or selected strings."
  (interactive)
  (fastedit--start "fastedit.generateRegex"
                   (list :range (fastedit--target-range)) t))

;;;###autoload
(defun fastedit-generate-tests ()
  "Write a test module for the function or method at point."
  (interactive)
  (fastedit--start "fastedit.generateTests"
                   (list :position (fastedit--position))))

;;;###autoload
(defun fastedit-fix-syntax ()
  "Fix the syntax error in the region, else at or near point."
  (interactive)
  (fastedit--start "fastedit.fixSyntax"
                   (list :range (fastedit--target-range))))

;;;###autoload
(defun fastedit-edit-selection (beg end instruction)
  "Rewrite the text from BEG to END following INSTRUCTION.
Interactively, the region, and an instruction read with `read-string'."
  (interactive
   (if (use-region-p)
       (list (region-beginning) (region-end)
             (read-string "Edit the selection: "))
     (user-error "Select the text to edit first")))
  (when (string-empty-p (string-trim instruction))
    (user-error "No instruction"))
  (fastedit--start "fastedit.editSelection"
                   (list :range (fastedit--range beg end)
                         :instruction instruction)))

(defconst fastedit-preset-actions '("docstring" "typeHints")
  "The user actions the server has built in.")

(defun fastedit--action-ids ()
  "The ids of the actions in `fastedit-settings' (:actions), then the presets."
  (let ((ids (delq nil (mapcar (lambda (action) (plist-get action :id))
                               (append (plist-get fastedit-settings :actions) nil)))))
    (append ids (seq-remove (lambda (id) (member id ids)) fastedit-preset-actions))))

;;;###autoload
(defun fastedit-run (action)
  "Run the user-defined ACTION (an id) on the region, else at point.
Interactively, ACTION is read with `completing-read' from the actions in
`fastedit-settings' and the presets.  Bind a key to one action with
  (keymap-set fastedit-command-map \"d\"
              (lambda () (interactive) (fastedit-run \"docstring\")))"
  (interactive
   (list (completing-read "fastedit action: " (fastedit--action-ids) nil nil)))
  (when (string-empty-p (string-trim action))
    (user-error "No action"))
  (fastedit--start "fastedit.run"
                   (append (list :action action)
                           (if (use-region-p)
                               (list :range (fastedit--range (region-beginning) (region-end)))
                             (list :position (fastedit--position))))))

;;;###autoload
(defun fastedit-toggle-fast-mode ()
  "Switch between fast mode and the last other mode (standard or auto)."
  (interactive)
  (fastedit--execute "fastedit.toggleFastMode" nil
                     (lambda (reply) (fastedit--report-mode (plist-get reply :mode)))))

;;;###autoload
(defun fastedit-set-mode (mode)
  "Set fastedit's MODE: fast, standard or auto."
  (interactive
   (list (completing-read "fastedit mode: " '("fast" "standard" "auto")
                          nil t)))
  (fastedit--execute "fastedit.setMode" (list :mode mode)
                     (lambda (reply) (fastedit--report-mode (plist-get reply :mode)))))

(defun fastedit--get (key &optional server)
  "The value of KEY in what SERVER (default this buffer's) said."
  (plist-get (gethash (or server (eglot-current-server))
                      fastedit--server-status)
             key))

(defun fastedit--put (key value &optional server)
  "Remember VALUE under KEY for SERVER (default this buffer's)."
  (let ((server (or server (eglot-current-server))))
    (puthash server
             (plist-put (gethash server fastedit--server-status) key value)
             fastedit--server-status)))

(defun fastedit--report-mode (mode)
  "Remember and show the server's MODE."
  (fastedit--put :mode mode)
  (force-mode-line-update t)
  (message "fastedit: %s mode" mode)
  mode)

;;;###autoload
(defun fastedit-cancel (&optional all)
  "Stop this buffer's running fastedit jobs; with prefix ALL, every job."
  (interactive "P")
  (fastedit--execute
   "fastedit.cancel" (unless all (list :uri (fastedit--uri)))
   (lambda (reply)
     (let ((ids (append (plist-get reply :cancelled) nil)))
       (fastedit--settle)
       (message "fastedit: %s" (if ids
                                   (concat "cancelled " (string-join ids ", "))
                                 "no job was running"))))))

;;;###autoload
(defun fastedit-revert ()
  "Restore the text this buffer's last fastedit job replaced."
  (interactive)
  (fastedit--execute "fastedit.revert" (list :uri (fastedit--uri))
                     (lambda (reply)
                       (fastedit--settle)
                       (if (eq (plist-get reply :reverted) t)
                           (message "fastedit: reverted")
                         (message "fastedit: not reverted: %s"
                                  (plist-get reply :reason))))))

(defun fastedit--hunk-at (hunks line)
  "The index of the applied hunk among HUNKS that covers LINE (0-based)."
  (seq-position hunks line
                (lambda (hunk line)
                  (let* ((range (plist-get hunk :range))
                         (start (plist-get (plist-get range :start) :line))
                         (end (plist-get (plist-get range :end) :line)))
                    (and (equal (plist-get hunk :state) "applied")
                         (<= start line)
                         (or (< line end) (= start end line)))))))

;;;###autoload
(defun fastedit-revert-hunk ()
  "Restore the original text of the change at point.
The change is a hunk of this buffer's last rewrite (an edited selection,
a syntax fix, a user action); the other changes stay."
  (interactive)
  (let ((uri (fastedit--uri))
        (line (1- (line-number-at-pos))))
    (fastedit--execute
     "fastedit.status" nil
     (lambda (status)
       (let* ((jobs (reverse (append (plist-get status :jobs) nil)))
              (job (seq-find (lambda (j) (and (equal (plist-get j :uri) uri)
                                              (plist-get j :hunks)))
                             jobs))
              (index (and job (fastedit--hunk-at (append (plist-get job :hunks) nil)
                                                 line))))
         (if (null index)
             (message "fastedit: no fastedit change at point")
           (fastedit--execute
            "fastedit.revertHunk" (list :jobId (plist-get job :jobId) :hunk index)
            (lambda (reply)
              (fastedit--settle)
              (if (eq (plist-get reply :reverted) t)
                  (message "fastedit: change reverted")
                (message "fastedit: not reverted: %s" (plist-get reply :reason)))))))))))

;;;###autoload
(defun fastedit-status ()
  "Show fastedit's mode, profiles and this buffer's last job.
The *fastedit* buffer shows every job's whole reason and the last
messages whole."
  (interactive)
  (fastedit--execute "fastedit.status" nil #'fastedit--show-status))

(defun fastedit--status-lines (status)
  "The *fastedit* buffer's lines for STATUS, the reply to fastedit.status.
The mode and models, every job newest first with its whole reason and
failed attempts, then fastedit's last messages whole."
  (let ((profiles (plist-get status :profiles))
        (lines nil))
    (push (format "fastedit-lsp %s: %s mode" (plist-get status :version)
                  (plist-get status :mode))
          lines)
    (dolist (name '(:fast :standard))
      (let ((p (plist-get profiles name)))
        (when p
          (push (format "  %s: %s %s%s" (substring (symbol-name name) 1)
                        (plist-get p :provider) (plist-get p :model)
                        (if (stringp (plist-get p :note))
                            (format " (%s)" (plist-get p :note))
                          ""))
                lines))))
    (push "" lines)
    (push "Jobs, newest first:" lines)
    (let ((jobs (reverse (append (plist-get status :jobs) nil))))
      (unless jobs (push "  (none yet)" lines))
      (dolist (job jobs)
        (push (format "  %s %s" (plist-get job :jobId) (fastedit--describe job)) lines)
        (when (and (stringp (plist-get job :reason))
                   (not (string-empty-p (plist-get job :reason))))
          (push (format "      why: %s" (plist-get job :reason)) lines))
        (dolist (attempt (append (plist-get job :attempts) nil))
          (when (stringp (plist-get attempt :error))
            (push (format "      %s (%s) failed: %s" (plist-get attempt :route)
                          (plist-get attempt :model) (plist-get attempt :error))
                  lines)))))
    (when fastedit--said
      (push "" lines)
      (push "fastedit's last messages, newest last:" lines)
      (dolist (text (reverse fastedit--said))
        (push (concat "  " text) lines)))
    (nreverse lines)))

(defun fastedit--show-status (status)
  "Show STATUS, the server's reply to fastedit.status.
One line in the echo area; all of it, each job's whole reason too, in
the *fastedit* buffer."
  (let ((lines (fastedit--status-lines status)))
    (with-current-buffer (get-buffer-create "*fastedit*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (string-join lines "\n") "\n"))
      (goto-char (point-min))
      (special-mode))
    (display-buffer "*fastedit*"))
  (let* ((profiles (plist-get status :profiles))
         (profile (lambda (name)
                    (let ((p (plist-get profiles name)))
                      (format "%s %s" (plist-get p :provider)
                              (plist-get p :model))))))
    (message "fastedit %s: %s mode; fast: %s; standard: %s%s"
             (plist-get status :version) (plist-get status :mode)
             (funcall profile :fast) (funcall profile :standard)
             (if fastedit--job
                 (concat "; last job: " (fastedit--describe fastedit--job))
               ""))
    status))

(defconst fastedit--kinds
  '(("completeRest" . "Complete the rest") ("generateRegex" . "Generate regex")
    ("generateTests" . "Write tests") ("fixSyntax" . "Fix syntax")
    ("editSelection" . "Edit selection") ("run" . "Action"))
  "What each job kind is called in messages.")

(defun fastedit--summary (job)
  "The one-line message for JOB's end: what, how it ended, its figures, why.
For example \"fastedit: Complete the rest done · offline · 3 ms\", or
\"fastedit: Complete the rest done (no suggestion) · REASON\"."
  (let* ((metrics (plist-get job :metrics))
         (state (plist-get job :state))
         (kind (plist-get job :kind))
         (nothing (and (equal state "done") (eql (or (plist-get metrics :edits) 0) 0)))
         (reason (plist-get job :reason))
         (error (plist-get job :error))
         (model (plist-get job :model))
         (parts (list (format "fastedit: %s %s%s"
                              (or (cdr (assoc kind fastedit--kinds)) kind "job")
                              state (if nothing " (no suggestion)" "")))))
    (when (and (stringp model) (not (equal (plist-get job :route) "local")))
      (push model parts))
    (when-let ((figures (fastedit--figures job)))
      (push figures parts))
    (when (fastedit--unverified-p job)
      (push (concat "unverified: "
                    (or (plist-get (plist-get job :verification) :details) ""))
            parts))
    (cond ((stringp error) (push error parts))
          ((and nothing (stringp reason))
           (push (string-remove-prefix "no suggestion: "
                                       (car (last (split-string reason "; "))))
                 parts))
          ;; Why the figures are another route's, or why it took long.
          ((fastedit--the-way job) (push (fastedit--the-way job) parts)))
    (string-join (nreverse parts) " · ")))

(defun fastedit--the-way (job)
  "What happened on JOB's way after routing chose its route, or nil.
A failover, a draft asked again, an escalation, a note: the steps of
its reason after the first (routing's own)."
  (let ((reason (plist-get job :reason)))
    (when (stringp reason)
      (let ((steps (split-string reason "; ")))
        (when (cdr steps)
          (string-join (cdr steps) "; "))))))

(defun fastedit--describe (job)
  "A one-line description of JOB's record."
  (let ((metrics (plist-get job :metrics))
        (error (plist-get job :error))
        (figures (fastedit--figures job)))
    (format "%s %s via %s (%s), %s edits%s%s%s"
            (plist-get job :kind) (plist-get job :state)
            (plist-get job :route) (plist-get job :model)
            (plist-get metrics :edits)
            (if figures (concat ", " figures) "")
            (if (stringp error) (concat ": " error) "")
            (if (fastedit--unverified-p job)
                (concat ", unverified: "
                        (or (plist-get (plist-get job :verification) :details) ""))
              ""))))

(defun fastedit--thousands (number)
  "NUMBER rounded, with thousands separators: 1234.5 -> \"1,235\"."
  (let ((digits (number-to-string (round number))))
    (while (string-match "\\([0-9]\\)\\([0-9]\\{3\\}\\)\\($\\|,\\)" digits)
      (setq digits (replace-match "\\1,\\2\\3" t nil digits)))
    digits))

(defun fastedit--figures (job)
  "JOB's figures as the server's record has them, or nil if none yet.
\"300 tok/s · first token 323 ms\" for a model (its decode speed, and
the wait for its first token apart); \"offline · 12 ms\" for the
offline engine, which has no speed."
  (let ((metrics (plist-get job :metrics))
        (running (equal (plist-get job :state) "running")))
    (if (equal (plist-get job :route) "local")
        ;; The time to the text in the buffer, not the job's wait for eglot's
        ;; report of it (sent after 0.5 s of idle time).
        (let ((elapsed (if (numberp (plist-get metrics :landedMs))
                           (plist-get metrics :landedMs)
                         (plist-get metrics :elapsedMs))))
          (cond (running "offline · …")
                ((numberp elapsed)
                 (format "offline · %s ms" (fastedit--thousands elapsed)))))
      (let ((rate (plist-get metrics :tokensPerSecond))
            (ttft (plist-get metrics :ttftMs))
            (tokens (plist-get metrics :tokens))
            (parts nil))
        (cond ((numberp rate)
               (push (format "%s tok/s" (fastedit--thousands rate)) parts))
              ((and running (numberp tokens) (> tokens 0))
               (push (format "%d tokens" tokens) parts)))
        (when (numberp ttft)
          (push (format "first token %s ms" (fastedit--thousands ttft)) parts))
        (when parts
          (string-join (nreverse parts) " · "))))))

;;;; Status notifications and the mode line

(defconst fastedit--eglot-shows-documents
  (and (cl-find-method #'eglot-handle-request '() '(t (eql window/showDocument)))
       t)
  "Whether eglot answers window/showDocument itself (eglot 1.9 does not).")

(cl-defmethod eglot-client-capabilities :around (_server)
  "Opt in to `fastedit/status' and, on eglot 1.9, declare window/showDocument.
fastedit-lsp sends `fastedit/status' only to a client declaring the
capability experimental.fastedit.statusNotification; other servers
ignore it.  Written tests stream into the new test module the server
shows with window/showDocument (see `fastedit--show-document')."
  ;; eglot's values may be shared constants (its empty JSON object):
  ;; build new ones, never change them.
  (let* ((capabilities (copy-sequence (cl-call-next-method)))
         (experimental (plist-get capabilities :experimental))
         (opt-in (list :statusNotification t))
         (window (plist-get capabilities :window)))
    (setq capabilities
          (plist-put capabilities :experimental
                     (if (hash-table-p experimental)
                         (let ((copy (copy-hash-table experimental)))
                           (puthash "fastedit" opt-in copy)
                           copy)
                       (append (list :fastedit opt-in) experimental))))
    (unless (or fastedit--eglot-shows-documents (plist-get window :showDocument))
      (setq capabilities
            (plist-put capabilities :window
                       (append (list :showDocument (list :support t)) window))))
    capabilities))

(defun fastedit--show-document (uri external take-focus selection)
  "Show URI as window/showDocument asks; the reply.
EXTERNAL: in a browser.  TAKE-FOCUS: select its window.  SELECTION: a
range to go to."
  (if (eq external t)
      (progn (browse-url uri) (list :success t))
    (let* ((file (eglot--uri-to-path uri))
           ;; A missing file opens as a new buffer (the test module the server
           ;; writes exists on disk only once it has content: saved by the user).
           (buffer (and (file-directory-p (file-name-directory file))
                        (find-file-noselect file))))
      (if (null buffer)
          (list :success :json-false)
        (if (eq take-focus t) (pop-to-buffer buffer) (display-buffer buffer))
        (when selection
          (with-current-buffer buffer
            (goto-char (eglot--lsp-position-to-point (plist-get selection :start)))))
        (list :success t)))))

(unless fastedit--eglot-shows-documents
  (cl-defmethod eglot-handle-request
    (_server (_method (eql window/showDocument))
             &key uri external takeFocus selection &allow-other-keys)
    "Open URI for the server (eglot 1.9 does not): the test module it writes."
    (fastedit--show-document uri external takeFocus selection)))

(defun fastedit--buffers (server &optional uri)
  "The `fastedit-mode' buffers SERVER manages (whose document is URI)."
  (cl-loop for buffer in (buffer-list)
           when (with-current-buffer buffer
                  (and fastedit-mode
                       (eq (eglot-current-server) server)
                       (or (null uri) (equal (fastedit--uri) uri))))
           collect buffer))

(cl-defmethod eglot-handle-notification
  (server (_method (eql fastedit/status)) &key mode job &allow-other-keys)
  "Handle `fastedit/status' from SERVER: its MODE, and a JOB's record."
  (fastedit--put :mode mode server)
  (when job
    (let* ((id (plist-get job :jobId))
           (uri (plist-get job :uri))
           (running (equal (plist-get job :state) "running"))
           (ids (delete id (fastedit--get :running server)))
           (first-end (and (not running)
                           (not (member id (fastedit--get :finished server))))))
      (fastedit--put :running (if running (cons id ids) ids) server)
      ;; Every job's end says something (a failure the server says itself).
      (when (and first-end (not (equal (plist-get job :state) "failed")))
        (fastedit--say (fastedit--summary job)))
      (unless running
        (fastedit--put :finished
                       (seq-take (cons id (fastedit--get :finished server)) 50)
                       server))
      ;; A job can move to another document (tests go to a test module).
      (dolist (buffer (fastedit--buffers server))
        (with-current-buffer buffer
          (let ((here (equal (fastedit--uri) uri)))
            (when here
              (setq fastedit--job job))
            (if (and here running)
                (cl-pushnew id fastedit--running :test #'equal)
              (setq fastedit--running (delete id fastedit--running))
              (fastedit--settle)))))))
  (force-mode-line-update t))

(defun fastedit--unverified-p (job)
  "Whether JOB's draft landed although it failed verification.
The server then marks its lines with a `fastedit' diagnostic (Flymake shows it)."
  (and (equal (plist-get job :state) "done")
       (eq (plist-get (plist-get job :verification) :ok) :json-false)
       (> (or (plist-get (plist-get job :metrics) :edits) 0) 0)))

(defun fastedit--lighter ()
  "The mode-line lighter: FE[MODE], the job's route if other, its figures.
The figures are a model's decode speed and time to first token, or the
offline engine's time (see `fastedit--figures').  Just FE until the
server has said its mode."
  (let* ((server (eglot-current-server))
         (mode (fastedit--get :mode server))
         (route (plist-get fastedit--job :route))
         (figures (and fastedit--job (fastedit--figures fastedit--job)))
         (text (concat mode
                       (if (and (stringp route) (not (string-empty-p route))
                                (not (equal route mode)))
                           (concat ">" route)
                         "")
                       (if figures (concat " " figures) "")
                       (if (fastedit--unverified-p fastedit--job) " unverified" "")
                       (if (equal (plist-get fastedit--job :state) "failed") " failed" ""))))
    (if (not (stringp mode))
        " FE"
      (concat " FE["
              (if fastedit--running
                  (propertize text 'face 'fastedit-streaming)
                text)
              "]"))))

;;;; fastedit's edits: no prompt per chunk, one undo step per job

(defun fastedit--document-edits (edit)
  "The text edits of workspace EDIT: a list of (URI VERSION EDITS).
Returns :other when EDIT holds a resource operation."
  (let ((changes (plist-get edit :changes))
        (document-changes (plist-get edit :documentChanges))
        (out nil))
    (if document-changes
        (seq-doseq (change document-changes)
          (if (plist-get change :kind)
              (setq out :other)
            (unless (eq out :other)
              (let ((doc (plist-get change :textDocument)))
                (push (list (plist-get doc :uri) (plist-get doc :version)
                            (plist-get change :edits))
                      out)))))
      (cl-loop for (key edits) on changes by #'cddr
               do (push (list (substring (symbol-name key) 1) nil edits) out)))
    (if (eq out :other) :other (nreverse out))))

(defun fastedit--own-edit (server edit)
  "EDIT's targets as (BUFFER VERSION EDITS) if it is fastedit's, else nil.
fastedit's edits are those SERVER sends to `fastedit-mode' buffers
while a fastedit job of SERVER runs or a fastedit command waits for
its reply.  Any other edit is left to eglot and its confirmation."
  (let ((docs (fastedit--document-edits edit)))
    (when (and (consp docs)
               (or (fastedit--get :running server)
                   (> (or (fastedit--get :pending server) 0) 0)))
      (cl-loop for (uri version edits) in docs
               for buffer = (car (fastedit--buffers server uri))
               unless buffer return nil
               collect (list buffer version edits)))))

(cl-defmethod eglot-handle-request :around
  (server (_method (eql workspace/applyEdit)) &key edit &allow-other-keys)
  "Apply SERVER's EDIT without a prompt if fastedit streams it.
Leave every other edit to eglot."
  (if-let ((targets (fastedit--own-edit server edit)))
      (fastedit--apply targets)
    (cl-call-next-method)))

(defun fastedit--apply (targets)
  "Apply TARGETS, a list of (BUFFER VERSION EDITS); the applyEdit reply."
  (condition-case err
      (progn
        (pcase-dolist (`(,buffer ,version ,_) targets)
          (let ((have (with-current-buffer buffer (fastedit--version))))
            (unless (or (null version) (equal version have))
              (error "%s changed: it is at version %s, the edit is for %s"
                     (buffer-name buffer) have version))))
        (pcase-dolist (`(,buffer ,_ ,edits) targets)
          (with-current-buffer buffer
            (fastedit--follow-to (fastedit--apply-text-edits edits))
            ;; Reported at once, as VS Code does: the server then knows
            ;; the buffer before the user's next keystroke.
            (fastedit--flush)))
        (list :applied t))
    (error (list :applied :json-false
                 :failureReason (error-message-string err)))))

(defun fastedit--follow-to (end)
  "Move point to END if a job follows it and the user has not moved it.
END is where the last edit's text ends (or nil); see `fastedit--follow'.
An edit that ends before point (an import added above) leaves it."
  (when (and fastedit--follow end)
    (cond ((/= (point) fastedit--follow)
           (setq fastedit--follow nil))
          ((>= end (point))
           (dolist (window (get-buffer-window-list (current-buffer) nil t))
             (when (= (window-point window) (point))
               (set-window-point window end)))
           (goto-char end)
           (set-marker fastedit--follow end)))))

(defun fastedit--apply-text-edits (edits)
  "Apply the LSP text EDITS, all relative to the same text, here.
Returns where the last one's text ends."
  (let ((spans (mapcar
                (lambda (e)
                  (let ((range (plist-get e :range)))
                    (list (eglot--lsp-position-to-point
                           (plist-get range :start) t)
                          (eglot--lsp-position-to-point
                           (plist-get range :end) t)
                          (plist-get e :newText))))
                edits))
        (fastedit--applying t)
        (last-end nil))
    (fastedit--undo-open)
    (save-excursion
      (save-restriction
        (widen)
        (pcase-dolist (`(,beg ,end ,text) spans)
          (let* ((start (marker-position beg))
                 (stop (marker-position end))
                 (length (- stop start)))
            ;; One change per edit, as eglot reports its own edits: the
            ;; server matches the echo of a replacement as a whole.
            (run-hook-with-args 'before-change-functions start stop)
            (let ((inhibit-modification-hooks t))
              (goto-char start)
              (delete-region start stop)
              (insert text))
            (run-hook-with-args 'after-change-functions
                                start (+ start (length text)) length)
            ;; After the text, on its last line (not after its line break).
            (setq last-end (+ start (length (string-remove-suffix "\n" text)))))
          (set-marker beg nil)
          (set-marker end nil))))
    last-end))

(defun fastedit--undo-open ()
  "Start collecting fastedit's edits into one undo step, unless started."
  (unless fastedit--undo-group
    ;; The boundary keeps what came before out of the job's step.
    (undo-boundary)
    (setq fastedit--undo-group (prepare-change-group))))

(defun fastedit--undo-close ()
  "Join fastedit's edits since `fastedit--undo-open' into one undo step."
  (when fastedit--undo-group
    (undo-amalgamate-change-group fastedit--undo-group)
    (setq fastedit--undo-group nil)
    (undo-boundary)))

(defun fastedit--before-change (&rest _)
  "End fastedit's undo step before any other change.
So the user's typing never joins a job's step."
  (unless fastedit--applying
    (fastedit--undo-close)))

(defun fastedit--settle ()
  "End fastedit's undo step once no job of this buffer is running."
  (when (and fastedit-mode (null fastedit--running))
    (when fastedit--follow
      (set-marker fastedit--follow nil)
      (setq fastedit--follow nil))
    (fastedit--undo-close)))

;;;; Next-edit suggestions

(defcustom fastedit-next-edit t
  "Non-nil: after a change, show the edit fastedit predicts you make next.
Accept it with `fastedit-accept-next-edit' (\\[fastedit-accept-next-edit]),
dismiss it with `fastedit-dismiss-next-edit'."
  :type 'boolean)

(defcustom fastedit-next-edit-delay 0.3
  "Seconds after the last change before asking for the next edit."
  :type 'number)

;; A background as well as the strike-through: a terminal may not draw strike-through, and the
;; replaced text then read as part of the new (\"namelabel\").
(defface fastedit-next-edit-delete
  '((((class color) (min-colors 88) (background dark))
     :strike-through t :background "#603030")
    (((class color) (min-colors 88) (background light))
     :strike-through t :background "#ffd0d0")
    (((class color)) :strike-through t :background "red" :foreground "white")
    (t :strike-through t :inverse-video t))
  "Face of the text a next-edit suggestion replaces.")

(defface fastedit-next-edit-add
  '((((class color) (min-colors 88) (background dark)) :background "#2e5030")
    (((class color) (min-colors 88) (background light)) :background "#d0ffd0")
    (((class color)) :background "green" :foreground "black")
    (t :inherit success))
  "Face of the text a next-edit suggestion inserts.")

(defface fastedit-next-edit-hint '((t :inherit shadow))
  "Face of the key hint shown after a next-edit suggestion.")

(defun fastedit--next-edit-hint ()
  "The hint shown after a suggestion: the key that accepts it, or nil."
  (let ((key (where-is-internal #'fastedit-accept-next-edit nil t)))
    (and key (format "  [%s accepts]" (key-description key)))))

(defvar-local fastedit--next-edit nil
  "The suggestion shown here: (OVERLAY EDIT ID TICK), or nil.
TICK is the buffer's modification tick it was made for.")

(defvar-local fastedit--next-edit-timer nil
  "The timer that asks for the next edit after a change.")

(defun fastedit--next-edit-clear ()
  "Remove the suggestion shown here."
  (when fastedit--next-edit
    (when-let ((hint (overlay-get (car fastedit--next-edit) 'fastedit-hint)))
      (delete-overlay hint))
    (delete-overlay (car fastedit--next-edit))
    (setq fastedit--next-edit nil)))

(defun fastedit--next-edit-changed (&rest _)
  "After a change: drop the suggestion shown and ask again soon."
  (fastedit--next-edit-clear)
  (when (and fastedit-next-edit fastedit-mode (not fastedit--applying))
    (when fastedit--next-edit-timer
      (cancel-timer fastedit--next-edit-timer))
    (setq fastedit--next-edit-timer
          (run-at-time fastedit-next-edit-delay nil
                       #'fastedit--next-edit-request (current-buffer)))))

;; Asked without waiting (a timer that waited would stop the typing it
;; follows, and one that fired while eglot shut the server down made the
;; shutdown wait for it); a reply for an older buffer is dropped.
(defun fastedit--next-edit-request (buffer)
  "Ask fastedit for the next edit at point in BUFFER; show it when it comes."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq fastedit--next-edit-timer nil)
      (let ((server (and fastedit-mode fastedit-next-edit
                         (eq buffer (window-buffer (selected-window)))
                         (eglot-current-server))))
        (when (and server (not (eglot--shutdown-requested server))
                   (fastedit--server-p server))
          (let ((tick (buffer-chars-modified-tick))
                (point (point)))
            (fastedit--flush)
            (jsonrpc-async-request
             server :workspace/executeCommand
             (list :command "fastedit.nextEdit"
                   :arguments (vector (list :uri (fastedit--uri)
                                            :position (fastedit--position))))
             :success-fn
             (lambda (reply)
               (when (buffer-live-p buffer)
                 (with-current-buffer buffer
                   (let* ((edits (plist-get reply :edits))
                          (edit (and (> (length edits) 0) (aref edits 0))))
                     (when (and edit fastedit-mode
                                (= tick (buffer-chars-modified-tick))
                                (= point (point)))
                       (fastedit--next-edit-show edit))))))
             :error-fn #'ignore
             :timeout-fn #'ignore)))))))

(defun fastedit--next-edit-show (edit)
  "Show EDIT where it would apply: the replaced text struck, the new after it."
  (fastedit--next-edit-clear)
  (let* ((region (eglot--range-region (plist-get edit :range)))
         (overlay (make-overlay (car region) (cdr region) nil t nil))
         (id (car (append (plist-get (plist-get edit :command) :arguments) nil))))
    (overlay-put overlay 'fastedit-next-edit t)
    (unless (= (car region) (cdr region))
      (overlay-put overlay 'face 'fastedit-next-edit-delete))
    (overlay-put overlay 'after-string
                 (propertize (plist-get edit :text) 'face 'fastedit-next-edit-add))
    ;; The key that accepts it, at the end of its line.
    (when-let ((hint (fastedit--next-edit-hint)))
      (let* ((eol (save-excursion (goto-char (cdr region)) (line-end-position)))
             (end (make-overlay eol eol nil t nil)))
        (overlay-put end 'after-string (propertize hint 'face 'fastedit-next-edit-hint))
        (overlay-put overlay 'fastedit-hint end)))
    (setq fastedit--next-edit
          (list overlay edit id (buffer-chars-modified-tick)))))

(defun fastedit-accept-next-edit ()
  "Apply the next-edit suggestion shown here, as one undo step."
  (interactive)
  (unless fastedit--next-edit
    (user-error "No next-edit suggestion here"))
  (pcase-let ((`(,_ ,edit ,id ,tick) fastedit--next-edit))
    (fastedit--next-edit-clear)
    (unless (= tick (buffer-chars-modified-tick))
      (user-error "The suggestion was made for an earlier version of the buffer"))
    (let ((region (eglot--range-region (plist-get edit :range))))
      (undo-boundary)
      (goto-char (car region))
      (delete-region (car region) (cdr region))
      (insert (plist-get edit :text))
      (undo-boundary))
    (when id
      (fastedit--execute "fastedit.acceptNextEdit" id))))

(defun fastedit-dismiss-next-edit ()
  "Dismiss the next-edit suggestion shown here."
  (interactive)
  (let ((id (nth 2 fastedit--next-edit)))
    (fastedit--next-edit-clear)
    (when id
      (fastedit--execute "fastedit.dismissNextEdit" id))))

(defun fastedit-toggle-next-edit ()
  "Turn next-edit suggestions off or on (on the server too)."
  (interactive)
  (fastedit--execute
   "fastedit.toggleNextEdit" nil
   (lambda (reply)
     (setq fastedit-next-edit (not (eq (plist-get reply :enabled) :json-false)))
     (unless fastedit-next-edit
       (fastedit--next-edit-clear))
     (message "fastedit: next-edit suggestions %s" (if fastedit-next-edit "on" "off")))))

(defun fastedit--next-edit-setup ()
  "Ask for next edits after each edit here while `fastedit-mode' is on."
  (if fastedit-mode
      (add-hook 'after-change-functions #'fastedit--next-edit-changed nil t)
    (remove-hook 'after-change-functions #'fastedit--next-edit-changed t)
    (fastedit--next-edit-clear)))
(add-hook 'fastedit-mode-hook #'fastedit--next-edit-setup)

(provide 'fastedit)
;;; fastedit.el ends here
