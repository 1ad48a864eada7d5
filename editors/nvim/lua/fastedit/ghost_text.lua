-- Ghost text for AI completions on Neovim 0.11, which has no native inline completion (0.12's
-- vim.lsp.inline_completion is used there instead). After a pause in typing in Insert mode, ask
-- fastedit for the text after the cursor (textDocument/inlineCompletion: Neovim runs fastedit as
-- its own LSP client, so the request reaches it directly; no rassumfrassum in between) and show it
-- with the next-edit renderer as virtual text at the cursor, its further lines below. Keys accept
-- all of it, its next word or its next line; each accept is one undo step and the rest stays
-- shown. Typing what the ghost text shows keeps the rest shown; any other change, a cursor move
-- or leaving Insert mode clears it. An answer that arrives for another state of the buffer (text
-- changed, cursor moved) is never shown.

local render = require('fastedit.render')

local M = {}

local ns = vim.api.nvim_create_namespace('fastedit_ghost_text')
M.namespace = ns

local METHOD = 'textDocument/inlineCompletion'

--- @class fastedit.GhostTextOptions
--- @field enable boolean ask for ghost text on typing pauses in Insert mode
--- @field debounce integer milliseconds of quiet in Insert mode before asking
--- @field accept string|false Insert-mode key: insert the whole suggestion
--- @field accept_word string|false Insert-mode key: insert its next word
--- @field accept_line string|false Insert-mode key: insert the rest of its current line
M.options = {
  enable = true,
  debounce = 100,
  accept = '<M-a>',
  accept_word = '<M-w>',
  accept_line = '<M-l>',
}

-- Grey in every terminal: the default colorscheme's Comment has a GUI colour only, so without
-- 'termguicolors' a link to it would draw the ghost text like the buffer's own text. Set again
-- after a colorscheme clears the highlights; `default`: a user's own definition wins.
local function highlight()
  vim.api.nvim_set_hl(0, 'FasteditGhostText', { default = true, fg = '#808080', ctermfg = 244 })
end
highlight()
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('fastedit_ghost_text_highlight', { clear = true }),
  callback = highlight,
})

--- Per buffer: the suggestion shown, { row, col (byte; where the text goes), text, tick, line
--- (the row's text when shown), count (the buffer's line count), command? }.
local shown = {}
--- Per buffer: the state the shown text, the debounce timer or the request belongs to:
--- { tick, row, col (the cursor) }. A cursor move away from it without a change clears all.
local at = {}
--- Per buffer: the request in flight, { client, id }.
local pending = {}
local timers = {}
local enabled = true
--- Counts since start-up: requests sent, answers received, answers shown, answers not shown
--- (cancelled, or made for another state of the buffer).
local counts = { requests = 0, answered = 0, shown = 0, dropped = 0 }

local function buffer(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

local function client_of(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'fastedit' })[1]
end

local function insert_mode()
  return vim.api.nvim_get_mode().mode:sub(1, 1) == 'i'
end

local function tick_of(bufnr)
  return vim.api.nvim_buf_get_changedtick(bufnr)
end

--- The cursor as (0-based row, byte column).
local function cursor()
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  return row - 1, col
end

