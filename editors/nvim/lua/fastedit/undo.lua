-- workspace/applyEdit for fastedit: a job's streamed edits become one undo step.
--
-- One undo step per job: if the user does not type during a stream, one `u` removes the whole
-- job; if they do, undo never removes their typing together with the job's text.
--
-- Measured on Neovim 0.11.4:
-- * every edit applied from a callback is its own undo block, so a stream of N edits needs N `u`;
--   `:undojoin` before an edit appends it to the previous block;
-- * `:undojoin` leaves the block open: a user typing in Insert mode right after the edit would be
--   appended to the job's block, so the block is closed again after every edit (setting
--   'undolevels' closes the undo block, `:help undo-break`), which also gives typing that follows
--   in the same Insert session a block of its own;
-- * an edit arriving while the user is in the middle of an Insert would join that Insert's block,
--   so the block is closed before every edit that is not joined;
-- * `:undojoin` right after an undo fails with E790: it is called under pcall.
-- `:undojoin` and the undo block belong to the current buffer: both run in `nvim_buf_call`.

local regions = require('fastedit.regions')

local M = {}

--- Per buffer: the changedtick right after fastedit's last edit and the running jobs it belonged to.
--- @type table<integer, {tick: integer, key: string}>
local last = {}

--- Running job ids per document URI, fed by `fastedit/status` (see fastedit.status).
--- @type table<string, table<string, true>>
M.running = {}

--- The running jobs on `uri` as one string: edits are joined only within the same set of jobs, so
--- a new job (or a revert, sent when no job runs) always starts a new undo step.
--- @param uri string
--- @return string
local function jobs_key(uri)
  local ids = vim.tbl_keys(M.running[uri] or {})
  table.sort(ids)
  return table.concat(ids, ',')
end

local function close_undo_block()
  -- `:help undo-break`: setting the global value closes the block, even to the same value.
  vim.go.undolevels = vim.go.undolevels
end

