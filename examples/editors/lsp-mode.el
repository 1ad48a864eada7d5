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
  (let ((handlers (make-hash-table :test #'equal)))
    ;; The commands of fastedit's code actions run through `fastedit-lsp-command'.
    (dolist (command '("fastedit.completeRest" "fastedit.editSelection" "fastedit.fixSyntax"
                       "fastedit.generateRegex" "fastedit.generateTests" "fastedit.run"
                       "fastedit.retry" "fastedit.revert" "fastedit.revertHunk"
                       "fastedit.keepAll"))
      (puthash command
               (lambda (action)
                 (fastedit-lsp-command (lsp:command-command action)
                                       (lsp:command-arguments? action)))
               handlers))
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
