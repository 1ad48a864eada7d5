-- window/showDocument for fastedit (the server shows a test module it created for "write
-- tests"): Neovim's own handler, except that a swap file for the document is an answer to the
-- server instead of a screenful of ATTENTION text and "Press ENTER".
--
-- Measured on Neovim 0.11.4: when another Neovim edits the file (or one crashed) the default
-- handler prints the whole ATTENTION message, fails with "Vim:E325: ATTENTION", leaves the
-- split it made for the document, and Neovim adds "SERVER_REQUEST_HANDLER_ERROR": a hit-enter
-- prompt. No SwapExists autocommand fires on that path (it loads the buffer with
-- nvim_win_set_buf), and swapfilelist() doubles the directory, so the swap file is looked for
-- here, before the document is opened; the server is told "E325" with the swap file's name (it
-- fails the job naming the file, and writes nothing).

local M = {}

--- The swap file Neovim would find for `fname` (and stop at with E325), if any.
--- @param fname string
--- @return string?
function M.swap_file(fname)
  local full = vim.fn.fnamemodify(fname, ':p')
  for dir in vim.gsplit(vim.o.directory, ',', { plain = true, trimempty = true }) do
    local base
    if vim.endswith(dir, '//') then
      base = vim.fn.expand(dir:sub(1, -2)) .. full:gsub('/', '%%')
    elseif dir == '.' then
      base = vim.fn.fnamemodify(full, ':h') .. '/.' .. vim.fn.fnamemodify(full, ':t')
    else
      base = vim.fn.expand(dir) .. '/' .. vim.fn.fnamemodify(full, ':t')
    end
    for _, suffix in ipairs({ '.swp', '.swo', '.swn' }) do
      local info = vim.fn.swapinfo(base .. suffix)
      if info.error == nil and info.pid ~= vim.fn.getpid() then
        return base .. suffix
      end
    end
  end
  return nil
end

--- @param err lsp.ResponseError?
--- @param params lsp.ShowDocumentParams
--- @param ctx lsp.HandlerContext
--- @return lsp.ShowDocumentResult?, lsp.ResponseError?
function M.handler(err, params, ctx)
  local default = vim.lsp.handlers['window/showDocument']
  if type(params) ~= 'table' or params.external or type(params.uri) ~= 'string' then
    return default(err, params, ctx)
  end
  local fname = vim.uri_to_fname(params.uri)
  local bufnr = vim.fn.bufnr(fname)
  local loaded = bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr)
  local swap = (vim.o.swapfile and not loaded) and M.swap_file(fname) or nil
  if swap then
    return nil,
      {
        code = vim.lsp.protocol.ErrorCodes.UnknownErrorCode,
        message = 'E325: ATTENTION: found a swap file by the name ' .. swap,
      }
  end
  return default(err, params, ctx)
end

return M
