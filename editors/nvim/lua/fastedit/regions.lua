-- A job's text as the last undo step, even when the user typed while it streamed.
--
-- A job's edits join into one undo step until the user changes the buffer; edits after that
-- start a new step (the user's typing must never be undone with job text, fastedit.undo). So
-- after typing during a stream, one `u` took back only the job's last part and left half code
-- (`def add(a: i`). Here each job edit's region is followed with extmarks, with the text it
-- replaced; when such a split job ends, its regions are set back to what they replaced and then
-- to its text again, as two undo steps after everything else: one `u` takes the whole job text
-- away and keeps the user's typing, and redo brings it back. If the user typed inside a region,
-- nothing is done (undo would take that typing too).

local M = {}

local NS = vim.api.nvim_create_namespace('fastedit.regions')

--- Per buffer: the running jobs' regions, and whether their steps were split by the user.
--- @type table<integer, {regions: {s: integer, e: integer, original: string[], text: string[]}[], split: boolean}>
local state = {}

local function before(a, b)
  return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2])
end

local function pos_of(bufnr, mark)
  local p = vim.api.nvim_buf_get_extmark_by_id(bufnr, NS, mark, {})
  return { p[1], p[2] }
end

local function text(bufnr, a, b)
  return vim.api.nvim_buf_get_text(bufnr, a[1], a[2], b[1], b[2], {})
end

--- `a` followed by `b`, as lines (the last of `a` and the first of `b` are one line).
local function join(a, b)
  local out = vim.list_slice(a, 1, #a - 1)
  out[#out + 1] = (a[#a] or '') .. (b[1] or '')
  vim.list_extend(out, b, 2)
  return out
end

local function byte_pos(bufnr, position, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, position.line, position.line + 1, false)[1] or ''
  local ok, col = pcall(vim.str_byteindex, line, encoding, position.character, false)
  return { position.line, ok and col or #line }
end

local function forget(bufnr)
  local s = state[bufnr]
  if s then
    pcall(vim.api.nvim_buf_clear_namespace, bufnr, NS, 0, -1)
  end
  state[bufnr] = nil
end

--- Before a job's `edits` apply to `bufnr`: grow its regions over them, keeping what they replace.
--- `split`: this edit starts a new undo step because the user changed the buffer since the last.
--- @param edits lsp.TextEdit[]
function M.before(bufnr, edits, encoding, split)
  local s = state[bufnr] or { regions = {}, split = false }
  state[bufnr] = s
  s.split = s.split or split
  for _, e in ipairs(edits) do
    local a = byte_pos(bufnr, e.range.start, encoding)
    local b = byte_pos(bufnr, e.range['end'], encoding)
    local merged, kept = {}, {}
    for _, r in ipairs(s.regions) do
      local rs, re = pos_of(bufnr, r.s), pos_of(bufnr, r.e)
      if before(re, a) or before(b, rs) then
        kept[#kept + 1] = r
      else
        merged[#merged + 1] = { r = r, s = rs, e = re }
      end
    end
    table.sort(merged, function(x, y)
      return before(x.s, y.s)
    end)
    local u0, u1 = a, b
    for _, m in ipairs(merged) do
      u0 = before(m.s, u0) and m.s or u0
      u1 = before(u1, m.e) and m.e or u1
    end
    -- What the union replaced: the buffer's text between regions, each region's own original.
    local original, at = { '' }, u0
    for _, m in ipairs(merged) do
      original = join(join(original, text(bufnr, at, m.s)), m.r.original)
      at = m.e
      vim.api.nvim_buf_del_extmark(bufnr, NS, m.r.s)
      vim.api.nvim_buf_del_extmark(bufnr, NS, m.r.e)
    end
    original = join(original, text(bufnr, at, u1))
    kept[#kept + 1] = {
      s = vim.api.nvim_buf_set_extmark(bufnr, NS, u0[1], u0[2], { right_gravity = false }),
      e = vim.api.nvim_buf_set_extmark(bufnr, NS, u1[1], u1[2], { right_gravity = true }),
      original = original,
      text = {},
    }
    s.regions = kept
  end
end

--- After a job's edit applied: the regions' text as the job left it.
function M.after(bufnr)
  local s = state[bufnr]
  for _, r in ipairs(s and s.regions or {}) do
    r.text = text(bufnr, pos_of(bufnr, r.s), pos_of(bufnr, r.e))
  end
end

local function close_undo_block()
  vim.go.undolevels = vim.go.undolevels
end

--- The end of `lines` put at `start`.
local function end_of(start, lines)
  if #lines == 1 then
    return { start[1], start[2] + #lines[1] }
  end
  return { start[1] + #lines - 1, #lines[#lines] }
end

--- The jobs on `bufnr` ended: if their steps were split, make their text the last undo step.
function M.settle(bufnr)
  local s = state[bufnr]
  if not (s and s.split and #s.regions > 0 and vim.api.nvim_buf_is_loaded(bufnr)) then
    forget(bufnr)
    return
  end
  local spans, typed_inside = {}, false
  for _, r in ipairs(s.regions) do
    local a = pos_of(bufnr, r.s)
    -- The user typed inside the job's text: undo would take that typing too.
    typed_inside = typed_inside or not vim.deep_equal(text(bufnr, a, pos_of(bufnr, r.e)), r.text)
    spans[#spans + 1] = { start = a, original = r.original, text = r.text }
  end
  forget(bufnr)
  if typed_inside then
    return
  end
  table.sort(spans, function(x, y)
    return before(y.start, x.start) -- from the end: earlier positions stay valid
  end)
  local windows = vim.tbl_filter(function(w)
    return vim.api.nvim_win_get_buf(w) == bufnr
  end, vim.api.nvim_list_wins())
  local cursors = vim.tbl_map(vim.api.nvim_win_get_cursor, windows)
  vim.api.nvim_buf_call(bufnr, function()
    close_undo_block()
    for i, span in ipairs(spans) do
      if i > 1 then
        pcall(vim.cmd.undojoin)
      end
      local b = end_of(span.start, span.text)
      vim.api.nvim_buf_set_text(bufnr, span.start[1], span.start[2], b[1], b[2], span.original)
    end
    close_undo_block()
    for i, span in ipairs(spans) do
      if i > 1 then
        pcall(vim.cmd.undojoin)
      end
      local b = end_of(span.start, span.original)
      vim.api.nvim_buf_set_text(bufnr, span.start[1], span.start[2], b[1], b[2], span.text)
    end
    close_undo_block()
  end)
  for i, w in ipairs(windows) do
    pcall(vim.api.nvim_win_set_cursor, w, cursors[i])
  end
end

--- Forget a wiped buffer.
M.forget = forget

return M
