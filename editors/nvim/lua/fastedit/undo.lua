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
  vim.api.nvim_buf_call(bufnr, function()
    local untouched = prev ~= nil and prev.tick == vim.api.nvim_buf_get_changedtick(bufnr)
    if key ~= '' and untouched and prev.key == key then
      pcall(vim.cmd.undojoin) -- E790 right after an undo: then it is a new step anyway
    else
      close_undo_block()
    end
    ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, encoding)
    close_undo_block()
  end)
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
end

return M