local function line_of(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
end

local function cancel_pending(bufnr)
  local p = pending[bufnr]
  pending[bufnr] = nil
  if p then
    counts.dropped = counts.dropped + 1
    pcall(p.client.cancel_request, p.client, p.id)
  end
end

local function draw(bufnr, s)
  render.edit(bufnr, ns, s.row, s.col, s.row, s.col, s.text, { add = 'FasteditGhostText' })
end

--- Remove the ghost text shown in `bufnr` (if any).
function M.clear(bufnr)
  bufnr = buffer(bufnr)
  shown[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  end
end

--- Clear and stop the debounce timer; `cancel`: cancel the request in flight too.
local function reset(bufnr, cancel)
  M.clear(bufnr)
  at[bufnr] = nil
  if timers[bufnr] then
    timers[bufnr]:stop()
  end
  if cancel then
    cancel_pending(bufnr)
  end
end

--- The ghost text shown in `bufnr`: { row, col, text, ... } or nil.
function M.current(bufnr)
  return shown[buffer(bufnr)]
end

--- Whether the next-edit renderer shows next-edit suggestions in `bufnr` (then the ghost text
--- leaves them to it rather than showing the same suggestion twice).
local function next_edit_shows(bufnr)
  local next_edit = package.loaded['fastedit.next_edit']
  return next_edit ~= nil and next_edit.active(bufnr)
end

--- The first item of an inlineCompletion answer that can be ghost text at (row, col): plain text
--- inserted at the cursor, or an item whose range on the cursor line holds the cursor and whose
--- replaced text starts its new text (the rest then goes at the range's end).
local function pick(bufnr, result, row, col, line, encoding)
  local items = type(result) == 'table' and (result.items or result) or {}
  for _, item in ipairs(items) do
    local text = item.insertText
    local command = item.command
    local next_edit = type(command) == 'table' and command.command == 'fastedit.acceptNextEdit'
    if type(text) == 'string' and not (next_edit and next_edit_shows(bufnr)) then
      text = text:gsub('\r\n?', '\n')
      local where = col
      if item.range then
        local s, e = item.range.start, item.range['end']
        local ok_s, scol = pcall(vim.str_byteindex, line, encoding, s.character, false)
        local ok_e, ecol = pcall(vim.str_byteindex, line, encoding, e.character, false)
        local replaced = (ok_s and ok_e) and line:sub(scol + 1, ecol) or nil
        if
          s.line == row
          and e.line == row
          and replaced
          and scol <= col
          and col <= ecol
          and vim.startswith(text, replaced)
        then
          text, where = text:sub(#replaced + 1), ecol
        else
          text = ''
        end
      end
      if text ~= '' then
        return { row = row, col = where, text = text, command = next_edit and command or nil }
      end
    end
  end
  return nil
end

local function show(bufnr, s)
  s.tick = tick_of(bufnr)
  s.line = line_of(bufnr, s.row)
  s.count = vim.api.nvim_buf_line_count(bufnr)
  shown[bufnr] = s
  draw(bufnr, s)
end

--- Ask for ghost text at the cursor now (`invoked`: as a user's explicit request, which the
--- server does not debounce) and show the answer if the buffer and cursor are still as asked.
--- @param bufnr integer?
--- @param invoked boolean?
function M.request(bufnr, invoked)
  bufnr = buffer(bufnr)
  local client = client_of(bufnr)
  if not enabled or client == nil or bufnr ~= vim.api.nvim_get_current_buf() then
    return
  end
  if not insert_mode() or vim.fn.pumvisible() == 1 then
    return -- ghost text is for Insert mode, and would sit under a popup menu
  end
  -- The previous request is cancelled just before the next one goes, so that the server can
  -- hand its model stream to the new one (typed-ahead reuse) instead of closing it.
  cancel_pending(bufnr)
  local encoding = client.offset_encoding or 'utf-16'
  local row, col = cursor()
  local line = line_of(bufnr, row)
  local asked = tick_of(bufnr)
  at[bufnr] = { tick = asked, row = row, col = col }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = row, character = vim.str_utfindex(line, encoding, col, false) },
    context = { triggerKind = invoked and 1 or 2 }, -- Invoked, Automatic
  }
  local id
  local ok, request_id = client:request(METHOD, params, function(err, result)
    if pending[bufnr] == nil or pending[bufnr].id ~= id then
      return -- cancelled (counted then)
    end
    pending[bufnr] = nil
    counts.answered = counts.answered + 1
    if err or not vim.api.nvim_buf_is_valid(bufnr) then
      counts.dropped = counts.dropped + 1
      return
    end
    local now_row, now_col = cursor()
    if
      bufnr ~= vim.api.nvim_get_current_buf()
      or tick_of(bufnr) ~= asked
      or now_row ~= row
      or now_col ~= col
      or not insert_mode()
      or vim.fn.pumvisible() == 1
    then
      counts.dropped = counts.dropped + 1
      return -- made for another state of the buffer: never shown
    end
    local s = pick(bufnr, result, row, col, line, encoding)
    if s then
      counts.shown = counts.shown + 1
      show(bufnr, s)
    end
  end, bufnr)
  if ok and request_id then
    counts.requests = counts.requests + 1
    id = request_id
    pending[bufnr] = { client = client, id = request_id }
  end
end

--- The part of `text` an accept key inserts: 'all'; 'word' (spaces or a line break with the
--- next line's indentation, then a run of word characters or of other non-space characters);
--- 'line' (up to the end of its current line; after a line break, the line break and the next
--- line).
local WORD = '^[%w_\128-\255]+'
local OTHER = '^[^%w_\128-\255%s]+'
function M.part(text, kind)
  if kind == 'line' then
    if text:sub(1, 1) == '\n' then
      return '\n' .. text:sub(2):match('^[^\n]*')
    end
    return text:match('^[^\n]*')
  elseif kind == 'word' then
    local head = text:match('^\n?[ \t]*')
    local rest = text:sub(#head + 1)
    local word = head .. (rest:match(WORD) or rest:match(OTHER) or '')
    return word ~= '' and word or text:sub(1, 1)
  end
  return text
end

--- Insert part of the ghost text ('all', 'word' or 'line') at its place as one undo step, move
--- the cursor after it and keep the rest shown. False when nothing is shown (or it no longer
--- fits the buffer, then it is cleared).
--- @param kind 'all'|'word'|'line'|nil
--- @param bufnr integer?
--- @return boolean
function M.accept(kind, bufnr)
  bufnr = buffer(bufnr)
  local s = shown[bufnr]
  if s == nil then
    return false
  end
  if tick_of(bufnr) ~= s.tick then
    reset(bufnr, true) -- the buffer changed since it was shown: never inserted
    return false
  end
  local part = M.part(s.text, kind or 'all')
  local rest = s.text:sub(#part + 1)
  local lines = vim.split(part, '\n', { plain = true })
  -- Its own undo step, apart from the typing before and after it (:help undo-break).
  vim.o.undolevels = vim.o.undolevels
  vim.api.nvim_buf_set_text(bufnr, s.row, s.col, s.row, s.col, lines)
  vim.o.undolevels = vim.o.undolevels
  local row = s.row + #lines - 1
  local col = (#lines == 1 and s.col or 0) + #lines[#lines]
  pcall(vim.api.nvim_win_set_cursor, 0, { row + 1, col })
  if rest == '' then
    M.clear(bufnr)
    at[bufnr] = nil
    if s.command then
      local arguments = s.command.arguments or {}
      require('fastedit').execute(s.command.command, arguments[1], { bufnr = bufnr })
    end
  else
    show(bufnr, { row = row, col = col, text = rest, command = s.command })
    at[bufnr] = { tick = shown[bufnr].tick, row = row, col = col }
  end
  return true
end

--- After typing: what was typed is the start of the ghost text (then the rest stays shown, at
--- the new cursor), else a change that makes it stale.
local function typed_ahead(bufnr, s)
  local row, col = cursor()
  if row ~= s.row or col <= s.col or vim.api.nvim_buf_line_count(bufnr) ~= s.count then
    return false
  end
  local line = line_of(bufnr, row)
  local typed = line:sub(s.col + 1, col)
  if
    line:sub(1, s.col) ~= s.line:sub(1, s.col)
    or line:sub(col + 1) ~= s.line:sub(s.col + 1)
    or not vim.startswith(s.text, typed)
    or #typed == #s.text
  then
    return false
  end
  show(bufnr, { row = row, col = col, text = s.text:sub(#typed + 1), command = s.command })
  at[bufnr] = { tick = shown[bufnr].tick, row = row, col = col }
  return true
end

--- TextChangedI: keep the ghost text through its own accept and through typing it; otherwise
--- clear it and ask again after the debounce. A request in flight is left running (its answer,
--- made for the text before the change, is dropped when it arrives): the next request replaces
--- it on the server, which may hand it the same model stream.
local function changed(bufnr)
  local s = shown[bufnr]
  if s and s.tick == tick_of(bufnr) then
    return -- the change was the accept itself
  end
  if s and typed_ahead(bufnr, s) then
    return
  end
  reset(bufnr)
  if not (enabled and M.options.enable) then
    return
  end
  local row, col = cursor()
  at[bufnr] = { tick = tick_of(bufnr), row = row, col = col }
  local timer = timers[bufnr]
  if timer == nil then
    timer = assert(vim.uv.new_timer())
    timers[bufnr] = timer
  end
  timer:start(
    M.options.debounce,
    0,
    vim.schedule_wrap(function()
      local state = at[bufnr]
      if state and vim.api.nvim_buf_is_valid(bufnr) and tick_of(bufnr) == state.tick then
        M.request(bufnr)
      end
    end)
  )
end

--- CursorMovedI: a move that came with no change (arrows, mouse) clears everything; a move that
--- came with typing is left to TextChangedI (either may fire first).
local function moved(bufnr)
  local state = at[bufnr]
  if state == nil or tick_of(bufnr) ~= state.tick then
    return
  end
  local row, col = cursor()
  if row ~= state.row or col ~= state.col then
    reset(bufnr, true)
  end
end

--- :FasteditGhostText: turn ghost text off or on (this Neovim only).
function M.toggle()
  enabled = not enabled
  if not enabled then
    for bufnr in pairs(at) do
      reset(bufnr, true)
    end
    for bufnr in pairs(shown) do
      reset(bufnr, true)
    end
  end
  vim.notify('fastedit: ghost text ' .. (enabled and 'on' or 'off'))
end

--- Counts since start-up: { requests, answered, shown, dropped } (dropped: cancelled, or made
--- for another state of the buffer and never shown).
function M.stats()
  return vim.deepcopy(counts)
end

--- Whether ghost text is on.
function M.enabled()
  return enabled and M.options.enable
end

local KEYS = {
  accept = { 'all', 'fastedit: accept the ghost text' },
  accept_word = { 'word', 'fastedit: accept the next word of the ghost text' },
  accept_line = { 'line', 'fastedit: accept the next line of the ghost text' },
}

--- Buffer-local Insert-mode keys and the watchers, for a buffer fastedit attached to. A key
--- pressed with no ghost text shown does what it does without the mapping.
function M.attach(bufnr)
  local group = vim.api.nvim_create_augroup('fastedit_ghost_text_' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd('TextChangedI', {
    group = group,
    buffer = bufnr,
    callback = function()
      changed(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd('CursorMovedI', {
    group = group,
    buffer = bufnr,
    callback = function()
      moved(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd('ModeChanged', {
    group = group,
    buffer = bufnr,
    callback = function()
      -- Out of Insert mode by any way: CTRL-C leaves without InsertLeave.
      local event = vim.v.event
      if event.old_mode:sub(1, 1) == 'i' and event.new_mode:sub(1, 1) ~= 'i' then
        reset(bufnr, true)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave', 'BufWipeout' }, {
    group = group,
    buffer = bufnr,
    callback = function(args)
      reset(bufnr, true)
      if args.event == 'BufWipeout' and timers[bufnr] then
        timers[bufnr]:close()
        timers[bufnr] = nil
      end
    end,
  })
  for name, spec in pairs(KEYS) do
    local lhs = M.options[name]
    if lhs then
      vim.keymap.set('i', lhs, function()
        if not M.accept(spec[1], bufnr) then
          -- As typed ('t'), not remapped ('n'): an Alt chord then acts as <Esc> and the key,
          -- <Tab> inserts a tab, as without this mapping.
          vim.api.nvim_feedkeys(vim.keycode(lhs), 'nit', false)
        end
      end, { buffer = bufnr, desc = spec[2], silent = true })
    end
  end
end

return M
