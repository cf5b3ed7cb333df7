-- :checkhealth skillwatch: the Neovim version, the server binary, the running servers and the
-- daemon, each with what to do when it is wrong.

local M = {}

local function run(cmd)
  local ok, result = pcall(function()
    return vim.system(cmd, { text = true }):wait(5000)
  end)
  if not ok then
    return nil, tostring(result)
  end
  return result
end

function M.check()
  local health = vim.health
  local skillwatch = require("skillwatch")
  local opts = skillwatch.options

  health.start("Neovim")
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim " .. tostring(vim.version()) .. ": the plugin needs 0.11 or later (vim.lsp.config)")
  end

  health.start("Server binary")
  local bin = opts.cmd[1]
  local path = vim.fn.exepath(bin)
  if path == "" then
    health.error(bin .. " not found", {
      "install skillwatch (cargo install --path client-cli), or set cmd = { '/path/to/skillwatch', 'lsp' } in setup()",
    })
  else
    local version, err = run({ path, "--version" })
    if version == nil or version.code ~= 0 then
      health.error(path .. " --version failed: " .. (err or (version and version.stderr) or ""))
    else
      health.ok(path .. ": " .. vim.trim(version.stdout))
    end
    local daemon = run({ path, "daemon", "status" })
    if daemon ~= nil and daemon.code == 0 then
      health.ok("daemon: " .. vim.trim(daemon.stdout):gsub("\n%s*", "; "))
    else
      health.info("daemon: not running (the server starts one when a skill file opens, unless settings.daemon = false)")
    end
  end

  health.start("Language server")
  local clients = vim.lsp.get_clients({ name = "skillwatch" })
  if #clients == 0 then
    health.info("not running: it starts when a SKILL.md, tests/**/eval.yaml or evals/evals.json opens")
  end
  for _, client in ipairs(clients) do
    local buffers = vim.tbl_count(client.attached_buffers)
    local state = client:is_stopped() and "stopped" or "running"
    local report = client:is_stopped() and health.warn or health.ok
    report(string.format("client %d %s, %d buffer(s), root %s", client.id, state, buffers, client.root_dir or "none"))
  end
  health.info(string.format("debounce_text_changes = %d ms, code lenses %s", opts.debounce_text_changes, opts.codelens and "on" or "off"))
end

return M
