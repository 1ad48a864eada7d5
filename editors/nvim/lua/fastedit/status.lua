-- fastedit/status: the server's mode and job records, the statusline text, one message per job.

local undo = require('fastedit.undo')

local M = {}

--- What the server last said.
M.state = {
  --- @type string? fast | standard | auto
  mode = nil,
  --- @type table<string, table> profile name -> {provider, model, baseUrl, note}
  profiles = {},
  --- @type table<string, table> job id -> the latest job record
  jobs = {},
  --- @type string? the job the statusline speaks about (the latest one started or updated)
  current = nil,
  --- @type string? the last job started from this Neovim
  last_started = nil,
  --- @type integer? the client these jobs belong to
  client_id = nil,
}

--- Options set by setup(): `notify` (one message per finished job).
M.options = { notify = true }

local ICONS = { fast = '⚡', standard = '◆', auto = '◇' }
local FINISHED = { done = true, cancelled = true, failed = true, reverted = true }
local TITLES = {
  completeRest = 'Complete the rest',
  generateRegex = 'Generate regex',
  generateTests = 'Write tests',
  fixSyntax = 'Fix syntax',
  editSelection = 'Edit selection',
}

local notified = {} --- @type table<string, true>

--- 1234.5 -> "1,235"
--- @param n number
--- @return string
local function thousands(n)
  local s = tostring(math.floor(n + 0.5))
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end

