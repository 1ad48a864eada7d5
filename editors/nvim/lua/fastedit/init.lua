-- fastedit for Neovim >= 0.11: registers fastedit-lsp with vim.lsp.config / vim.lsp.enable, adds
-- user commands, keymaps, a statusline component, and makes each streamed job one undo step.
--
--   require('fastedit').setup({ cmd = { 'fastedit-lsp' }, keys = { toggle = '<leader>Ff' } })
--
-- See :help fastedit.

local ghost_text = require('fastedit.ghost_text')
local next_edit = require('fastedit.next_edit')
local status = require('fastedit.status')
local undo = require('fastedit.undo')

local M = {}

local NAME = 'fastedit'
local MODES = { 'fast', 'standard', 'auto' }

--- The default keys: a `<leader>F` prefix (F for fastedit), which Neovim and common
--- distributions leave free (`<leader>f` is usually "find"). Every key is buffer-local to buffers
--- fastedit is attached to. `false` disables one key, `keys = false` all of them.
M.default_keys = {
  toggle = '<leader>Ff', -- fast mode on/off
  mode = '<leader>Fm', -- pick fast / standard / auto
  complete_rest = '<leader>Fc',
  generate_regex = '<leader>Fr', -- normal and visual
  generate_tests = '<leader>Ft',
  fix_syntax = '<leader>Fx', -- normal and visual
  edit_selection = '<leader>Fe', -- visual (normal: the current line)
  cancel = '<leader>Fq',
  revert = '<leader>Fu',
  status = '<leader>Fs',
}

--- @class fastedit.Options
--- @field cmd string[]|fun(...): vim.lsp.rpc.PublicClient the server command
--- @field settings table? the `fastedit` settings, sent as initializationOptions
--- @field filetypes string[]? filetypes to attach to (nil: every file buffer)
--- @field root_markers string[]? files that mark a project root
--- @field keys table<string, string|false>|false key overrides (see default_keys)
--- @field notify boolean one message when a job ends
--- @field completion {enable: boolean, autotrigger: boolean}|false LSP completion from fastedit
--- @field inline_completion boolean inline (ghost text) completion on Neovim 0.12+
--- @field ghost_text fastedit.GhostTextOptions|false ghost text on Neovim 0.11 (keys, debounce)
--- @field next_edit fastedit.NextEditOptions|false next-edit suggestions (keys, debounce)

--- @type fastedit.Options
M.defaults = {
  cmd = { 'fastedit-lsp' },
  settings = nil,
  filetypes = nil,
  root_markers = { '.git' },
  keys = {},
  notify = true,
  -- Each automatic trigger is a model request: manual by default (<C-x><C-o>, or
  -- vim.lsp.completion.get()); `autotrigger = true` asks on the server's trigger characters.
  completion = { enable = true, autotrigger = false },
  inline_completion = true,
  -- Neovim 0.11 (no native inline completion): the plugin's own ghost text, asked for on typing
  -- pauses in Insert mode. Alt chords, which Insert mode leaves unmapped.
  ghost_text = {
    enable = true,
    debounce = 100,
    accept = '<M-a>',
    accept_word = '<M-w>',
    accept_line = '<M-l>',
  },
  next_edit = { enable = true, accept = '<M-n>', dismiss = '<M-d>', debounce = 150 },
}

--- @type fastedit.Options
M.options = vim.deepcopy(M.defaults)

-- Clients -------------------------------------------------------------------------------------

--- The fastedit client of `bufnr`, else any fastedit client (mode and status are server-wide).
--- @param bufnr integer?
--- @param need_buffer boolean? the command needs the buffer's own client
--- @return vim.lsp.Client?
local function get_client(bufnr, need_buffer)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = NAME })[1]
  if client == nil and not need_buffer then
    client = vim.lsp.get_clients({ name = NAME })[1]
  end
  if client == nil then
    local missing = M.server_missing()
    status.notify(
      missing
        or (need_buffer and 'fastedit: not attached to this buffer (:checkhealth fastedit)')
        or 'fastedit: the server is not running (:checkhealth fastedit)',
      missing and vim.log.levels.ERROR or vim.log.levels.WARN
    )
  end
  return client
end

