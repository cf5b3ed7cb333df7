-- Headless test driver: one language server and one root for a folder of skills. Opens every
-- SKILL.md given (skills side by side in a folder that is no repository and has no
-- skillwatch.toml, like ~/.claude/skills) with the editors/nvim plugin, waits until each buffer
-- has a server, then until the daemon the server started lists a watched root, and writes the
-- servers, their roots and the daemon's roots as JSON to $SKILLWATCH_NVIM_OUT.
-- Run: SKILLWATCH_BIN=... SKILLWATCH_NVIM_OUT=... nvim --headless -u NONE -i NONE -l test/roots.lua SKILL_MD...
local here = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))
vim.opt.runtimepath:prepend(vim.fs.dirname(here))
vim.cmd("filetype on")

local out = assert(os.getenv("SKILLWATCH_NVIM_OUT"), "SKILLWATCH_NVIM_OUT not set")
local bin = assert(os.getenv("SKILLWATCH_BIN"), "SKILLWATCH_BIN not set")
local result = { attached = {}, timed_out = false }

require("skillwatch").setup({ cmd = { bin, "lsp" } })
for _, file in ipairs(_G.arg) do
  vim.cmd.edit(file)
  local bufnr = vim.api.nvim_get_current_buf()
  local ok = vim.wait(20000, function()
    return #vim.lsp.get_clients({ bufnr = bufnr, name = "skillwatch" }) > 0
  end, 50)
  result.timed_out = result.timed_out or not ok
  table.insert(result.attached, #vim.lsp.get_clients({ bufnr = bufnr, name = "skillwatch" }))
end

result.servers = {}
for _, client in ipairs(vim.lsp.get_clients({ name = "skillwatch" })) do
  local folders = {}
  for _, f in ipairs(client.workspace_folders or {}) do
    table.insert(folders, f.name)
  end
  table.insert(result.servers, { root_dir = client.root_dir, workspace_folders = folders })
end

-- the server asks the daemon to watch the root of the skills it has open
local ok = vim.wait(30000, function()
  local status = vim.system({ bin, "daemon", "status", "--json" }, { text = true }):wait()
  if status.code == 0 then
    local parsed = vim.json.decode(status.stdout)
    if #parsed.roots > 0 then
      result.daemon_roots = parsed.roots
      return true
    end
  end
  return false
end, 200)
result.daemon_timed_out = not ok

local f = assert(io.open(out, "w"))
f:write(vim.json.encode(result))
f:close()
vim.cmd("qall!")
