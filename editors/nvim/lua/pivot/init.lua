-- Pivot LSP for Neovim: starts pivot-lsp for Python buffers (vim.lsp.config/enable on 0.11+,
-- vim.lsp.start or vim.lsp.start_client before), the :Pivot* commands over the server's
-- workspace/executeCommand commands, and a statusline component.
local config = require('pivot.config')
local status = require('pivot.status')

local M = {}

local has_011 = vim.fn.has('nvim-0.11') == 1
local uv = vim.uv or vim.loop

-- Fallback path: client ids we started, by root directory.
local started = {}

local function notify(msg, level)
  vim.notify('pivot: ' .. msg, level or vim.log.levels.INFO)
end
M.notify = notify

-- Why the server cannot run (set by setup when the binary is missing), shown by commands.
M.unavailable = nil

--- A server error for people: without the server command's name (the user typed a :Pivot
--- command) and without the JSON shape of its arguments.
function M.clean_error(msg)
  msg = tostring(msg or '')
  msg = msg:gsub('^pivot%.[%w%.]+: ', '')
  msg = msg:gsub(' %(arguments: .*%)$', '')
  return msg
end

--- The directory above `path` holding one of the root markers, else the cwd.
function M.root_dir(path)
  local dir = (path and path ~= '') and vim.fn.fnamemodify(path, ':p:h') or vim.fn.getcwd()
  while dir and dir ~= '' do
    for _, marker in ipairs(config.options.root_markers) do
      if uv.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function stopped(c)
  if has_011 then
    return c:is_stopped()
  end
  return c.is_stopped()
end

local function get_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = 'pivot_lsp' })
  end
  local out = {}
  for _, id in pairs(started) do
    local c = vim.lsp.get_client_by_id(id)
    if c and not stopped(c) then
      table.insert(out, c)
    end
  end
  return out
end

