-- Show a proposed edit in a buffer with extmarks, without changing the text: the replaced text
-- highlighted, the new text as inline virtual text where it would go, its further lines as
-- virtual lines below. Shared by next-edit suggestions (fastedit.next_edit) and ghost-text
-- completions (fastedit.ghost_text): a completion is the same picture with nothing replaced.

local M = {}

--- Draw `text` replacing [(srow, scol), (erow, ecol)) of `bufnr` (0-based rows, byte columns)
--- in namespace `ns`, after clearing it.
--- @param bufnr integer
--- @param ns integer
--- @param srow integer
--- @param scol integer
--- @param erow integer
--- @param ecol integer
--- @param text string the new text ('\n' between lines)
--- @param hl {add: string, delete: string?} highlight groups of the new and the replaced text
--- @param hint string? shown at the end of the edit's line (e.g. the key that accepts it)
function M.edit(bufnr, ns, srow, scol, erow, ecol, text, hl, hint)
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  if hl.delete and (srow ~= erow or scol ~= ecol) then
    vim.api.nvim_buf_set_extmark(bufnr, ns, srow, scol, {
      end_row = erow,
      end_col = ecol,
      hl_group = hl.delete,
    })
  end
  local lines = vim.split(text, '\n', { plain = true })
  local opts = { virt_text_pos = 'inline' }
  if lines[1] ~= '' then
    opts.virt_text = { { lines[1], hl.add } }
  end
  if #lines > 1 then
    opts.virt_lines = {}
    for i = 2, #lines do
      table.insert(opts.virt_lines, { { lines[i], hl.add } })
    end
  end
  if opts.virt_text or opts.virt_lines then
    vim.api.nvim_buf_set_extmark(bufnr, ns, erow, ecol, opts)
  end
  if hint then
    vim.api.nvim_buf_set_extmark(bufnr, ns, erow, 0, {
      virt_text = { { '  ' .. hint, 'Comment' } },
      virt_text_pos = 'eol',
    })
  end
end

return M
