-- fastedit-lsp in Neovim >= 0.11 (init.lua). The server first: `pip install .` in your clone.
-- Keys stay in the environment Neovim starts with (CEREBRAS_API_KEY, OPENAI_API_KEY, ...).

-- With the bundled plugin (keys under <leader>F, statusline, ghost text, one undo per job):
-- its directory is what `fastedit-lsp editors --nvim` prints, or your clone's editors/nvim.
local ok, printed = pcall(vim.fn.system, { 'fastedit-lsp', 'editors', '--nvim' })
local plugin = vim.trim(ok and vim.v.shell_error == 0 and printed or '')
if vim.fn.isdirectory(plugin) == 0 then
  plugin = vim.fn.expand('~/fastedit-lsp/editors/nvim')
end
vim.opt.rtp:append(plugin)
require('fastedit').setup({
  settings = {                           -- sent as initializationOptions
    mode = 'auto',
    profiles = {
      fast = { provider = 'cerebras', model = 'gpt-oss-120b' },
      standard = { provider = 'openai', model = 'gpt-4.1' },
    },
  },
})

-- Without the plugin, Neovim's own client alone (the actions as code actions, `gra`):
--
-- vim.lsp.config('fastedit', {
--   cmd = { 'fastedit-lsp' },
--   filetypes = { 'python', 'javascript', 'typescript', 'go', 'rust' },
--   root_markers = { '.git' },
--   init_options = { mode = 'auto', profiles = { fast = { provider = 'groq' } } },
-- })
-- vim.lsp.enable('fastedit')
