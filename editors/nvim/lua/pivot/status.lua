-- The session shown in the statusline, from the server's pivot/sessionChanged notification.
local M = {}

-- Last {index, count} per client id.
M.sessions = {}
M.last = nil
-- What the last conversation.info-shaped answer said: kind ('none', 'memorycode',
-- 'workspace pivots', 'convcode') and the ConvCodeWorld task.
M.kind = nil
M.task = nil

--- Remember the kind of conversation from any command returning info.
function M.on_info(info)
  if type(info) ~= 'table' or type(info.kind) ~= 'string' then
    return
  end
  M.kind = info.kind
  M.task = (type(info.convcode) == 'table' and info.convcode.task) or nil
  if type(info.index) == 'number' and type(info.count) == 'number' then
    M.last = { index = info.index, count = info.count }
  end
  vim.schedule(function()
    vim.cmd('redrawstatus!')
  end)
end

--- Handler of pivot/sessionChanged {index, count}.
function M.on_session_changed(_, result, ctx)
  if type(result) ~= 'table' or type(result.index) ~= 'number' or type(result.count) ~= 'number' then
    return
  end
  local s = { index = result.index, count = result.count }
  if ctx and ctx.client_id then
    M.sessions[ctx.client_id] = s
  end
  M.last = s
  vim.schedule(function()
    vim.cmd('redrawstatus!')
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'PivotSessionChanged', data = s })
  end)
end

--- "session k/N" (k is the 0-based index, as in the data files and :PivotGoto),
--- "HumanEval/2 turn k/N" for a ConvCodeWorld task, or '' with no conversation (nor
--- workspace pivots) and before the server has said anything.
--- For 'statusline': %{v:lua.require'pivot'.statusline()}
function M.text(s)
  s = s or M.last
  if not s or M.kind == nil or M.kind == 'none' then
    return ''
  end
  if M.kind == 'convcode' and M.task then
    return string.format('%s turn %d/%d', M.task, s.index, s.count - 1)
  end
  return string.format('session %d/%d', s.index, s.count)
end

function M.forget(client_id)
  M.sessions[client_id] = nil
  if next(M.sessions) == nil then
    M.last = nil
    M.kind = nil
    M.task = nil
  end
end

return M