--- A job's figures, as the server's record has them: `300 tok/s · first token 323 ms` for a
--- model (its decode speed, the wait for its first token apart), `offline · 12 ms` for the
--- offline engine (no model, no speed). Nil when there is nothing to show yet.
--- @param job table a job record
--- @return string?
function M.figures(job)
  local m = job.metrics or {}
  if job.route == 'local' then
    if job.state == 'running' then
      return 'offline · …'
    end
    -- The time to the text in the buffer (landedMs), not the job's wait for Neovim's report of
    -- it (didChange comes 150 ms after the last edit).
    local shown = type(m.landedMs) == 'number' and m.landedMs or m.elapsedMs
    return type(shown) == 'number' and ('offline · ' .. thousands(shown) .. ' ms') or nil
  end
  local parts = {}
  if type(m.tokensPerSecond) == 'number' then
    parts[#parts + 1] = thousands(m.tokensPerSecond) .. ' tok/s'
  elseif job.state == 'running' then
    parts[#parts + 1] = (m.tokens or 0) > 0 and (m.tokens .. ' tokens') or '…'
  end
  if type(m.ttftMs) == 'number' then
    parts[#parts + 1] = 'first token ' .. thousands(m.ttftMs) .. ' ms'
  end
  return #parts > 0 and table.concat(parts, ' · ') or nil
end

--- One line that fits the command line: a longer message would stop Neovim at "Press ENTER".
--- @param msg string
--- @return string
local function one_line(msg)
  msg = msg:gsub('%s*\n%s*', ' ')
  local width = math.max(20, vim.v.echospace)
  if vim.fn.strdisplaywidth(msg) > width then
    msg = vim.fn.strcharpart(msg, 0, width - 1) .. '…'
  end
  return msg
end

--- Whether vim.notify is Neovim's own (no notification plugin replaced it).
local function builtin_notify()
  local info = debug.getinfo(vim.notify, 'S')
  return info ~= nil and info.source:find('vim/_editor.lua', 1, true) ~= nil
end

local HIGHLIGHTS = {
  [vim.log.levels.ERROR] = 'ErrorMsg',
  [vim.log.levels.WARN] = 'WarningMsg',
}

--- vim.notify, one line, from its own event-loop turn: two messages in one turn make Neovim
--- ask "Press ENTER" (measured). Neovim's own vim.notify writes an error with
--- nvim_err_writeln, and a second error while the first is shown asks "Press ENTER" too
--- (measured: two failed jobs in a row); so with it, errors are echoed in ErrorMsg instead.
--- @param msg string
--- @param level integer?
function M.notify(msg, level)
  level = level or vim.log.levels.INFO
  vim.schedule(function()
    local line = one_line(msg)
    if line ~= msg and not vim.tbl_contains(M.messages, msg) then
      -- Cut to fit the screen: kept whole for :FasteditStatus.
      M.remember(msg)
    end
    if builtin_notify() then
      vim.api.nvim_echo({ { line, HIGHLIGHTS[level] } }, true, {})
    else
      vim.notify(line, level, { title = 'fastedit' })
    end
  end)
end

--- LSP MessageType -> vim.log.levels.
local LEVELS = {
  [1] = vim.log.levels.ERROR,
  [2] = vim.log.levels.WARN,
  [3] = vim.log.levels.INFO,
  [4] = vim.log.levels.DEBUG,
}

--- Keep `message` whole among the last ten for :FasteditStatus.
--- @param message string
function M.remember(message)
  table.insert(M.messages, message)
  if #M.messages > 10 then
    table.remove(M.messages, 1)
  end
end

--- The last messages, whole (the echo area shows one line of each): the server's, and the
--- plugin's own that were cut to fit the screen.
--- @type string[]
M.messages = {}

--- The `window/showMessage` handler of the fastedit client. Neovim 0.11's own handler echoes
--- the message with a line break after it, so every message stopped at "Press ENTER" (the
--- one-time "using the offline engine" notice on a first action): here it is one line through
--- vim.notify, like the plugin's own messages; :FasteditStatus lists the last ones whole.
--- @param params lsp.ShowMessageParams
function M.show_message(_, params, _)
  if type(params) ~= 'table' or type(params.message) ~= 'string' then
    return vim.NIL
  end
  M.remember(params.message)
  local message = params.message
  if not vim.startswith(message, 'fastedit') then
    message = 'fastedit: ' .. message
  end
  M.notify(message, LEVELS[params.type] or vim.log.levels.INFO)
  return vim.NIL
end

--- Why a job made no edit: the last part of its reason (the route comes first, and a long
--- reason is cut at the screen's width).
--- @param job table a job record
--- @return string?
local function why_nothing(job)
  local metrics = job.metrics or {}
  if job.state ~= 'done' or (metrics.edits or 0) ~= 0 or type(job.reason) ~= 'string' then
    return nil
  end
  local parts = vim.split(job.reason, '; ', { plain = true })
  return parts[#parts]
end

--- What happened on the job's way after routing chose it: a failover, a draft asked again, an
--- escalation, a note (the reason's steps after the first, which is routing's own). Nil when
--- there is nothing more than the route.
--- @param job table a job record
--- @return string?
local function the_way(job)
  if type(job.reason) ~= 'string' then
    return nil
  end
  local parts = vim.split(job.reason, '; ', { plain = true })
  if #parts < 2 then
    return nil
  end
  return table.concat(parts, '; ', 2)
end

--- @param job table a job record
--- @return string
local function job_summary(job)
  local parts = { 'fastedit: ' .. (TITLES[job.kind] or job.kind or 'job') .. ' ' .. job.state }
  local metrics = job.metrics or {}
  if job.state == 'done' and (metrics.edits or 0) == 0 then
    parts[1] = parts[1] .. ' (no suggestion)'
  end
  if job.model and job.model ~= vim.NIL and job.route ~= 'local' then
    parts[#parts + 1] = job.model
  end
  parts[#parts + 1] = M.figures(job)
  local ok = type(job.verification) == 'table' and job.verification.ok
  if ok == false and job.state == 'done' and (metrics.edits or 0) > 0 then
    -- The draft landed flagged (the server marks its lines with a diagnostic): said first, as
    -- the message is cut to one line.
    parts[1] = 'fastedit: unverified: ' .. (TITLES[job.kind] or job.kind or 'job') .. ' done'
    parts[#parts + 1] = tostring(job.verification.details or 'verification failed')
  elseif ok == false then
    parts[#parts + 1] = 'verification failed'
  end
  if job.error and job.error ~= vim.NIL then
    parts[#parts + 1] = tostring(job.error)
  elseif why_nothing(job) then
    parts[#parts + 1] = why_nothing(job)
  elseif the_way(job) then
    -- Why the figures are those of another route, or why it took long (a failover).
    parts[#parts + 1] = the_way(job)
  end
  return table.concat(parts, ' · ')
end

--- Forget the jobs of a previous server (job ids restart with each server).
--- @param client_id integer the new client
function M.forget_jobs(client_id)
  M.state.client_id = client_id
  M.state.jobs, M.state.current, M.state.last_started = {}, nil, nil
  undo.running = {}
  notified = {}
end

--- Take one job record (from a notification or a fastedit.wait/status reply).
--- @param job table
function M.update_job(job)
  if type(job) ~= 'table' or not job.jobId then
    return
  end
  M.state.jobs[job.jobId] = job
  M.state.current = job.jobId
  local uri = job.uri
  if uri then
    undo.running[uri] = undo.running[uri] or {}
    undo.running[uri][job.jobId] = (job.state == 'running') or nil
    if next(undo.running[uri]) == nil then
      undo.running[uri] = nil
    end
  end
  if FINISHED[job.state] and uri and undo.running[uri] == nil then
    undo.settle(uri)
  end
  if FINISHED[job.state] and not notified[job.jobId] then
    notified[job.jobId] = true
    -- A failed job was already reported by the server (window/showMessage): one message only.
    if M.options.notify and job.state ~= 'failed' then
      local warn = job.state == 'cancelled' and job.error and job.error ~= vim.NIL
      M.notify(job_summary(job), warn and vim.log.levels.WARN or vim.log.levels.INFO)
    end
  end
end

--- The `fastedit/status` notification handler: `{mode, job?}`.
--- @param params {mode: string, job: table?}
function M.handler(_, params, _)
  if type(params) ~= 'table' then
    return
  end
  if params.mode then
    M.state.mode = params.mode
  end
  M.update_job(params.job)
  vim.schedule(function()
    vim.api.nvim_exec_autocmds('User', { pattern = 'FasteditStatus', modeline = false })
    vim.cmd.redrawstatus({ bang = true })
  end)
end

--- Take a `fastedit.status` reply.
--- @param reply table
function M.take_status(reply)
  if type(reply) ~= 'table' then
    return
  end
  M.state.mode = reply.mode or M.state.mode
  M.state.profiles = reply.profiles or M.state.profiles
  -- The reply lists the newest job last; keep the current one pointing at the newest.
  for _, job in ipairs(reply.jobs or {}) do
    notified[job.jobId] = notified[job.jobId] or FINISHED[job.state] or nil
    M.update_job(job)
  end
end

--- `⚡ fast · <model> · 1,840 tok/s · first token 120 ms`: the mode, the model answering (or about
--- to), and the figures of the running job (or of the last one; `offline · 12 ms` for the offline
--- engine). Empty until the server has spoken.
--- @return string
function M.statusline()
  local mode = M.state.mode
  if not mode then
    return ''
  end
  local parts = { (ICONS[mode] and (ICONS[mode] .. ' ') or '') .. mode }
  local job = M.state.current and M.state.jobs[M.state.current] or nil
  local model
  if job and job.state == 'running' and job.model and job.model ~= vim.NIL and job.model ~= '' then
    model = job.model
  elseif mode ~= 'auto' and type(M.state.profiles[mode]) == 'table' then
    model = M.state.profiles[mode].model
  elseif job and job.model and job.model ~= vim.NIL and job.model ~= '' then
    model = job.model
  end
  if model == vim.NIL then
    model = nil
  end
  -- The offline engine's model is "offline": its figures say so.
  if type(model) == 'string' and not (job and job.route == 'local' and model == 'offline') then
    parts[#parts + 1] = model
  end
  local metrics = job and job.metrics or {}
  -- A finished job's figures only beside its own model: after a mode change they were measured
  -- on another model and would read as this one's.
  local own = job and (job.state == 'running' or model == nil or job.model == model)
  parts[#parts + 1] = own and M.figures(job) or nil
  if
    own
    and job.state == 'done'
    and type(job.verification) == 'table'
    and job.verification.ok == false
    and (metrics.edits or 0) > 0
  then
    parts[#parts + 1] = 'unverified'
  end
  return table.concat(parts, ' · ')
end

--- What a mode change says: the mode and its model, never a job's figures (they were measured
--- in the mode before).
--- @param mode string
--- @return string
function M.mode_message(mode)
  local text = (ICONS[mode] and (ICONS[mode] .. ' ') or '') .. mode .. ' mode'
  local profile = M.state.profiles[mode]
  if type(profile) == 'table' and type(profile.model) == 'string' and profile.model ~= '' then
    text = text .. ' · ' .. profile.model
  end
  return text
end

--- Lines for :FasteditStatus.
--- @param reply table a fastedit.status reply
--- @return string[]
function M.report(reply)
  local lines = {
    'fastedit-lsp ' .. tostring(reply.version or '?'),
    'mode: ' .. tostring(reply.mode),
    '',
    'profiles:',
  }
  for _, name in ipairs({ 'fast', 'standard' }) do
    local p = (reply.profiles or {})[name]
    if type(p) == 'table' then
      local line = string.format('  %-9s %s · %s', name, tostring(p.provider), tostring(p.model))
      if type(p.baseUrl) == 'string' then
        line = line .. ' · ' .. p.baseUrl
      end
      if p.note and p.note ~= vim.NIL then
        line = line .. ' (' .. tostring(p.note) .. ')'
      end
      lines[#lines + 1] = line
    end
  end
  local jobs = reply.jobs or {}
  lines[#lines + 1] = ''
  lines[#lines + 1] = 'jobs (newest first):'
  for i = #jobs, math.max(1, #jobs - 19), -1 do
    local j = jobs[i]
    local m = j.metrics or {}
    lines[#lines + 1] = string.format(
      '  %s %-13s %-9s %-8s %s · %s edits · %s%s',
      j.jobId,
      tostring(j.kind),
      tostring(j.state),
      tostring(j.route),
      tostring(j.model),
      tostring(m.edits),
      M.figures(j) or '-',
      (j.error and j.error ~= vim.NIL) and (' · ' .. tostring(j.error))
        or (why_nothing(j) and (' · ' .. why_nothing(j)))
        or ''
    )
    -- The whole reason: the route and why, and everything on the way (failover, asked again).
    if type(j.reason) == 'string' and j.reason ~= '' then
      lines[#lines + 1] = '      why: ' .. j.reason
    end
    for _, a in ipairs(type(j.attempts) == 'table' and j.attempts or {}) do
      if type(a) == 'table' and type(a.error) == 'string' then
        lines[#lines + 1] = string.format('      %s (%s) failed: %s', tostring(a.route), tostring(a.model), a.error)
      end
    end
  end
  if #jobs == 0 then
    lines[#lines + 1] = '  (none yet)'
  end
  if #M.messages > 0 then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'the last messages, whole (newest last):'
    for _, message in ipairs(M.messages) do
      lines[#lines + 1] = '  ' .. message:gsub('%s*\n%s*', ' ')
    end
  end
  return lines
end

return M
