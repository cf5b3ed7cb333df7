-- Headless test driver: lift from Neovim with no hand-written config. Opens a SKILL.md with the
-- editors/nvim plugin (no settings), runs the "▶ Run paired eval" lens as a user does
-- (vim.lsp.codelens.run), answers the pickers from this side (vim.ui.select: the harness the
-- test names, asynchronously as picker plugins do, then "Save"), and waits for the lens to show
-- the lift. Then it lists a second model in the skillwatch.toml the choice was saved to, as an
-- author editing it elsewhere would, and waits for that model's lens and the SW501 warning. No
-- autocmd is fired and no refresh is asked for: every update is the server's doing. Writes what
-- it saw as JSON to $SKILLWATCH_NVIM_OUT.
-- Run: SKILLWATCH_BIN=... SKILLWATCH_NVIM_OUT=... SKILLWATCH_PICK=... SKILLWATCH_SECOND_MODEL=...
--      nvim --headless -u NONE -i NONE -l test/lift.lua SKILL_MD
local here = vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))
vim.opt.runtimepath:prepend(vim.fs.dirname(here))
vim.cmd("filetype on")

local out = assert(os.getenv("SKILLWATCH_NVIM_OUT"), "SKILLWATCH_NVIM_OUT not set")
local bin = assert(os.getenv("SKILLWATCH_BIN"), "SKILLWATCH_BIN not set")
local pick = assert(os.getenv("SKILLWATCH_PICK"), "SKILLWATCH_PICK not set")
local second = assert(os.getenv("SKILLWATCH_SECOND_MODEL"), "SKILLWATCH_SECOND_MODEL not set")
local file = assert(_G.arg[1], "usage: lift.lua SKILL_MD")

local result = { asked = {}, notes = {}, phases = {} }
local function ms()
  return math.floor(vim.uv.hrtime() / 1e6)
end
local start = ms()

local function finish()
  local f = assert(io.open(out, "w"))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qall!")
end

-- the user's side of the pickers
local answers = { codelens = "▶ Run paired eval", ["skillwatch.pickRun"] = pick, ["skillwatch.saveChoice"] = "Save" }
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for _, item in ipairs(items) do
    table.insert(labels, opts.format_item and opts.format_item(item) or item)
  end
  table.insert(result.asked, { kind = opts.kind, prompt = opts.prompt, items = labels })
  local want = answers[opts.kind]
  local chosen
  for i, label in ipairs(labels) do
    if want ~= nil and label:sub(1, #want) == want then
      chosen = i
    end
  end
  local answer = function()
    on_choice(chosen and items[chosen], chosen)
  end
  if opts.kind == "skillwatch.pickRun" then
    vim.defer_fn(answer, 200) -- a picker window answers later
  else
    answer()
  end
end
vim.notify = function(message, level)
  table.insert(result.notes, { at = ms() - start, level = level, message = message })
end

local function lens_titles(bufnr)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command then
      table.insert(titles, lens.command.title)
    end
  end
  return titles
end

local function has_title(bufnr, needle)
  for _, title in ipairs(lens_titles(bufnr)) do
    if title:find(needle, 1, true) then
      return true
    end
  end
  return false
end

local function diagnostic(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return d
    end
  end
end

local function phase(name, bufnr, timeout, done)
  local t0 = ms()
  local ok = vim.wait(timeout, done, 50)
  table.insert(result.phases, { name = name, ok = ok, took_ms = ms() - t0, lenses = lens_titles(bufnr) })
  return ok
end

require("skillwatch").setup({ cmd = { bin, "lsp" } })
vim.cmd.edit(file)
local bufnr = vim.api.nvim_get_current_buf()
-- Deadlines are generous (the machine may be busy); how long a phase took is in the result,
-- for the test to hold where it promises a speed.
if not phase("lenses shown", bufnr, 120000, function()
  return has_title(bufnr, "▶ Run paired eval")
end) then
  return finish()
end

-- run the lens on line 1, as a user does
vim.api.nvim_win_set_cursor(0, { 1, 0 })
vim.lsp.codelens.run()
local finished = function()
  for _, note in ipairs(result.notes) do
    if note.message:find("Paired run", 1, true) then
      return true
    end
  end
  return false
end
if not phase("run finished", bufnr, 120000, finished) then
  return finish()
end
if not phase("lift lens", bufnr, 120000, function()
  return has_title(bufnr, "Lift +")
end) then
  return finish()
end

-- the author lists a second model in the file the choice was saved to
local config = vim.fs.joinpath(vim.fs.root(file, ".git"), "skillwatch.toml")
local f = assert(io.open(config))
local text = f:read("a")
f:close()
result.saved = text
local list = text:match('openai = %[[^%]]*%]')
if list == nil then
  return finish()
end
local wider = list:gsub("%]$", ', "' .. second .. '"]')
text = text:gsub(vim.pesc(list), wider)
f = assert(io.open(config, "w"))
f:write(text)
f:close()
phase("second model", bufnr, 180000, function()
  return has_title(bufnr, "· " .. second .. " ·") and diagnostic(bufnr, "SW501") ~= nil
end)
local sw501 = diagnostic(bufnr, "SW501")
result.sw501 = sw501 and { lnum = sw501.lnum, severity = sw501.severity, message = sw501.message }
finish()
