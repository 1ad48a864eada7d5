;;; fastedit-lsp beside your own server in Emacs with lsp-mode 8 (init.el).
;; No bundled integration: the actions are code actions (M-x lsp-execute-code-action).
;; See docs/clients.md.
(with-eval-after-load 'lsp-mode
  (lsp-register-client
   (make-lsp-client :new-connection (lsp-stdio-connection '("fastedit-lsp"))
                    :activation-fn (lsp-activate-on "python")
                    :add-on? t
                    :server-id 'fastedit))
  (defun fastedit-lsp-toggle ()
    "Toggle fastedit's fast mode."
    (interactive)
    (message "fastedit: %s mode"
             (gethash "mode" (lsp-workspace-command-execute "fastedit.toggleFastMode")))))
