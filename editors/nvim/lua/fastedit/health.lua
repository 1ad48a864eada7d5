-- :checkhealth fastedit

local M = {}

function M.check()
  local health = vim.health
  health.start('fastedit')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.11 or newer is needed (vim.lsp.config, vim.lsp.enable)')
    return
  end
  local fastedit = require('fastedit')
  local cmd = fastedit.options.cmd
  if type(cmd) == 'table' and cmd[1] then
    if vim.fn.executable(cmd[1]) == 1 then
      health.ok('server command: ' .. table.concat(cmd, ' '))
    else
      health.error(
        'server command not found: ' .. cmd[1],
        {
          'pip install . in a clone of the fastedit-lsp repository (no package index has it),'
            .. ' in a Python whose bin is on PATH',
          "or set require('fastedit').setup({ cmd = { '/path/to/fastedit-lsp' } })",
        }
      )
    end
  end
  if cmd and cmd[1] and vim.fn.executable(cmd[1]) == 1 and cmd[1]:match('fastedit%-lsp$') then
    local out = vim.fn.system({ cmd[1], 'editors', '--nvim' })
    if vim.v.shell_error == 0 then
      health.info('the plugin shipped with the server: ' .. vim.trim(out) .. ' (fastedit-lsp editors)')
    end
  end
  if vim.fn.exists(':FasteditToggle') ~= 2 then
    health.warn("setup() has not run: call require('fastedit').setup()")
    return
  end
  local clients = vim.lsp.get_clients({ name = 'fastedit' })
  if #clients == 0 then
    health.info('no fastedit client is running (open a file of a configured filetype)')
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    health.ok(
      string.format(
        'client %d: %s %s, %d buffer(s), position encoding %s',
        client.id,
        tostring(info.name),
        tostring(info.version),
        vim.tbl_count(client.attached_buffers),
        client.offset_encoding
      )
    )
  end
  local line = fastedit.statusline()
  if line ~= '' then
    health.info('status: ' .. line)
  end
  health.info('keys: ' .. vim.inspect(fastedit.keys(), { newline = ' ', indent = '' }))
  local display = fastedit.completion_display()
  if display == 'ghost_text' then
    local o = require('fastedit.ghost_text').options
    health.info(
      string.format(
        'AI completions: ghost text (accept %s, word %s, line %s; %d ms after typing)',
        tostring(o.accept),
        tostring(o.accept_word),
        tostring(o.accept_line),
        o.debounce
      )
    )
  elseif display == 'native' then
    health.info('AI completions: ghost text from vim.lsp.inline_completion')
  else
    health.info('AI completions: completion items (ghost text is off)')
  end
end

return M