--- The documents an edit touches.
--- @param edit lsp.WorkspaceEdit
--- @return string[]
local function uris_of(edit)
  local seen, out = {}, {}
  for uri in pairs(edit.changes or {}) do
    if not seen[uri] then
      seen[uri] = true
      out[#out + 1] = uri
    end
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    local uri = change.textDocument and change.textDocument.uri or change.uri or change.oldUri
    if uri and not seen[uri] then
      seen[uri] = true
      out[#out + 1] = uri
    end
  end
  return out
end

--- Per buffer: the window whose cursor follows a running job's text, and an extmark where
--- fastedit last left that cursor (it moves with text inserted above it, as the cursor does).
--- Complete the rest and generate regex leave the cursor after the text they wrote, unless the
--- user moved it meanwhile.
--- @type table<integer, {win: integer, mark: integer}>
local follows = {}
local FOLLOW = vim.api.nvim_create_namespace('fastedit.follow')

local function unfollow(bufnr)
  local f = follows[bufnr]
  if f ~= nil then
    pcall(vim.api.nvim_buf_del_extmark, bufnr, FOLLOW, f.mark)
    follows[bufnr] = nil
  end
end

--- Make the cursor of the current window follow the text the job about to start on `bufnr` writes.
--- @param bufnr integer
function M.follow(bufnr)
  unfollow(bufnr)
  local win = vim.api.nvim_get_current_win()
  local row, col = unpack(vim.api.nvim_win_get_cursor(win))
  local mark = vim.api.nvim_buf_set_extmark(bufnr, FOLLOW, row - 1, col, { right_gravity = false })
  follows[bufnr] = { win = win, mark = mark }
end

--- The jobs on `uri` ended: stop following them; if the user's typing split their undo steps,
--- make their text the last step (fastedit.regions).
--- @param uri string
function M.settle(uri)
  local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
  if ok then
    unfollow(bufnr)
    regions.settle(bufnr)
    last[bufnr] = nil
  end
end

--- The text edits of `edit` for `uri`.
--- @return lsp.TextEdit[]
local function text_edits(edit, uri)
  local out = {}
  for _, e in ipairs((edit.changes or {})[uri] or {}) do
    out[#out + 1] = e
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.textDocument.uri == uri then
      vim.list_extend(out, change.edits or {})
    end
  end
  return out
end

--- Move the following cursor after the last text edit's text, if the user did not move it.
--- @param bufnr integer
--- @param edits lsp.TextEdit[]
--- @param encoding string
local function move_follower(bufnr, edits, encoding)
  local f = follows[bufnr]
  local e = edits[#edits]
  if f == nil or e == nil then
    return
  end
  if not vim.api.nvim_win_is_valid(f.win) or vim.api.nvim_win_get_buf(f.win) ~= bufnr then
    unfollow(bufnr)
    return
  end
  local now = vim.api.nvim_win_get_cursor(f.win)
  local at = vim.api.nvim_buf_get_extmark_by_id(bufnr, FOLLOW, f.mark, {})
  if at[1] ~= now[1] - 1 or at[2] ~= now[2] then
    unfollow(bufnr) -- the user moved it
    return
  end
  -- After the text, on its last line (not after its line break).
  local text = e.newText:gsub('\n$', '')
  local lines = vim.split(text, '\n', { plain = true })
  local row = e.range.start.line + #lines - 1
  local col = #lines[#lines]
  if #lines == 1 then
    local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
    local ok, start = pcall(vim.str_byteindex, line, encoding, e.range.start.character, false)
    col = col + (ok and start or 0)
  end
  if row < at[1] or (row == at[1] and col < at[2]) then
    return -- text above the cursor (an import): it stays where it is
  end
  -- In Normal mode the cursor sits on the last character of the text, in Insert mode after it.
  if col > 0 and vim.api.nvim_get_mode().mode:sub(1, 1) ~= 'i' then
    col = col - 1
  end
  if pcall(vim.api.nvim_win_set_cursor, f.win, { row + 1, col }) then
    local r, c = unpack(vim.api.nvim_win_get_cursor(f.win))
    vim.api.nvim_buf_set_extmark(bufnr, FOLLOW, r - 1, c, { id = f.mark, right_gravity = false })
  else
    unfollow(bufnr)
  end
end

--- Apply `edit`; join it to the previous undo block when that block is this job's last edit.
--- @param edit lsp.WorkspaceEdit
--- @param encoding string
--- @return boolean applied, string? failure
function M.apply(edit, encoding)
  local uris = uris_of(edit)
  local bufnr = #uris == 1 and vim.uri_to_bufnr(uris[1]) or nil
  if not bufnr or not vim.api.nvim_buf_is_loaded(bufnr) then
    -- Not (only) an open buffer: nothing to join with.
    local ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, encoding)
    return ok, (not ok) and tostring(err) or nil
  end
  local key = jobs_key(uris[1])
  local prev = last[bufnr]
  local ok, err
  local edits = text_edits(edit, uris[1])
  vim.api.nvim_buf_call(bufnr, function()
    local untouched = prev ~= nil and prev.tick == vim.api.nvim_buf_get_changedtick(bufnr)
    if key ~= '' then
      -- Split: this job's last edit is in the previous step, but the user changed the buffer since.
      regions.before(bufnr, edits, encoding, prev ~= nil and prev.key == key and not untouched)
    end
    if key ~= '' and untouched and prev.key == key then
      pcall(vim.cmd.undojoin) -- E790 right after an undo: then it is a new step anyway
    else
      close_undo_block()
    end
    ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, encoding)
    close_undo_block()
  end)
  if ok then
    if key ~= '' then
      regions.after(bufnr)
    end
    move_follower(bufnr, edits, encoding)
  end
  if ok and key ~= '' then
    last[bufnr] = { tick = vim.api.nvim_buf_get_changedtick(bufnr), key = key }
  else
    last[bufnr] = nil
  end
  return ok, (not ok) and tostring(err) or nil
end

--- The `workspace/applyEdit` handler of the fastedit client (Neovim's default, plus undo joining;
--- like the default it ignores `label`, which fastedit never sends while streaming).
--- @param params lsp.ApplyWorkspaceEditParams
--- @param ctx lsp.HandlerContext
--- @return lsp.ApplyWorkspaceEditResult
function M.handler(_, params, ctx)
  local client = assert(vim.lsp.get_client_by_id(ctx.client_id))
  local applied, failure = M.apply(params.edit, client.offset_encoding)
  return { applied = applied, failureReason = failure }
end

--- Forget a wiped buffer.
--- @param bufnr integer
function M.forget(bufnr)
  last[bufnr] = nil
  follows[bufnr] = nil -- its extmarks went with it
  regions.forget(bufnr)
end

return M
