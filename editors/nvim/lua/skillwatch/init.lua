-- skillwatch for Neovim 0.11+: registers `skillwatch lsp` with vim.lsp.config and enables it
-- for SKILL.md and eval files (tests/**/eval.yaml, evals/evals.json). Diagnostics, hovers,
-- completion, quick fixes and lift code lenses all come from the server.
--
--   require("skillwatch").setup({ cmd = { "skillwatch", "lsp" }, settings = { rules = { SW108 = "off" } } })
--
-- Beyond what Neovim's client does by itself, the plugin answers the server's own requests:
-- `workspace/codeLens/refresh` (Neovim 0.11 neither advertises nor handles it) re-requests the
-- lenses of every buffer the server is attached to, so a finished run shows without a keystroke;
-- `skillwatch/pickRun` (a run asked for with no harness configured) offers the harnesses found on
-- this machine through vim.ui.select, then asks whether to save the choice.

local M = {}

M.defaults = {
  -- how to start the server
  cmd = { "skillwatch", "lsp" },
  -- sent as initializationOptions and workspace/didChangeConfiguration (lsp/src/settings.rs)
  settings = {},
  -- show code lenses, refreshed on the server's request and when entering a skill buffer
  codelens = true,
  -- milliseconds Neovim waits before sending edits: the server answers an edit in a few
  -- milliseconds, so Neovim's 150 ms default would be most of the keystroke-to-diagnostic time
  debounce_text_changes = 20,
}

--- The options of the last setup() (read by :checkhealth skillwatch).
M.options = vim.deepcopy(M.defaults)

--- Whether `path` is a file skillwatch serves: SKILL.md, an eval.yaml inside a tests tree, or
--- evals/evals.json.
function M.is_skill_file(path)
  if path == nil or path == "" then
    return false
  end
  local name = vim.fs.basename(path)
  local parent = vim.fs.basename(vim.fs.dirname(path))
  if name == "SKILL.md" then
    return true
  end
  if name == "evals.json" then
    return parent == "evals"
  end
  if name == "eval.yaml" or name == "eval.yml" then
    return path:find("/tests/", 1, true) ~= nil
  end
  return false
end

-- Folders discovery never enters (core/src/skill/discover.rs SKIPPED_DIRS).
local SKIPPED = { [".git"] = true, node_modules = true, target = true, [".hg"] = true, [".svn"] = true }

--- Whether `dir` is a folder of skills: named `skills`, or at least half of its subfolders
--- (hidden and skipped ones aside) hold a SKILL.md.
function M.holds_skills(dir)
  if vim.fs.basename(dir) == "skills" then
    return true
  end
  local folders, skills = 0, 0
  for name, kind in vim.fs.dir(dir) do
    if kind == "directory" and name:sub(1, 1) ~= "." and not SKIPPED[name] then
      folders = folders + 1
      local stat = vim.uv.fs_stat(vim.fs.joinpath(dir, name, "SKILL.md"))
      if stat ~= nil and stat.type == "file" then
        skills = skills + 1
      end
    end
  end
  return skills > 0 and skills * 2 >= folders
end

--- The root of the skill file at `path`: one server for a folder of skills. The same rule as
--- the server's (core/src/skill/root.rs): the folder holding the skill when it holds skills,
--- else the nearest folder with `.git` or `skillwatch.toml`, else the skill's own folder;
--- never the home folder or `/`.
function M.root_for(path)
  local skill = vim.fs.root(path, "SKILL.md") or vim.fs.dirname(path)
  local home = vim.uv.os_homedir()
  local function too_wide(dir)
    return dir == home or vim.fs.dirname(dir) == dir
  end
  local parent = vim.fs.dirname(skill)
  if not too_wide(parent) and M.holds_skills(parent) then
    return parent
  end
  local dir = skill
  while not too_wide(dir) do
    if vim.uv.fs_stat(vim.fs.joinpath(dir, ".git")) or vim.uv.fs_stat(vim.fs.joinpath(dir, "skillwatch.toml")) then
      return dir
    end
    dir = vim.fs.dirname(dir)
  end
  return skill
end