--- Why the server cannot start (its program is not found), as a message; nil when it is found.
--- @return string?
function M.server_missing()
  local cmd = M.options.cmd
  local program = type(cmd) == 'table' and cmd[1] or nil
  if type(program) ~= 'string' or vim.fn.executable(program) == 1 then
    return nil
  end
  return 'fastedit: ' .. program .. ' not found: pip install . in a clone of fastedit-lsp,'
    .. ' or set cmd in setup() (:checkhealth fastedit)'
end

--- Send the buffer's pending changes now. Neovim debounces didChange (150 ms); the server must see
--- the text the user sees before a command names positions in it. (Client:request flushes too; this
--- makes it explicit and covers every buffer the client tracks.)
--- @param client vim.lsp.Client
--- @param bufnr integer?
local function flush(client, bufnr)
  local ok, changetracking = pcall(require, 'vim.lsp._changetracking')
  if ok and type(changetracking.flush) == 'function' then
    pcall(changetracking.flush, client, bufnr)
  end
end

--- Run a fastedit command on the server (flushing first); `on_result(result)` on success.
--- @param command string e.g. 'fastedit.completeRest'
--- @param argument table? the single object argument
--- @param opts {bufnr: integer?, need_buffer: boolean?}?
--- @param on_result fun(result: any)?
function M.execute(command, argument, opts, on_result)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local client = get_client(bufnr, opts.need_buffer)
  if client == nil then
    return
  end
  flush(client, bufnr)
  local params = { command = command, arguments = { argument or vim.empty_dict() } }
  client:request('workspace/executeCommand', params, function(err, result)
    if err then
      status.notify('fastedit: ' .. tostring(err.message or err), vim.log.levels.ERROR)
      return
    end
    if on_result then
      on_result(result)
    end
  end, bufnr)
end

-- Positions -----------------------------------------------------------------------------------

