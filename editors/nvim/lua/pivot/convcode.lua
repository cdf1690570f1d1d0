-- ConvCodeWorld from Neovim, over the server's commands: open a results folder as a
-- conversation of turns (choices offered with vim.ui.select from what is on disk), run the
-- task's tests on the buffer, ask for feedback, submit the buffer as the next turn, and
-- evaluate a results folder (Tables 1 and 2 in a scratch buffer).
local M = {}

M.TURN0_DIR = 'bigcodebench/sanitized_calibrated_samples/instruct'
M.LIVE_DIR = 'results/v0.3.6'
M.TURN0_SUFFIX = '-0-1-sanitized-calibrated.jsonl'

-- The nine configurations, in the order and with the labels of the paper's Table 1.
M.CONFIGS = {
  { 'CF', 'w/ CF' },
  { 'CF_EF_UNIT', 'w/ CF EF (partial TC)' },
  { 'CF_EF_FULL', 'w/ CF EF (full TC)' },
  { 'CF_SNF', 'w/ CF SNF' },
  { 'CF_EF_UNIT_SNF', 'w/ CF EF (partial TC) SNF' },
  { 'CF_EF_FULL_SNF', 'w/ CF EF (full TC) SNF' },
  { 'CF_SEF', 'w/ CF SEF' },
  { 'CF_EF_UNIT_SEF', 'w/ CF EF (partial TC) SEF' },
  { 'CF_EF_FULL_SEF', 'w/ CF EF (full TC) SEF' },
}

M.FEEDBACK_KINDS = { 'compilation', 'execution', 'execution-partial', 'novice', 'expert' }

local function readdir(dir)
  local ok, names = pcall(vim.fn.readdir, dir)
  return (ok and type(names) == 'table') and names or {}
end