--- vim.ui.select from inside a server request's handler (Neovim runs those in a coroutine): the
--- item chosen, or nil. Works with a synchronous select (the default) and with an asynchronous
--- one (telescope, fzf-lua, snacks), whose callback resumes the handler.
local function select(items, opts)
  local co = coroutine.running()
  local answered, choice, waiting = false, nil, false
  vim.ui.select(items, opts, function(item)
    if answered then
      return
    end
    answered, choice = true, item
    if waiting then
      coroutine.resume(co)
    end
  end)
  if not answered and co ~= nil then
    waiting = true
    coroutine.yield()
  end
  return choice
end

--- `skillwatch/pickRun`: which harness and model to run on, and whether to save it.
local function pick_run(_, params)
  local choice = select(params.choices, {
    prompt = params.title,
    kind = "skillwatch.pickRun",
    format_item = function(c)
      return c.label .. "  (" .. c.found .. ")"
    end,
  })
  if choice == nil then
    return vim.NIL
  end
  local index
  for i, c in ipairs(params.choices) do
    if c == choice then
      index = i - 1
    end
  end
  local save = "Save to " .. params.saveTo
  local answer = select({ save, "Not now" }, {
    prompt = "Keep " .. choice.label .. " for the next runs?",
    kind = "skillwatch.saveChoice",
  })
  return { index = index, save = answer == save }
end

--- `workspace/codeLens/refresh`: re-request the lenses of every buffer of this client.
local function refresh_lenses(_, _, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if client ~= nil then
    for bufnr in pairs(client.attached_buffers) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        vim.lsp.codelens.refresh({ bufnr = bufnr })
      end
    end
  end
  return vim.NIL
end

--- `skillwatch/runFinished`: say how the run ended (the lenses follow by the refresh).
local function run_finished(_, params)
  local level = params.success and vim.log.levels.INFO or vim.log.levels.ERROR
  vim.notify("skillwatch: " .. params.message, level)
end

local function on_attach(client, bufnr, opts)
  if opts.codelens and client:supports_method("textDocument/codeLens") then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost" }, {
      buffer = bufnr,
      group = vim.api.nvim_create_augroup("skillwatch_codelens_" .. bufnr, { clear = true }),
      callback = function()
        vim.lsp.codelens.refresh({ bufnr = bufnr })
      end,
    })
  end
end

--- The configuration handed to vim.lsp.config (exposed for tests and for users who want to
--- adapt it before enabling).
function M.config(opts)
  opts = vim.tbl_deep_extend("force", M.defaults, opts or {})
  return {
    cmd = opts.cmd,
    filetypes = { "markdown", "yaml", "json" },
    -- attach only to skill files (other markdown/yaml/json buffers never start the server),
    -- one server per folder of skills
    root_dir = function(bufnr, on_dir)
      local path = vim.api.nvim_buf_get_name(bufnr)
      if M.is_skill_file(path) then
        on_dir(M.root_for(path))
      end
    end,
    init_options = opts.settings,
    settings = { skillwatch = opts.settings },
    flags = { debounce_text_changes = opts.debounce_text_changes },
    capabilities = {
      workspace = { codeLens = { refreshSupport = opts.codelens } },
      experimental = { skillwatch = { pickRun = true } },
    },
    handlers = {
      ["workspace/codeLens/refresh"] = refresh_lenses,
      ["skillwatch/pickRun"] = pick_run,
      ["skillwatch/runFinished"] = run_finished,
    },
    on_attach = function(client, bufnr)
      on_attach(client, bufnr, opts)
    end,
  }
end

--- Register and enable the server.
function M.setup(opts)
  M.options = vim.tbl_deep_extend("force", M.defaults, opts or {})
  vim.lsp.config("skillwatch", M.config(opts))
  vim.lsp.enable("skillwatch")
  vim.api.nvim_create_user_command("SkillwatchRunEval", function()
    M.exec("skillwatch.runEval")
  end, { desc = "skillwatch: run a paired eval of the current skill" })
  vim.api.nvim_create_user_command("SkillwatchHistory", function()
    M.exec("skillwatch.showHistory")
  end, { desc = "skillwatch: show the current skill's lift history" })
end

--- Run a server command for the skill of the current buffer.
function M.exec(command)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_clients({ bufnr = bufnr, name = "skillwatch" })[1]
  if client == nil then
    vim.notify("skillwatch: no language server attached to this buffer", vim.log.levels.WARN)
    return
  end
  local path = vim.api.nvim_buf_get_name(bufnr)
  client:exec_cmd({ title = command, command = command, arguments = { path } }, { bufnr = bufnr })
end

return M