--- An LSP position for a (0-based row, byte column) in `bufnr`.
--- @return lsp.Position
local function position(bufnr, row, col, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  col = math.min(col, #line)
  return { line = row, character = vim.str_utfindex(line, encoding, col, false) }
end

--- The cursor as an LSP position.
local function cursor_position(bufnr, encoding)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  return position(bufnr, row - 1, col, encoding)
end

--- A range of whole lines [line1, line2] (1-based), ending at the start of the next line.
local function lines_range(bufnr, line1, line2, encoding)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local finish
  if line2 < count then
    finish = { line = line2, character = 0 }
  else
    local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1] or ''
    finish = position(bufnr, count - 1, #last, encoding)
  end
  return { start = { line = line1 - 1, character = 0 }, ['end'] = finish }
end

--- The visual selection being made (called from a visual-mode mapping), as an LSP range; leaves
--- visual mode.
local function visual_range(bufnr, encoding)
  local mode = vim.fn.mode()
  local a, b = vim.fn.getpos('v'), vim.fn.getpos('.')
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'nx', false)
  if a[2] > b[2] or (a[2] == b[2] and a[3] > b[3]) then
    a, b = b, a
  end
  if mode == 'V' or mode == '\22' then
    return lines_range(bufnr, a[2], b[2], encoding)
  end
  local last = vim.api.nvim_buf_get_lines(bufnr, b[2] - 1, b[2], false)[1] or ''
  -- The end is inclusive in Vim: take the whole (multibyte) character under it.
  local char = vim.fn.strpart(last, b[3] - 1, 1, true)
  local end_col = math.min(#last, b[3] - 1 + math.max(#char, 1))
  return {
    start = position(bufnr, a[2] - 1, a[3] - 1, encoding),
    ['end'] = position(bufnr, b[2] - 1, end_col, encoding),
  }
end

--- The range a command acts on: a visual selection (mapping), a :range (user command), else
--- `default` ('cursor': empty at the cursor, 'line': the cursor line).
--- @param opts {range: table?, line1: integer?, line2: integer?, visual: boolean?}
local function target_range(bufnr, encoding, opts, default)
  if opts.visual then
    return visual_range(bufnr, encoding)
  end
  if opts.line1 and opts.line2 then
    return lines_range(bufnr, opts.line1, opts.line2, encoding)
  end
  if default == 'line' then
    local row = vim.api.nvim_win_get_cursor(0)[1]
    return lines_range(bufnr, row, row, encoding)
  end
  local here = cursor_position(bufnr, encoding)
  return { start = here, ['end'] = here }
end

-- Actions -------------------------------------------------------------------------------------

--- The jobs that leave the cursor after the text they write (unless the user moves it).
local FOLLOWING = { ['fastedit.completeRest'] = true, ['fastedit.generateRegex'] = true }

--- Start a job on the current buffer; remembers its id (M.last_job()).
--- @param command string
--- @param build fun(bufnr: integer, uri: string, encoding: string): table? the argument
local function start_job(command, build)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = get_client(bufnr, true)
  if client == nil then
    return
  end
  local argument = build(bufnr, vim.uri_from_bufnr(bufnr), client.offset_encoding)
  if argument == nil then
    return
  end
  if FOLLOWING[command] then
    undo.follow(bufnr)
  end
  M.execute(command, argument, { bufnr = bufnr, need_buffer = true }, function(result)
    if type(result) == 'table' and result.jobId then
      status.state.last_started = result.jobId
    end
  end)
end

--- Where "complete the rest" inserts: at the cursor in Insert mode; in Normal mode the cursor sits
--- on a character, and on the last one of a line (where <Esc> leaves it after typing) the text
--- goes after it, at the end of the line.
local function completion_position(bufnr, encoding)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  local line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ''
  if vim.api.nvim_get_mode().mode:sub(1, 1) == 'n' and col < #line then
    local char = vim.fn.strpart(line, col, 1, true)
    if col + #char >= #line then
      col = #line
    end
  end
  return position(bufnr, row - 1, col, encoding)
end

--- Stream the missing code at the cursor.
function M.complete_rest()
  start_job('fastedit.completeRest', function(bufnr, uri, encoding)
    return { uri = uri, position = completion_position(bufnr, encoding) }
  end)
end

--- A regex from the `match:`/`reject:` comment block (or selected strings) at the cursor/range.
--- @param opts table? {visual=true} or a user command's {line1, line2}
function M.generate_regex(opts)
  start_job('fastedit.generateRegex', function(bufnr, uri, encoding)
    return { uri = uri, range = target_range(bufnr, encoding, opts or {}, 'cursor') }
  end)
end

--- A pytest module for the function at the cursor.
function M.generate_tests()
  start_job('fastedit.generateTests', function(bufnr, uri, encoding)
    return { uri = uri, position = cursor_position(bufnr, encoding) }
  end)
end

--- Repair the syntax error on the cursor line (or the range).
--- @param opts table?
function M.fix_syntax(opts)
  start_job('fastedit.fixSyntax', function(bufnr, uri, encoding)
    return { uri = uri, range = target_range(bufnr, encoding, opts or {}, 'line') }
  end)
end

--- Rewrite the selection (or the cursor line, or the range) following an instruction asked for
--- with vim.ui.input (or given as opts.instruction).
--- @param opts table?
function M.edit_selection(opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = get_client(bufnr, true)
  if client == nil then
    return
  end
  -- Take the range now: vim.ui.input may leave visual mode or move the cursor.
  local range = target_range(bufnr, client.offset_encoding, opts, 'line')
  local function run(instruction)
    if instruction == nil or vim.trim(instruction) == '' then
      return
    end
    start_job('fastedit.editSelection', function(_, uri)
      return { uri = uri, range = range, instruction = instruction }
    end)
  end
  if opts.instruction then
    run(opts.instruction)
  else
    vim.ui.input({ prompt = 'fastedit instruction: ' }, run)
  end
end

--- The built-in user actions (presets) of the server.
M.preset_actions = { 'docstring', 'typeHints' }

--- The ids of the user-defined actions: those in `settings.actions`, then the presets.
--- @return string[]
function M.action_ids()
  local ids = {}
  local settings = M.options.settings or {}
  for _, action in ipairs(settings.actions or {}) do
    if type(action) == 'table' and action.id then
      table.insert(ids, action.id)
    end
  end
  for _, id in ipairs(M.preset_actions) do
    if not vim.tbl_contains(ids, id) then
      table.insert(ids, id)
    end
  end
  return ids
end

--- Run a user-defined action (or a preset) by id: on the selection or range when there is one,
--- else at the cursor (the server finds the function or the file the action targets).
--- Bind a key to one with, for example:
---   vim.keymap.set({ 'n', 'x' }, '<leader>Fd', function()
---     require('fastedit').run('docstring', { visual = vim.fn.mode():find('[vV]') ~= nil })
---   end)
--- @param id string
--- @param opts table? {visual=true} or a user command's {line1, line2}
function M.run(id, opts)
  opts = opts or {}
  if id == nil or id == '' then
    vim.ui.select(M.action_ids(), { prompt = 'fastedit action: ' }, function(choice)
      if choice then
        M.run(choice, opts)
      end
    end)
    return
  end
  start_job('fastedit.run', function(bufnr, uri, encoding)
    local argument = { action = id, uri = uri }
    if opts.visual or (opts.line1 and opts.line2) then
      argument.range = target_range(bufnr, encoding, opts, 'cursor')
    else
      argument.position = cursor_position(bufnr, encoding)
    end
    return argument
  end)
end

-- Modes, cancel, revert, status ---------------------------------------------------------------

local function mode_changed(result)
  if type(result) == 'table' and result.mode then
    status.state.mode = result.mode
    vim.cmd.redrawstatus({ bang = true })
    status.notify('fastedit: ' .. status.mode_message(result.mode))
  end
end

--- Flip between fast mode and the last other mode.
function M.toggle()
  M.execute('fastedit.toggleFastMode', nil, nil, mode_changed)
end

--- Set the mode; without an argument, pick one with vim.ui.select.
--- @param mode string?
function M.set_mode(mode)
  if mode == nil or mode == '' then
    vim.ui.select(MODES, { prompt = 'fastedit mode' }, function(choice)
      if choice then
        M.set_mode(choice)
      end
    end)
    return
  end
  if not vim.tbl_contains(MODES, mode) then
    status.notify('fastedit: unknown mode ' .. mode .. ' (fast, standard, auto)', vim.log.levels.ERROR)
    return
  end
  M.execute('fastedit.setMode', { mode = mode }, nil, mode_changed)
end

--- Stop this buffer's running jobs (`all`: every running job).
--- @param all boolean?
function M.cancel(all)
  local bufnr = vim.api.nvim_get_current_buf()
  local argument = (not all) and { uri = vim.uri_from_bufnr(bufnr) } or nil
  M.execute('fastedit.cancel', argument, { bufnr = bufnr }, function(result)
    local ids = type(result) == 'table' and result.cancelled or {}
    if #ids == 0 then
      status.notify('fastedit: no running job')
    end
  end)
end

--- Restore the original text of this buffer's last finished job (`all`: the last job anywhere).
--- @param all boolean?
function M.revert(all)
  local bufnr = vim.api.nvim_get_current_buf()
  local argument = (not all) and { uri = vim.uri_from_bufnr(bufnr) } or nil
  M.execute('fastedit.revert', argument, { bufnr = bufnr }, function(result)
    if type(result) ~= 'table' then
      return
    end
    if not result.reverted then
      status.notify('fastedit: not reverted: ' .. tostring(result.reason), vim.log.levels.WARN)
    else
      status.notify('fastedit: reverted')
    end
  end)
end

--- Show the server's status (mode, profiles, recent jobs) in a scratch window.
function M.show_status()
  M.execute('fastedit.status', nil, nil, function(reply)
    status.take_status(reply)
    local lines = status.report(reply)
    vim.cmd('botright ' .. math.min(#lines, 20) .. 'new')
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = 'nofile', 'wipe', false
    vim.bo[buf].modifiable = false
    vim.api.nvim_buf_set_name(buf, 'fastedit://status/' .. buf)
    vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = buf, nowait = true })
  end)
end

--- `⚡ fast · <model> · 1,840 tok/s` for a statusline ('' until the server has spoken).
--- @return string
function M.statusline()
  return status.statusline()
end

--- The latest record of a job (from the server's fastedit/status notifications), or nil.
--- @param job_id string
--- @return table?
function M.job(job_id)
  return status.state.jobs[job_id]
end

--- The id of the last job started from this Neovim (nil before the first).
--- @return string?
function M.last_job()
  return status.state.last_started
end

-- Setup ---------------------------------------------------------------------------------------

local ACTIONS = {
  toggle = { modes = 'n', fn = M.toggle, desc = 'fastedit: toggle fast mode' },
  mode = { modes = 'n', fn = M.set_mode, desc = 'fastedit: set mode' },
  complete_rest = { modes = 'n', fn = M.complete_rest, desc = 'fastedit: complete the rest' },
  generate_regex = { modes = 'nx', fn = M.generate_regex, desc = 'fastedit: generate regex' },
  generate_tests = { modes = 'n', fn = M.generate_tests, desc = 'fastedit: write tests' },
  fix_syntax = { modes = 'nx', fn = M.fix_syntax, desc = 'fastedit: fix syntax' },
  edit_selection = { modes = 'nx', fn = M.edit_selection, desc = 'fastedit: edit selection' },
  cancel = { modes = 'n', fn = M.cancel, desc = 'fastedit: cancel' },
  revert = { modes = 'n', fn = M.revert, desc = 'fastedit: revert the last job' },
  status = { modes = 'n', fn = M.show_status, desc = 'fastedit: status' },
}

--- The keys in effect: defaults with the user's overrides (`false` removes one).
--- @return table<string, string>
function M.keys()
  if M.options.keys == false then
    return {}
  end
  local keys = {}
  for action, lhs in pairs(M.default_keys) do
    local override = M.options.keys[action]
    if override == nil then
      keys[action] = lhs
    elseif override ~= false then
      keys[action] = override
    end
  end
  return keys
end

local function set_keymaps(bufnr)
  for action, lhs in pairs(M.keys()) do
    local spec = ACTIONS[action]
    if spec then
      for mode in spec.modes:gmatch('.') do
        local rhs = spec.fn
        if mode == 'x' then
          rhs = function()
            spec.fn({ visual = true })
          end
        elseif action == 'mode' or action == 'cancel' or action == 'revert' then
          rhs = function()
            spec.fn()
          end
        end
        vim.keymap.set(mode, lhs, rhs, { buffer = bufnr, desc = spec.desc, silent = true })
      end
    end
  end
end

--- Whether Neovim's own inline completion (0.12+) shows the ghost text.
local function native_inline_completion()
  return M.options.inline_completion
    and vim.fn.has('nvim-0.12') == 1
    and vim.lsp.inline_completion ~= nil
end

--- Whether the plugin's ghost text is on (Neovim 0.11, or 0.12 with `inline_completion = false`).
local function use_ghost_text()
  local opts = M.options.ghost_text
  return opts ~= false and opts.enable ~= false and not native_inline_completion()
end

--- How AI completions show: 'native' (vim.lsp.inline_completion, 0.12+), 'ghost_text' (the
--- plugin's own) or 'items' (completion items only).
--- @return 'native'|'ghost_text'|'items'
function M.completion_display()
  if native_inline_completion() then
    return 'native'
  end
  return use_ghost_text() and 'ghost_text' or 'items'
end

local function on_attach(client, bufnr)
  set_keymaps(bufnr)
  if M.options.next_edit then
    next_edit.attach(bufnr)
  end
  if use_ghost_text() and client:supports_method('textDocument/inlineCompletion') then
    ghost_text.attach(bufnr)
  end
  local completion = M.options.completion
  if completion and completion.enable and client:supports_method('textDocument/completion') then
    vim.lsp.completion.enable(true, client.id, bufnr, { autotrigger = completion.autotrigger })
  end
  if
    M.options.inline_completion
    and vim.fn.has('nvim-0.12') == 1
    and vim.lsp.inline_completion
    and client:supports_method('textDocument/inlineCompletion')
  then
    vim.lsp.inline_completion.enable(true, { bufnr = bufnr, client_id = client.id })
  end
  if status.state.client_id ~= client.id then
    -- A new server (a first start or a restart): its job ids start again.
    status.forget_jobs(client.id)
    M.execute('fastedit.status', nil, { bufnr = bufnr }, status.take_status)
  end
end

local function create_commands()
  local command = vim.api.nvim_create_user_command
  command('FasteditToggle', M.toggle, { desc = 'fastedit: toggle fast mode' })
  command('FasteditMode', function(o)
    M.set_mode(o.args)
  end, {
    nargs = '?',
    desc = 'fastedit: set the mode (fast, standard, auto)',
    complete = function(lead)
      return vim.tbl_filter(function(m)
        return vim.startswith(m, lead)
      end, MODES)
    end,
  })
  command('FasteditCancel', function(o)
    M.cancel(o.bang)
  end, { bang = true, desc = "fastedit: cancel this buffer's jobs (!: all jobs)" })
  command('FasteditRevert', function(o)
    M.revert(o.bang)
  end, { bang = true, desc = "fastedit: revert this buffer's last job (!: the last job)" })
  command('FasteditStatus', M.show_status, { desc = 'fastedit: show status' })
  command('FasteditNextEdit', next_edit.toggle, { desc = 'fastedit: next-edit suggestions on/off' })
  command('FasteditGhostText', ghost_text.toggle, { desc = 'fastedit: ghost text on/off' })
  command('FasteditCompleteRest', M.complete_rest, { desc = 'fastedit: complete the rest' })
  command('FasteditGenerateTests', M.generate_tests, { desc = 'fastedit: write tests' })
  local function ranged(fn)
    return function(o)
      fn(o.range > 0 and { line1 = o.line1, line2 = o.line2 } or {})
    end
  end
  command('FasteditGenerateRegex', ranged(M.generate_regex), {
    range = true,
    desc = 'fastedit: generate a regex from the examples',
  })
  command('FasteditFixSyntax', ranged(M.fix_syntax), {
    range = true,
    desc = 'fastedit: fix the syntax error',
  })
  command('Fastedit', function(o)
    M.run(o.args, o.range > 0 and { line1 = o.line1, line2 = o.line2 } or {})
  end, {
    range = true,
    nargs = '?',
    desc = 'fastedit: run a user-defined action by id (on the range, else at the cursor)',
    complete = function(lead)
      return vim.tbl_filter(function(id)
        return vim.startswith(id, lead)
      end, M.action_ids())
    end,
  })
  command('FasteditEditSelection', function(o)
    local args = { line1 = o.line1, line2 = o.line2 }
    if o.args ~= '' then
      args.instruction = o.args
    end
    M.edit_selection(args)
  end, {
    range = true,
    nargs = '*',
    desc = 'fastedit: rewrite the lines following an instruction',
  })
end

--- Register fastedit-lsp and enable it.
--- @param opts fastedit.Options?
function M.setup(opts)
  if vim.fn.has('nvim-0.11') ~= 1 then
    vim.notify('fastedit needs Neovim 0.11 or newer', vim.log.levels.ERROR)
    return
  end
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- tbl_deep_extend merges lists index by index: take the user's lists whole.
  for _, key in ipairs({ 'cmd', 'filetypes', 'root_markers' }) do
    if opts and opts[key] ~= nil then
      M.options[key] = opts[key]
    end
  end
  if opts and opts.keys == false then
    M.options.keys = false
  end
  -- `true` for a table option means its defaults (tbl_deep_extend would put the boolean there).
  for _, key in ipairs({ 'completion', 'ghost_text', 'next_edit' }) do
    if opts and opts[key] == true then
      M.options[key] = vim.deepcopy(M.defaults[key])
    end
  end
  status.options.notify = M.options.notify
  if opts and opts.ghost_text == false then
    M.options.ghost_text = false
  elseif M.options.ghost_text then
    ghost_text.options = vim.tbl_extend('force', ghost_text.options, M.options.ghost_text)
  end
  if M.options.next_edit then
    next_edit.options = vim.tbl_extend('force', next_edit.options, M.options.next_edit)
  elseif opts and opts.next_edit == false then
    next_edit.options.enable = false
  end

  -- Opt in to fastedit/status (merged into Neovim's default capabilities). With the plugin's
  -- ghost text, declare inline completion too: the server then sends its AI suggestion as ghost
  -- text only, not also as a completion item.
  local capabilities = { experimental = { fastedit = { statusNotification = true } } }
  if use_ghost_text() then
    capabilities.textDocument = { inlineCompletion = { dynamicRegistration = false } }
  end
  vim.lsp.config(NAME, {
    cmd = M.options.cmd,
    filetypes = M.options.filetypes,
    root_markers = M.options.root_markers,
    init_options = M.options.settings,
    capabilities = capabilities,
    handlers = {
      ['workspace/applyEdit'] = undo.handler,
      ['fastedit/status'] = status.handler,
      ['window/showMessage'] = status.show_message,
      ['window/showDocument'] = require('fastedit.show_document').handler,
    },
  })

  local group = vim.api.nvim_create_augroup('fastedit', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == NAME then
        on_attach(client, args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    callback = function(args)
      undo.forget(args.buf)
    end,
  })
  create_commands()
  -- The keys everywhere too (an attached buffer's own keys take precedence): where fastedit is
  -- not attached (its server missing or failed), a key says why instead of falling through to
  -- Vim's own command (`<leader>Fc` would run `F`, find a character backwards).
  set_keymaps(nil)
  vim.lsp.enable(NAME)
  local missing = M.server_missing()
  if missing then
    status.notify(missing, vim.log.levels.ERROR)
  end
end

return M
