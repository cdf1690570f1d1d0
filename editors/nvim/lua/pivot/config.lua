-- Options and the client configuration shared by the 0.11+ path (lsp/pivot_lsp.lua) and
-- the fallback for older versions.
local M = {}

M.defaults = {
  -- The server: `pivot-lsp serve` on PATH, or a full path (e.g. target/release/pivot-lsp).
  cmd = { 'pivot-lsp', 'serve' },
  filetypes = { 'python' },
  root_markers = { 'pivots.toml', '.pivot', '.git' },
  -- Interpreter for test runs; passed as initializationOptions.pivot.python and PIVOT_PYTHON.
  python = nil,
  -- Problems whose tests are run: 'humaneval' or a BigCodeBench / HumanEval JSONL path.
  problems = nil,
  -- Isolation of test runs: 'bwrap' (the server's default) or 'none'.
  sandbox = nil,
  -- true: the sessions of pivots.toml are the commits that changed it (read from git), and
  -- :PivotTimeline, hovers and transcripts name each session's commit.
  history = false,
  -- An instruction file ('AGENTS.md', 'CLAUDE.md', ...; relative to the root) the pivots
  -- are read from, as `pivot-lsp pivots import` proposes them, in place of pivots.toml; with
  -- history = true its sessions are the commits that changed its rules. nil: pivots.toml.
  instructions = nil,
  -- The server's log level (in Neovim's lsp.log): 'error', 'warn', 'info', 'debug' (a line
  -- per request), 'trace', 'off'; nil: $PIVOT_LOG, else 'warn'.
  log_level = nil,
  -- OpenAI-compatible endpoint of the feedback simulator (novice / expert feedback), passed
  -- as initializationOptions.pivot.endpoint; the key from api_key, else $api_key_env.
  endpoint = { base_url = nil, model = nil, api_key = nil, api_key_env = 'OPENAI_API_KEY' },
  -- How :PivotReport shows the HTML file: a function(path), else vim.ui.open (0.10+), else
  -- xdg-open.
  open = nil,
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  return M.options
end

local function non_empty(s)
  if type(s) == 'string' and s ~= '' then
    return s
  end
  return nil
end

--- initializationOptions: the API key from the option, else from the named env variable.
--- Its `pivot` is the server's settings object (`pivot.ServerSettings`, generated into
--- protocol.lua from the server's reader; `vim.NIL` is JSON's null).
---@return { pivot: pivot.ServerSettings }
function M.init_options(o)
  o = o or M.options
  local ep = o.endpoint or {}
  local key = non_empty(ep.api_key)
  if not key and ep.api_key_env then
    key = non_empty(vim.env[ep.api_key_env])
  end
  return {
    pivot = {
      python = non_empty(o.python) or vim.NIL,
      problems = non_empty(o.problems) or vim.NIL,
      sandbox = non_empty(o.sandbox) or vim.NIL,
      history = o.history == true,
      -- '' reads pivots.toml (nil would keep the server's value).
      instructions = non_empty(o.instructions) or '',
      logLevel = non_empty(o.log_level) or vim.NIL,
      endpoint = {
        baseUrl = non_empty(ep.base_url) or vim.NIL,
        model = non_empty(ep.model) or vim.NIL,
        apiKey = key or vim.NIL,
      },
    },
  }
end

-- The data fields of the client configuration a user may set through vim.lsp.config.
local USER_KEYS = { 'cmd', 'cmd_env', 'filetypes', 'root_markers', 'root_dir', 'init_options', 'settings' }

-- What the last setup() gave vim.lsp.config (a field equal to it is ours, not the user's).
M.applied = nil

--- The fields of `resolved` (vim.lsp.config.pivot_lsp: lsp/pivot_lsp.lua merged with what the
--- user set) that differ from this plugin's defaults and from what setup() last set: what
--- the user set themselves.
function M.user_fields(resolved)
  local out = {}
  if type(resolved) ~= 'table' then
    return out
  end
  local base = M.client_config(M.defaults)
  local applied = M.applied or {}
  for _, k in ipairs(USER_KEYS) do
    local v = resolved[k]
    if v ~= nil and not vim.deep_equal(v, base[k]) and not vim.deep_equal(v, applied[k]) then
      out[k] = v
    end
  end
  return out
end

--- The client configuration (the fields of vim.lsp.config / vim.lsp.start_client).
function M.client_config(o)
  o = o or M.options
  local env = nil
  if non_empty(o.python) then
    env = { PIVOT_PYTHON = o.python }
  end
  return {
    name = 'pivot_lsp',
    cmd = o.cmd,
    cmd_env = env,
    filetypes = o.filetypes,
    root_markers = o.root_markers,
    init_options = M.init_options(o),
    on_exit = function(_, _, client_id)
      vim.schedule(function()
        require('pivot.status').forget(client_id)
      end)
    end,
    handlers = {
      ['pivot/sessionChanged'] = function(err, result, ctx)
        require('pivot.status').on_session_changed(err, result, ctx)
      end,
      -- Our commands' progress on the command line, then the default handler.
      ['$/progress'] = function(err, result, ctx, cfg)
        require('pivot').on_progress(err, result, ctx)
        local default = vim.lsp.handlers['$/progress']
        if default then
          return default(err, result, ctx, cfg)
        end
      end,
    },
  }
end

return M