local function ends_with(s, suffix)
  return suffix == '' or s:sub(-#suffix) == suffix
end

--- Models with turn-0 samples (file names write `/` as `--`), sorted; and each one's file.
function M.models(root)
  local out, files = {}, {}
  for _, f in ipairs(readdir(root .. '/' .. M.TURN0_DIR)) do
    if ends_with(f, M.TURN0_SUFFIX) then
      local stem = f:sub(1, #f - #M.TURN0_SUFFIX)
      local m = stem:match('^(.*)%-%-bigcodebench%-instruct%-%-openai$') or stem:match('^(.*)%-%-bigcodebench%-instruct%-%-vllm$')
      if m then
        local name = m:gsub('%-%-', '/')
        if not files[name] then
          table.insert(out, name)
          files[name] = f
        end
      end
    end
  end
  table.sort(out)
  return out, files
end

--- The configurations `model` has per-turn logs of, in Table 1's order: { {code, label} }.
function M.configs(root, model)
  local prefix = 'bigcodebench_' .. model:gsub('/', '_') .. '_'
  local codes = {}
  for _, f in ipairs(readdir(root .. '/' .. M.LIVE_DIR)) do
    if f:sub(1, #prefix) == prefix and ends_with(f, '.jsonl') then
      local rest = f:sub(#prefix + 1, #f - #'.jsonl'):gsub('_ITER=%d+$', ''):gsub('_by_.*$', '')
      codes[rest] = true
    end
  end
  local out = {}
  for _, c in ipairs(M.CONFIGS) do
    if codes[c[1]] then
      table.insert(out, c)
    end
  end
  return out
end

--- Task ids of a JSONL samples file, in file order, each once (bad lines skipped).
function M.tasks(path)
  local ok, lines = pcall(vim.fn.readfile, path)
  local out, seen = {}, {}
  for _, line in ipairs(ok and lines or {}) do
    local good, rec = pcall(vim.fn.json_decode, line)
    local id = good and type(rec) == 'table' and rec.task_id
    if type(id) == 'string' and not seen[id] then
      seen[id] = true
      table.insert(out, id)
    end
  end
  return out
end

--- Ask with vim.ui.select, skipped when there is one choice; `done(item)` unless cancelled.
local function choose(items, prompt, fmt, done)
  if #items == 1 then
    return done(items[1])
  end
  vim.ui.select(items, { prompt = prompt, format_item = fmt }, function(item)
    if item ~= nil then
      done(item)
    end
  end)
end

--- Folder, model, task, configuration, player mode: then pivot.conversation.open.
function M.open_results(P, root)
  root = vim.fn.fnamemodify(vim.fn.expand(root), ':p'):gsub('/$', '')
  local models, files = M.models(root)
  if #models == 0 then
    P.notify(root .. ' has no turn-0 samples under ' .. M.TURN0_DIR .. '/ (is it a ConvCodeWorld results folder?)', vim.log.levels.ERROR)
    return
  end
  choose(models, 'Model', nil, function(model)
    local tasks = M.tasks(root .. '/' .. M.TURN0_DIR .. '/' .. files[model])
    if #tasks == 0 then
      P.notify('no task ids in ' .. files[model], vim.log.levels.ERROR)
      return
    end
    choose(tasks, 'Task', nil, function(task)
      local configs = M.configs(root, model)
      local function with_config(config)
        local modes = { { 'replay', 'Replay the turns ' .. model .. ' played' }, { 'play', 'Play the model: write the next turns yourself' } }
        vim.ui.select(modes, { prompt = 'Player mode', format_item = function(m) return m[2] end }, function(mode)
          if not mode then
            return
          end
          local function open(player)
            local arg = { path = root, task = task, model = model, config = config and config[1] or nil, player = player }
            P.exec('pivot.conversation.open', arg, function(info)
              for _, w in ipairs(info.warnings or {}) do
                P.notify(w, vim.log.levels.WARN)
              end
              P.notify(P.info_line(info))
            end, { name = 'PivotOpenResults' })
          end
          if mode[1] == 'play' then
            vim.ui.input({ prompt = 'Player name: ', default = 'me' }, function(name)
              if name and name ~= '' then
                open(name)
              end
            end)
          else
            open(nil)
          end
        end)
      end
      if #configs == 0 then
        with_config(nil)
      else
        choose(configs, 'Configuration', function(c) return c[2] .. '  (' .. c[1] .. ')' end, with_config)
      end
    end)
  end)
end

--- pivot.tests.run on a buffer's uri (`arg.uri`, default the current buffer).
function M.run_tests(P, arg)
  local a = { uri = arg.uri or vim.uri_from_bufnr(0), task = arg.task }
  P.exec('pivot.tests.run', a, function(r)
    local level = r.passed == r.total and vim.log.levels.INFO or vim.log.levels.WARN
    local where = r.passed == r.total and '' or ' (failing tests are diagnostics: :lua vim.diagnostic.setqflist())'
    P.notify(string.format('%s: %s%s', r.task, r.summary or (r.passed .. '/' .. r.total .. ' passed'), where), level)
    pcall(vim.lsp.codelens.refresh)
  end, { progress = 'Running tests', name = 'PivotRunTests' })
end

function M.format_feedback(f)
  local lines = { '# Feedback: ' .. f.kind, '', 'Task: ' .. f.task, '', '```text' }
  vim.list_extend(lines, vim.split(f.text or '', '\n', { plain = true }))
  table.insert(lines, '```')
  if type(f.pending) == 'table' and not vim.tbl_isempty(f.pending) then
    local keys = vim.tbl_keys(f.pending)
    table.sort(keys)
    table.insert(lines, '')
    table.insert(lines, 'Given with the next submission: ' .. table.concat(keys, ', ') .. '.')
  end
  return table.concat(lines, '\n')
end

function M.format_submitted(s)
  local t = s.tests or {}
  local lines = { string.format('# Turn %d submitted', s.turn), '',
    'Tests: ' .. (t.summary or string.format('%d/%d passed', t.passed or 0, t.total or 0)), '',
    '## Recomputed tables', '', '```text' }
  vim.list_extend(lines, vim.split(((s.table or ''):gsub('%s+$', '')), '\n', { plain = true }))
  table.insert(lines, '```')
  return table.concat(lines, '\n')
end

function M.format_evaluation(r, results, model)
  local lines = { '# ConvCodeWorld evaluation: ' .. model, '', 'Results: ' .. results, '' }
  vim.list_extend(lines, vim.split(((r.markdown or ''):gsub('%s+$', '')), '\n', { plain = true }))
  for _, n in ipairs(r.notes or {}) do
    table.insert(lines, '- note: ' .. n)
  end
  return table.concat(lines, '\n')
end

local function kinds_complete(lead)
  return vim.tbl_filter(function(k) return k:sub(1, #lead) == lead end, M.FEEDBACK_KINDS)
end

--- The user commands (added to require('pivot').commands).
function M.commands(P)
  return {
    PivotOpenResults = {
      server = 'pivot.conversation.open',
      nargs = 1, complete = 'dir', desc = 'Open a ConvCodeWorld results folder: pick the task, configuration, model and player mode',
      fn = function(o) M.open_results(P, o.args) end,
    },
    PivotRunTests = {
      server = 'pivot.tests.run',
      nargs = '?', desc = "Run the task's tests on this buffer (optional task id, e.g. HumanEval/2)",
      fn = function(o) M.run_tests(P, { task = o.args ~= '' and o.args or nil }) end,
    },
    PivotFeedback = {
      server = 'pivot.turn.feedback',
      nargs = '?', complete = kinds_complete,
      desc = 'Feedback on this buffer: compilation, execution, execution-partial, novice or expert',
      fn = function(o)
        local function ask(kind)
          P.exec('pivot.turn.feedback', { uri = vim.uri_from_bufnr(0), kind = kind }, function(f)
            P.show('feedback-' .. kind, M.format_feedback(f))
          end, { progress = 'Feedback (' .. kind .. ')', name = 'PivotFeedback' })
        end
        if o.args ~= '' then
          ask(o.args)
        else
          vim.ui.select(M.FEEDBACK_KINDS, { prompt = 'Feedback of which kind?' }, function(k)
            if k then
              ask(k)
            end
          end)
        end
      end,
    },
    PivotSubmit = {
      server = 'pivot.turn.submit',
      nargs = 0, desc = 'Submit this buffer as the next turn of the open ConvCodeWorld task',
      fn = function()
        P.exec('pivot.turn.submit', { uri = vim.uri_from_bufnr(0) }, function(s)
          P.show('turn-' .. s.turn, M.format_submitted(s))
          P.exec('pivot.conversation.info', nil, function(info) require('pivot.status').on_info(info) end)
        end, { progress = 'Submitting the turn', name = 'PivotSubmit' })
      end,
    },
    PivotEvaluateConvCode = {
      server = 'pivot.evaluate.convcode',
      nargs = '+', complete = 'dir',
      desc = 'ConvCodeWorld evaluation: PivotEvaluateConvCode {results} [model] (Tables 1 and 2; :PivotCancel stops it)',
      fn = function(o)
        local a = vim.split(vim.trim(o.args), '%s+')
        local results = vim.fn.fnamemodify(vim.fn.expand(a[1]), ':p'):gsub('/$', '')
        local function go(model)
          P.exec('pivot.evaluate.convcode', { results = results, model = model }, function(r)
            P.show('convcode-evaluation', M.format_evaluation(r, results, model))
          end, { progress = 'ConvCodeWorld evaluation', name = 'PivotEvaluateConvCode' })
        end
        if a[2] then
          return go(a[2])
        end
        local models = M.models(results)
        if #models == 0 then
          P.notify(results .. ' has no turn-0 samples under ' .. M.TURN0_DIR .. '/', vim.log.levels.ERROR)
          return
        end
        choose(models, 'Model to score', nil, go)
      end,
    },
  }
end

return M