--- Start (or reuse) the server for `bufnr` on versions without vim.lsp.enable.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local root = M.root_dir(vim.api.nvim_buf_get_name(bufnr))
  local cfg = config.client_config()
  cfg.root_markers = nil
  cfg.filetypes = nil
  cfg.root_dir = root
  if vim.lsp.start then
    -- 0.8 to 0.10: reuses a client of the same name and root.
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = started[root]
  local c = id and vim.lsp.get_client_by_id(id)
  if not c or stopped(c) then
    id = vim.lsp.start_client(cfg)
    if not id then
      return nil
    end
    started[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The running pivot client of the current buffer, else any running one (one is started
--- for the current buffer if there is none): with two roots open, a command goes to the
--- server of the buffer it is given in.
function M.client()
  local clients = get_clients()
  for _, c in ipairs(clients) do
    if vim.lsp.buf_is_attached(0, c.id) then
      return c
    end
  end
  if #clients == 0 then
    if has_011 then
      local cfg = vim.tbl_extend('force', {}, vim.lsp.config.pivot_lsp or config.client_config())
      cfg.root_dir = M.root_dir(vim.api.nvim_buf_get_name(0))
      local id = vim.lsp.start(cfg, { bufnr = vim.api.nvim_get_current_buf() })
      return id and vim.lsp.get_client_by_id(id)
    end
    local id = M.start(vim.api.nvim_get_current_buf())
    return id and vim.lsp.get_client_by_id(id)
  end
  return clients[1]
end

local function request(client, method, params, handler)
  if has_011 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

local progress_seq = 0
-- Titles of our progress tokens (the end report may arrive after the reply).
local titles = {}
-- The token of the long command running now (for :PivotCancel), and its title.
M.running = nil

--- Run a server command; `cb(result)` on success, errors are shown. `arg` is the one
--- argument object, or nil for none. `opts.progress` (a title): the command reports
--- `$/progress` on a token of ours, echoed, and :PivotCancel cancels it.
function M.exec(command, arg, cb, opts)
  opts = opts or {}
  if M.unavailable then
    notify(M.unavailable, vim.log.levels.ERROR)
    return
  end
  local client = M.client()
  if not client then
    notify('the server is not running (is `' .. config.options.cmd[1] .. '` installed?)', vim.log.levels.ERROR)
    return
  end
  -- A client just started is still initializing.
  vim.wait(10000, function()
    return client.initialized == true or stopped(client)
  end, 20)
  local params = { command = command }
  if arg ~= nil then
    params.arguments = { arg }
  end
  local token
  if opts.progress then
    progress_seq = progress_seq + 1
    token = 'pivot-nvim-' .. progress_seq
    params.workDoneToken = token
    M.running = { token = token, title = opts.progress, client = client }
    titles[token] = opts.progress
    vim.api.nvim_echo({ { 'pivot: ' .. opts.progress .. '...' } }, false, {})
  end
  local _, request_id = request(client, 'workspace/executeCommand', params, function(err, result)
    if token and M.running and M.running.token == token then
      M.running = nil
      -- Clears the "running..." line.
      vim.api.nvim_echo({ { '' } }, false, {})
    end
    if err then
      notify((opts.name and (opts.name .. ': ') or '') .. M.clean_error(err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if cb then
      cb(result)
    end
  end)
  if token and M.running and M.running.token == token then
    M.running.request_id = request_id
  end
end

--- $/progress of our own tokens on the command line (the default handler still runs).
function M.on_progress(_, result, _)
  if type(result) ~= 'table' or not titles[result.token] then
    return
  end
  local v = result.value or {}
  local pct = type(v.percentage) == 'number' and string.format(' %d%%', v.percentage) or ''
  local msg = type(v.message) == 'string' and (': ' .. v.message) or ''
  vim.schedule(function()
    vim.api.nvim_echo({ { 'pivot: ' .. titles[result.token] .. pct .. msg } }, false, {})
  end)
end

--- Cancel the long command running now (window/workDoneProgress/cancel on its token).
function M.cancel()
  local r = M.running
  if not r then
    notify('nothing to cancel')
    return
  end
  -- The server stops its work where it can; $/cancelRequest ends the request either way.
  if has_011 then
    r.client:notify('window/workDoneProgress/cancel', { token = r.token })
    if r.request_id then
      r.client:cancel_request(r.request_id)
    end
  else
    r.client.notify('window/workDoneProgress/cancel', { token = r.token })
    if r.request_id then
      r.client.cancel_request(r.request_id)
    end
  end
  -- Neovim drops the reply of a request it cancelled: the command ends here.
  M.running = nil
  notify(r.title .. ': cancelled')
end

--- Show markdown in a scratch buffer in a split.
function M.show(name, text)
  -- The same report again replaces the old one (a buffer name is unique).
  local old = vim.fn.bufnr('^pivot://' .. name .. '$')
  if old ~= -1 then
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, 'pivot://' .. name)
  vim.cmd('botright split')
  vim.api.nvim_win_set_buf(0, buf)
  -- Back to the code: the next :Pivot command acts on it, not on the report.
  vim.cmd('wincmd p')
  return buf
end

--- Text of the active pivots (pivot.pivots.active result).
function M.format_active(a)
  local lines = { string.format('# Active pivots at session %d of %d', a.index, a.count), '' }
  if #a.pivots == 0 then
    table.insert(lines, 'No pivot is active.')
  end
  for _, p in ipairs(a.pivots) do
    local text = (p.text and p.text ~= '') and string.format('"%s" ', p.text) or ''
    table.insert(lines, string.format('- %s (version %d, given at session %d, %s): %s(%s: %s)',
      p.id, p.version, p.session, p.origin, text, p.kind, p.description))
  end
  return table.concat(lines, '\n')
end

local function fmt(v)
  return type(v) == 'number' and string.format('%.4f', v) or 'n/a'
end

--- Text of pivot.session.timeline's result: one line per session (its commit when the
--- sessions come from history), its pivot changes below it.
function M.format_timeline(t)
  local file = type(t.file) == 'string' and t.file or 'pivots.toml'
  local what = ({ history = 'History of ' .. file, convcode = 'Turns' })[t.source] or 'Sessions'
  local lines = { string.format('# %s: %d session(s), at session %d', what, t.count, t.index), '' }
  for _, s in ipairs(t.sessions or {}) do
    local from = ''
    if type(s.commit) == 'table' then
      local date = os.date('!%Y-%m-%d %H:%M UTC', s.commit.time)
      from = string.format(' — commit %s %s (%s)', s.commit.short, s.commit.summary, date)
    elseif s.uncommitted then
      from = ' — uncommitted pivots.toml'
    end
    table.insert(lines, string.format('- Session %d%s%s', s.index, s.index == t.index and ' (current)' or '', from))
    for _, c in ipairs(s.changes or {}) do
      local text = (c.text ~= nil and c.text ~= '') and (': "' .. c.text .. '"') or ''
      table.insert(lines, string.format('  - %s %s (version %d)%s', c.change, c.id, c.version, text))
    end
  end
  return table.concat(lines, '\n')
end

--- Text of pivot.outputs.check's result: the scores per session.
function M.format_outputs(r)
  local lines = { '# Model outputs: ' .. r.output, '', 'Dialogue: ' .. r.dialogue, '' }
  local metrics = vim.tbl_keys(r.scores)
  table.sort(metrics)
  -- "session" is also a metric: the columns say "score" so no two headers are equal.
  table.insert(lines, '| session | ' .. table.concat(vim.tbl_map(function(m) return m .. ' score' end, metrics), ' | ') .. ' |')
  table.insert(lines, '|---|' .. string.rep('---|', #metrics))
  local n = 0
  for _, m in ipairs(metrics) do
    n = math.max(n, #r.scores[m])
  end
  for k = 1, n do
    local row = {}
    for _, m in ipairs(metrics) do
      table.insert(row, fmt(r.scores[m][k]))
    end
    table.insert(lines, string.format('| %d | %s |', k - 1, table.concat(row, ' | ')))
  end
  table.insert(lines, '')
  for _, a in ipairs(r.answers) do
    local err = (type(a.syntax_error) == 'string') and (' (syntax error: ' .. a.syntax_error .. ')') or ''
    table.insert(lines, string.format('- session %d, %s answer %d: score %s%s', a.session, a.kind, a.answer, fmt(a.score), err))
    for _, v in ipairs(a.verdicts) do
      table.insert(lines, string.format('  - %s (%s): %s', v.pivot, v.kind, v.verdict))
    end
  end
  return table.concat(lines, '\n')
end

--- Text of pivot.evaluate.memorycode's result: the macro scores as a table.
function M.format_evaluation(r, dataset, outputs)
  local lines = { '# MemoryCode evaluation', '', 'Dataset: ' .. dataset, 'Outputs: ' .. outputs, '',
    '| metric | score |', '|---|---|' }
  local metrics = vim.tbl_keys(r.macro or {})
  table.sort(metrics)
  for _, m in ipairs(metrics) do
    table.insert(lines, string.format('| %s | %s |', m, fmt(r.macro[m])))
  end
  table.insert(lines, '')
  table.insert(lines, string.format('%d dialogues scored, %d skipped.', vim.tbl_count(r.dialogues or {}), #(r.skipped or {})))
  for _, w in ipairs(r.warnings or {}) do
    table.insert(lines, '- warning: ' .. (type(w) == 'string' and w or vim.fn.json_encode(w)))
  end
  return table.concat(lines, '\n')
end

local function info_line(info)
  status.on_info(info)
  if info.kind == 'none' then
    return 'no conversation open'
  end
  if info.kind == 'convcode' and type(info.convcode) == 'table' then
    local c = info.convcode
    return string.format('%s of %s (%s): turn %d of turns 0 to %d', c.task, c.model, c.label, info.index, info.count - 1)
  end
  local src = info.source ~= vim.NIL and info.source or info.kind
  return string.format('%s: session %d of %d, %d active pivot(s)', src, info.index, info.count, info.active)
end
M.info_line = info_line

--- After a move: say so when there was nowhere to go.
local function moved(edge)
  return function(info)
    status.on_info(info)
    if info.moved == false then
      notify('already at the ' .. edge .. ' session')
    end
  end
end

local function abs(path)
  return vim.fn.fnamemodify(vim.fn.expand(path), ':p')
end

--- Shows a file with the system opener: config `open`, else vim.ui.open (0.10+), else xdg-open.
function M.open_external(path)
  local opener = config.options.open
  if type(opener) == 'function' then
    return opener(path)
  end
  if vim.ui.open then
    local _, err = vim.ui.open(path)
    if err then
      notify('cannot open ' .. path .. ': ' .. err, vim.log.levels.ERROR)
    end
    return
  end
  if vim.fn.executable('xdg-open') ~= 1 then
    notify('the report is at ' .. path .. ' (no xdg-open to show it)', vim.log.levels.WARN)
    return
  end
  vim.fn.jobstart({ 'xdg-open', path }, { detach = true })
end

M.commands = {
  PivotReport = {
    server = 'pivot.report.open',
    nargs = '+', complete = 'file', desc = 'HTML report of score JSON files: PivotReport {scores.json...} (opens .pivot/report.html)',
    fn = function(o)
      local inputs = vim.tbl_map(abs, vim.split(vim.trim(o.args), '%s+'))
      M.exec('pivot.report.open', { inputs = inputs }, function(r)
        notify('report of ' .. r.inputs .. ' score file(s): ' .. r.path)
        M.open_external(r.path)
      end, { name = 'PivotReport' })
    end,
  },
  PivotOpen = {
    server = 'pivot.conversation.open',
    nargs = 1, complete = 'file', desc = 'Open a MemoryCode dialogue (dialogue_N.json)',
    fn = function(o)
      M.exec('pivot.conversation.open', { path = abs(o.args) }, function(info)
        for _, w in ipairs(info.warnings or {}) do
          notify(w, vim.log.levels.WARN)
        end
        notify(info_line(info))
      end)
    end,
  },
  PivotClose = {
    server = 'pivot.conversation.close',
    nargs = 0, desc = 'Close the conversation',
    fn = function() M.exec('pivot.conversation.close', nil, function(info) notify(info_line(info)) end) end,
  },
  PivotInfo = {
    server = 'pivot.conversation.info',
    nargs = 0, desc = 'The conversation, session and pivot counts',
    fn = function() M.exec('pivot.conversation.info', nil, function(info) notify(info_line(info)) end) end,
  },
  PivotNext = {
    server = 'pivot.session.next',
    nargs = 0, desc = 'Next session',
    fn = function() M.exec('pivot.session.next', nil, moved('last'), { name = 'PivotNext' }) end,
  },
  PivotPrev = {
    server = 'pivot.session.previous',
    nargs = 0, desc = 'Previous session',
    fn = function() M.exec('pivot.session.previous', nil, moved('first'), { name = 'PivotPrev' }) end,
  },
  PivotGoto = {
    server = 'pivot.session.goto',
    nargs = 1, desc = 'Go to session k (0-based)',
    fn = function(o)
      local k = tonumber(o.args)
      if not k or k < 0 or k ~= math.floor(k) then
        notify('PivotGoto takes a session index: a whole number from 0', vim.log.levels.ERROR)
        return
      end
      M.exec('pivot.session.goto', { index = k }, status.on_info, { name = 'PivotGoto' })
    end,
  },
  PivotActive = {
    server = 'pivot.pivots.active',
    nargs = 0, desc = 'The pivots active at this session',
    fn = function() M.exec('pivot.pivots.active', nil, function(a) M.show('active', M.format_active(a)) end) end,
  },
  PivotTimeline = {
    server = 'pivot.session.timeline',
    nargs = 0, desc = 'Every session: its commit (with the history option) and pivot changes',
    fn = function() M.exec('pivot.session.timeline', nil, function(t) M.show('timeline', M.format_timeline(t)) end) end,
  },
  PivotTranscript = {
    server = 'pivot.session.transcript',
    nargs = '?', desc = "A session's transcript (default: the current one)",
    fn = function(o)
      local arg = nil
      if o.args ~= '' then
        arg = { index = tonumber(o.args) }
      end
      M.exec('pivot.session.transcript', arg, function(t) M.show('transcript-' .. t.index, t.markdown) end)
    end,
  },
  PivotCheckOutputs = {
    server = 'pivot.outputs.check',
    nargs = 1, complete = 'file', desc = "Score a model's output_N.json for the open conversation",
    fn = function(o)
      M.exec('pivot.outputs.check', { path = abs(o.args) }, function(r) M.show('outputs', M.format_outputs(r)) end)
    end,
  },
  PivotEvaluate = {
    server = 'pivot.evaluate.memorycode',
    nargs = '+', complete = 'dir', desc = 'MemoryCode evaluation: PivotEvaluate {dataset} {outputs}',
    fn = function(o)
      local a = vim.split(o.args, '%s+')
      if #a ~= 2 then
        notify('PivotEvaluate takes two folders: {dataset} {outputs}', vim.log.levels.ERROR)
        return
      end
      local dataset, outputs = abs(a[1]), abs(a[2])
      M.exec('pivot.evaluate.memorycode', { dataset = dataset, outputs = outputs }, function(r)
        M.show('evaluation', M.format_evaluation(r, dataset, outputs))
      end, { progress = 'MemoryCode evaluation', name = 'PivotEvaluate' })
    end,
  },
  PivotGenerate = {
    server = 'pivot.memorycode.generate',
    nargs = 0, desc = 'Generate MemoryCode outputs for the open conversation (asks model, endpoint, folder)',
    fn = function()
      -- Model and endpoint default from setup's endpoint; the endpoint may also be a loopback
      -- script (canned replies, no key). Then the outputs check of what was written.
      local ep = config.options.endpoint or {}
      vim.ui.input({ prompt = 'Model: ', default = ep.model or '' }, function(model)
        if not model or model == '' then return end
        vim.ui.input({ prompt = 'Endpoint (base URL or loopback script): ', default = ep.base_url or '' }, function(endpoint)
          if not endpoint or endpoint == '' then return end
          vim.ui.input({ prompt = 'Outputs folder: ', default = vim.fn.getcwd() .. '/outputs' }, function(out)
            if not out or out == '' then return end
            local arg = { model = model, out = abs(out) }
            endpoint = vim.trim(endpoint)
            if endpoint:match('^[hH][tT][tT][pP][sS]?://') then
              arg.baseUrl = endpoint
              arg.apiKeyEnv = ep.api_key_env
            else
              arg.loopback = abs(endpoint)
            end
            M.exec('pivot.memorycode.generate', arg, function(g)
              M.exec('pivot.outputs.check', { path = g.output }, function(r) M.show('generated-' .. model, M.format_outputs(r)) end)
            end, { progress = 'MemoryCode generation', name = 'PivotGenerate' })
          end)
        end)
      end)
    end,
  },
  PivotInspect = {
    server = 'pivot.document.inspect',
    nargs = 0, desc = "The server's view of this buffer",
    fn = function()
      M.exec('pivot.document.inspect', { uri = vim.uri_from_bufnr(0) }, function(r)
        M.show('inspect', '```json\n' .. vim.fn.json_encode(r) .. '\n```')
      end, { name = 'PivotInspect' })
    end,
  },
  PivotAddPivot = {
    server = 'pivot.pivots.add',
    nargs = '+', desc = 'PivotAddPivot {id} {kind words...} = {rule as JSON}: a user pivot',
    fn = function(o)
      local id, kind, rule = o.args:match('^(%S+)%s+(.-)%s*=%s*(.+)$')
      if not id then
        notify('PivotAddPivot takes {id} {kind} = {rule}, e.g. PivotAddPivot team function = "^team_"', vim.log.levels.ERROR)
        return
      end
      local ok, decoded = pcall(vim.fn.json_decode, rule)
      M.exec('pivot.pivots.add', { id = id, kind = kind, rule = ok and decoded or rule }, function(a)
        notify(string.format('%s added: %d active pivot(s)', id, #a.pivots))
      end, { name = 'PivotAddPivot' })
    end,
  },
  PivotRemovePivot = {
    server = 'pivot.pivots.remove',
    nargs = 1, desc = 'Remove a user pivot by id',
    fn = function(o)
      M.exec('pivot.pivots.remove', { id = o.args }, function(a)
        notify(string.format('%s removed: %d active pivot(s)', o.args, #a.pivots))
      end, { name = 'PivotRemovePivot' })
    end,
  },
  PivotCancel = {
    nargs = 0, desc = 'Cancel the evaluation or test run in progress',
    fn = function() M.cancel() end,
  },
  PivotReload = {
    server = 'pivot.pivots.reload',
    nargs = 0, desc = 'Re-read pivots.toml',
    fn = function() M.exec('pivot.pivots.reload', nil, function(info) notify(info_line(info)) end) end,
  },
}

-- ConvCodeWorld: :PivotOpenResults, :PivotRunTests, :PivotFeedback, :PivotSubmit,
-- :PivotEvaluateConvCode.
for name, c in pairs(require('pivot.convcode').commands(M)) do
  M.commands[name] = c
end

--- The statusline component: "session k/N", "HumanEval/2 turn k/N", or '' with no conversation.
function M.statusline()
  return status.text()
end

function M.setup(opts)
  config.set(opts)
  for name, c in pairs(M.commands) do
    vim.api.nvim_create_user_command(name, c.fn, { nargs = c.nargs, complete = c.complete, desc = c.desc })
  end
  -- The server's "Run tests" code lens (vim.lsp.codelens.run) runs like :PivotRunTests.
  vim.lsp.commands['pivot.tests.run'] = function(command)
    require('pivot.convcode').run_tests(M, (command.arguments or {})[1] or {})
  end
  M.unavailable = nil
  -- 0.11+: what the user set with vim.lsp.config('pivot_lsp', {...}) before setup() stays
  -- theirs; setup() adds only the fields they did not set, and checks the cmd that results.
  local user = has_011 and config.user_fields(vim.lsp.config.pivot_lsp) or {}
  local ours = config.client_config()
  if user.cmd and not (opts and opts.cmd) then
    config.options.cmd = user.cmd
  end
  local cmd = config.options.cmd
  if type(cmd) == 'table' and vim.fn.executable(cmd[1]) ~= 1 then
    -- One message, and no client that would fail to spawn for every Python buffer.
    M.unavailable = 'the language server `' .. cmd[1] .. '` was not found: install it (docs/install.md) '
      .. 'or pass cmd = { "/path/to/pivot-lsp", "serve" } to setup() or vim.lsp.config(\'pivot_lsp\', ...)'
    vim.schedule(function()
      vim.notify('pivot: ' .. M.unavailable, vim.log.levels.ERROR)
    end)
    return
  end
  if has_011 then
    vim.lsp.config('pivot_lsp', vim.tbl_deep_extend('force', ours, user))
    config.applied = ours
    vim.lsp.enable('pivot_lsp')
  else
    local group = vim.api.nvim_create_augroup('pivot_lsp', { clear = true })
    vim.api.nvim_create_autocmd('FileType', {
      group = group,
      pattern = config.options.filetypes,
      callback = function(ev) M.start(ev.buf) end,
    })
    -- Buffers already open.
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(config.options.filetypes, vim.bo[buf].filetype) then
        M.start(buf)
      end
    end
  end
end

return M
