vim9script
# fastedit-lsp as a second server in Vim 9 with yegappan/lsp (untested; see docs/clients.md).
# The actions are code actions (:LspCodeAction).
g:LspAddServer([{
    name: 'fastedit',
    filetype: ['python'],
    path: 'fastedit-lsp',
    args: [],
    initializationOptions: {fastedit: {mode: 'auto'}},
}])
