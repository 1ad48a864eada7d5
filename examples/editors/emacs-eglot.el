;;; fastedit-lsp in Emacs >= 28 with eglot >= 1.9 (init.el).
;; The server first: `pip install .' in your clone (and `pip install rassumfrassum' to run it
;; beside another language server). Keys stay in the environment Emacs starts with.

;; The directory of fastedit.el: what `fastedit-lsp editors --emacs' prints, or your clone's
;; editors/emacs.
(require 'subr-x)
(let ((dir (string-trim (shell-command-to-string "fastedit-lsp editors --emacs 2>/dev/null"))))
  (add-to-list 'load-path (if (and (not (string-empty-p dir)) (file-directory-p dir))
                              dir
                            (expand-file-name "~/fastedit-lsp/editors/emacs"))))
(require 'fastedit)

;; The `fastedit' settings, sent as initializationOptions.
(setq fastedit-settings
      '(:mode "auto"
        :profiles (:fast (:provider "cerebras" :model "gpt-oss-120b")
                   :standard (:provider "openai" :model "gpt-4.1"))))

;; fastedit alone in Python buffers; or '("pylsp") to run it beside your own server.
(fastedit-eglot-setup '(python-mode python-ts-mode) nil)
(add-hook 'python-mode-hook #'eglot-ensure)
(add-hook 'python-ts-mode-hook #'eglot-ensure)
;; Keys under C-c /: c complete the rest, r regex, t tests, s fix syntax, e edit selection,
;; f fast mode, k cancel, u revert, ? status.
