-- Next-edit suggestions in Neovim: after you change the buffer, ask fastedit (fastedit.nextEdit,
-- through executeCommand, which rassumfrassum-style setups also route) for the edit you will make
-- next, and show it where it would apply: the replaced text highlighted, the new text as virtual
-- text beside it. Nothing is applied until the accept key; the accepted edit is one undo step,
-- and the next suggestion follows. A suggestion is only applied to the buffer version it was made
-- for.

local M = {}

local ns = vim.api.nvim_create_namespace('fastedit_next_edit')

--- @class fastedit.NextEditOptions
--- @field enable boolean ask for suggestions after each change
--- @field accept string|false key (normal and insert mode) that applies the suggestion
--- @field dismiss string|false key that dismisses it
--- @field debounce integer milliseconds of quiet before asking
M.options = { enable = true, accept = '<M-n>', dismiss = '<M-d>', debounce = 150 }

--- Per buffer: the suggestion shown ({edit, version, id}) and the pending request's timer.
local shown = {}
local timers = {}
local enabled = true
--- Buffers whose suggestions this module shows (attached with next-edit suggestions on).
local attached = {}

vim.api.nvim_set_hl(0, 'FasteditNextEditDelete', { default = true, link = 'DiffDelete' })
vim.api.nvim_set_hl(0, 'FasteditNextEditAdd', { default = true, link = 'DiffAdd' })

local function buffer(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

local function client_of(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'fastedit' })[1]
end

local function byte_col(bufnr, row, character, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  local ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and col or #line
end

--- Remove the suggestion shown in `bufnr` (if any).
function M.clear(bufnr)
  bufnr = buffer(bufnr)
  shown[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  end
end

--- The suggestion shown in `bufnr`: { edit, version, id } or nil.
function M.current(bufnr)
  return shown[buffer(bufnr)]
end

local function render(bufnr, edit, encoding)
  M.clear(bufnr)
  local s, e = edit.range.start, edit.range['end']
  local scol = byte_col(bufnr, s.line, s.character, encoding)
  local ecol = byte_col(bufnr, e.line, e.character, encoding)
  local hint = M.options.accept and (M.options.accept .. ' accepts') or nil
  require('fastedit.render').edit(bufnr, ns, s.line, scol, e.line, ecol, edit.text, {
    add = 'FasteditNextEditAdd',
    delete = 'FasteditNextEditDelete',
  }, hint)
end

--- Ask for the next edit at the cursor now, and show it.
function M.request(bufnr)
  bufnr = buffer(bufnr)
  local client = client_of(bufnr)
  if not enabled or client == nil or bufnr ~= vim.api.nvim_get_current_buf() then
    return
  end
  local fastedit = require('fastedit')
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ''
  local encoding = client.offset_encoding or 'utf-16'
  local argument = {
    uri = vim.uri_from_bufnr(bufnr),
    position = { line = row - 1, character = vim.str_utfindex(line, encoding, col, false) },
  }
  local asked = vim.api.nvim_buf_get_changedtick(bufnr)
  fastedit.execute('fastedit.nextEdit', argument, { bufnr = bufnr }, function(result)
    local edit = result and result.edits and result.edits[1]
    if edit == nil or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    if vim.api.nvim_buf_get_changedtick(bufnr) ~= asked then
      return -- the buffer changed meanwhile: a newer request is on its way
    end
    local id = edit.command and edit.command.arguments and edit.command.arguments[1]
    render(bufnr, edit, encoding)
    shown[bufnr] = { edit = edit, version = edit.textDocument.version, id = id, tick = asked }
  end)
end

--- After a change: drop the suggestion (it was for the previous version) and ask again soon.
local function changed(bufnr)
  M.clear(bufnr)
  if not (enabled and M.options.enable) then
    return
  end
  local timer = timers[bufnr]
  if timer == nil then
    timer = assert(vim.uv.new_timer())
    timers[bufnr] = timer
  end
  timer:stop()
  timer:start(
    M.options.debounce,
    0,
    vim.schedule_wrap(function()
      if vim.api.nvim_buf_is_valid(bufnr) then
        M.request(bufnr)
      end
    end)
  )
end

--- Apply the suggestion shown (one undo step), move to its end, and tell the server.
function M.accept(bufnr)
  bufnr = buffer(bufnr)
  local s = shown[bufnr]
  local client = client_of(bufnr)
  if s == nil or client == nil then
    return false
  end
  if vim.api.nvim_buf_get_changedtick(bufnr) ~= s.tick then
    M.clear(bufnr) -- made for another version of the buffer: never applied
    return false
  end
  M.clear(bufnr)
  local encoding = client.offset_encoding or 'utf-16'
  local edit = { range = s.edit.range, newText = s.edit.text }
  -- Its own undo step, also in insert mode (:help undo-break).
  vim.o.undolevels = vim.o.undolevels
  vim.lsp.util.apply_text_edits({ edit }, bufnr, encoding)
  vim.o.undolevels = vim.o.undolevels
  local lines = vim.split(s.edit.text, '\n', { plain = true })
  local row = s.edit.range.start.line + #lines - 1
  local start_col = #lines == 1 and byte_col(bufnr, row, s.edit.range.start.character, encoding)
    or 0
  pcall(vim.api.nvim_win_set_cursor, 0, { row + 1, start_col + #lines[#lines] })
  if s.id then
    require('fastedit').execute('fastedit.acceptNextEdit', s.id, { bufnr = bufnr })
  end
  return true
end

--- Dismiss the suggestion shown and tell the server.
function M.dismiss(bufnr)
  bufnr = buffer(bufnr)
  local s = shown[bufnr]
  M.clear(bufnr)
  if s and s.id then
    require('fastedit').execute('fastedit.dismissNextEdit', s.id, { bufnr = bufnr })
  end
end

--- :FasteditNextEdit: turn suggestions off or on (on the server too).
function M.toggle()
  require('fastedit').execute('fastedit.toggleNextEdit', nil, {}, function(result)
    enabled = result and result.enabled ~= false
    if not enabled then
      for bufnr in pairs(shown) do
        M.clear(bufnr)
      end
    end
    vim.notify('fastedit: next-edit suggestions ' .. (enabled and 'on' or 'off'))
  end)
end

--- Whether next-edit suggestions are shown in `bufnr` (ghost text leaves them to this module).
function M.active(bufnr)
  return enabled and M.options.enable and attached[buffer(bufnr)] == true
end

--- Buffer-local keys and the change watcher, for a buffer fastedit attached to.
function M.attach(bufnr)
  attached[bufnr] = true
  local group = vim.api.nvim_create_augroup('fastedit_next_edit_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      changed(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufWipeout', 'InsertLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function(args)
      if args.event == 'BufWipeout' then
        M.clear(bufnr)
        attached[bufnr] = nil
        if timers[bufnr] then
          timers[bufnr]:close()
          timers[bufnr] = nil
        end
      end
    end,
  })
  if M.options.accept then
    vim.keymap.set({ 'n', 'i' }, M.options.accept, function()
      M.accept(bufnr)
    end, { buffer = bufnr, desc = 'fastedit: accept the next-edit suggestion', silent = true })
  end
  if M.options.dismiss then
    vim.keymap.set({ 'n', 'i' }, M.options.dismiss, function()
      M.dismiss(bufnr)
    end, { buffer = bufnr, desc = 'fastedit: dismiss the next-edit suggestion', silent = true })
  end
end

M.namespace = ns

return M
