;;; fastedit-lsp beside your own server in Emacs with lsp-mode 8 (init.el).
;; No bundled integration: the actions are code actions (M-x lsp-execute-code-action).
;; See docs/clients.md.
(with-eval-after-load 'lsp-mode
  (defun fastedit-lsp-command (command &optional arguments callback)
    "Send fastedit-lsp's COMMAND with ARGUMENTS (a vector) and return at once.
CALLBACK, when given, receives the answer.  lsp-mode 8's waiting requests
drop the messages read together with their answer, a running job's edits
among them: fastedit's commands never wait."
    (with-lsp-workspace (or (lsp-find-workspace 'fastedit (buffer-file-name))
                            (user-error "fastedit-lsp is not running for this buffer"))
      (lsp-request-async "workspace/executeCommand"
                         (list :command command :arguments (or arguments []))
                         (or callback #'ignore)
                         :mode 'detached
                         :error-handler
                         (lambda (err) (message "fastedit: %s" (lsp:json-error-message err))))))
  (defun fastedit-lsp--say-end (title record)
    "Say in the echo area how the job TITLE ended (RECORD: its record)."
    (let* ((verification (lsp-get record :verification))
           (why (or (lsp-get record :error)
                    (and verification (not (eq (lsp-get verification :ok) t))
                         (lsp-get verification :details)))))
      (message "fastedit: %s %s · %s · %s ms%s" title (lsp-get record :state)
               (lsp-get record :model) (round (or (lsp-get (lsp-get record :metrics) :elapsedMs) 0))
               (if why (format " · %s" why) ""))))
  (defun fastedit-lsp--started (title answer)
    "When ANSWER names a job, wait for its end without blocking and say it (TITLE)."
    (when-let ((job (and answer (lsp-get answer :jobId))))
      (fastedit-lsp-command "fastedit.wait" (vector (ht ("jobId" job) ("timeoutMs" 600000)))
                            (apply-partially #'fastedit-lsp--say-end title))))
  (defun fastedit-lsp--run (action)
    "Run the code ACTION's command; say how its job ended."
    (fastedit-lsp-command (lsp:command-command action) (lsp:command-arguments? action)
                          (apply-partially #'fastedit-lsp--started
                                           (lsp:command-title action))))
  (let ((handlers (make-hash-table :test #'equal)))
    ;; The commands of fastedit's code actions run through `fastedit-lsp--run'.
    (dolist (command '("fastedit.completeRest" "fastedit.editSelection" "fastedit.fixSyntax"
                       "fastedit.generateRegex" "fastedit.generateTests" "fastedit.run"
                       "fastedit.retry" "fastedit.revert" "fastedit.revertHunk"
                       "fastedit.keepAll"))
      (puthash command #'fastedit-lsp--run handlers))
    (lsp-register-client
     (make-lsp-client :new-connection (lsp-stdio-connection '("fastedit-lsp"))
                      :activation-fn (lsp-activate-on "python")
                      :add-on? t
                      :action-handlers handlers
                      :server-id 'fastedit)))
  (defun fastedit-lsp-toggle ()
    "Toggle fastedit's fast mode."
    (interactive)
    (fastedit-lsp-command "fastedit.toggleFastMode" nil
                          (lambda (answer)
                            (message "fastedit: %s mode" (lsp-get answer :mode))))))
