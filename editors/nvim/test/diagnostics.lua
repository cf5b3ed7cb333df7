-- Headless test driver: opens a SKILL.md with the editors/nvim config, waits for the
-- diagnostics skillwatch publishes, and writes them as JSON to $SKILLWATCH_NVIM_OUT.
-- Run: SKILLWATCH_BIN=... SKILLWATCH_NVIM_OUT=... nvim --headless -u NONE -l test/diagnostics.lua FILE
local here = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))
vim.opt.runtimepath:prepend(vim.fs.dirname(here))
vim.cmd("filetype on")

local out = assert(os.getenv("SKILLWATCH_NVIM_OUT"), "SKILLWATCH_NVIM_OUT not set")
local bin = assert(os.getenv("SKILLWATCH_BIN"), "SKILLWATCH_BIN not set")
local file = assert(_G.arg[1], "usage: diagnostics.lua FILE")

local function finish(result)
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

require("skillwatch").setup({ cmd = { bin, "lsp" } })
vim.cmd.edit(file)
local bufnr = vim.api.nvim_get_current_buf()

-- a generous deadline: the server and its daemon start on a machine that may be busy
local ok = vim.wait(120000, function()
  return #vim.diagnostic.get(bufnr) > 0
end, 50)

local clients = vim.lsp.get_clients({ bufnr = bufnr, name = "skillwatch" })
local result = {
  nvim = tostring(vim.version()),
  filetype = vim.bo[bufnr].filetype,
  attached = #clients,
  timed_out = not ok,
  diagnostics = {},
}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(result.diagnostics, {
    lnum = d.lnum,
    col = d.col,
    end_col = d.end_col,
    severity = d.severity,
    code = d.code,
    source = d.source,
    message = d.message,
  })
end
-- :checkhealth skillwatch sees the binary and the running server
vim.cmd("checkhealth skillwatch")
result.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
-- a markdown file that is not a skill must not start the server
vim.cmd.edit(vim.fs.joinpath(vim.fs.dirname(file), "NOTES.md"))
result.attached_to_other_markdown = #vim.lsp.get_clients({ bufnr = vim.api.nvim_get_current_buf() })
finish(result)
