// Unit tests of the extension's configuration: what it starts, which files it serves, and the
// settings it sends. Run with `npm test` (node's built-in test runner, no VS Code needed).

import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  CLIENT_COMMANDS,
  DOCUMENT_SELECTOR,
  SERVER_COMMANDS,
  bundledBinaryPath,
  DAEMON_NOT_RUNNING,
  commandArguments,
  daemonState,
  isSkillFile,
  pickItems,
  saveActions,
  serverLaunch,
  serverSettings,
} from "../src/config";

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));

test("starts `skillwatch lsp`, from PATH by default or from the configured path", () => {
  assert.deepEqual(serverLaunch({}), { command: "skillwatch", args: ["lsp"] });
  assert.deepEqual(serverLaunch({ path: "  " }), { command: "skillwatch", args: ["lsp"] });
  assert.deepEqual(serverLaunch({ path: "/opt/sw/bin/skillwatch" }), {
    command: "/opt/sw/bin/skillwatch",
    args: ["lsp"],
  });
});

test("serves SKILL.md and both eval formats", () => {
  const patterns = DOCUMENT_SELECTOR.map((s) => s.pattern);
  assert.deepEqual(patterns, ["**/SKILL.md", "**/tests/**/eval.{yaml,yml}", "**/evals/evals.json"]);
  const events: string[] = manifest.activationEvents;
  assert.ok(events.includes("workspaceContains:**/SKILL.md"));
  assert.ok(events.includes("workspaceContains:**/evals/evals.json"));
  assert.ok(events.some((e) => e.startsWith("workspaceContains:") && e.endsWith("eval.yaml")));
  // any markdown file must not start the server (nor the daemon it starts)
  assert.ok(events.every((e) => e.startsWith("workspaceContains:")), `${events}`);
});

test("a skill file is what the document selector serves", () => {
  for (const yes of ["/r/pdf/SKILL.md", "/r/pdf/tests/eval.yaml", "/r/pdf/tests/a/eval.yml", "/r/pdf/evals/evals.json"]) {
    assert.ok(isSkillFile(yes), yes);
  }
  for (const no of ["/r/README.md", "/r/pdf/eval.yaml", "/r/pdf/evals.json", "/r/skill.md"]) {
    assert.ok(!isSkillFile(no), no);
  }
});

test("the bundled binary is used when no path is set, the setting wins, PATH is last", () => {
  const bundled = bundledBinaryPath("/ext", "linux");
  assert.equal(bundled, "/ext/bin/skillwatch");
  assert.equal(bundledBinaryPath("C:/ext", "win32"), "C:/ext/bin/skillwatch.exe");
  assert.equal(serverLaunch({ path: "" }, bundled).command, bundled);
  assert.equal(serverLaunch({ path: "/opt/skillwatch" }, bundled).command, "/opt/skillwatch");
  assert.equal(serverLaunch({ path: "" }).command, "skillwatch");
});

test("palette commands act on the active editor's skill; lens arguments are kept", () => {
  assert.deepEqual(commandArguments([], "/r/pdf/SKILL.md"), ["/r/pdf/SKILL.md"]);
  assert.deepEqual(commandArguments([], "/r/pdf/tests/eval.yaml"), ["/r/pdf/tests/eval.yaml"]);
  assert.deepEqual(commandArguments([], "/r/README.md"), []);
  assert.deepEqual(commandArguments([], undefined), []);
  assert.deepEqual(commandArguments(["/r/other", "case-1"], "/r/pdf/SKILL.md"), ["/r/other", "case-1"]);
});

test("the run picker lists the server's choices in order and answers with an index", () => {
  const params = {
    skillDir: "/r/pdf",
    title: "Run a paired eval of pdf on:",
    saveTo: "/r/skillwatch.toml",
    choices: [
      { label: "claude-code · sonnet", harness: "claude-code", model: "sonnet", found: "claude on PATH" },
      { label: "openai · qwen3:8b", harness: "openai", model: "qwen3:8b", found: "OPENAI_BASE_URL=http://h/v1" },
    ],
  };
  assert.deepEqual(
    pickItems(params).map((i) => [i.label, i.description, i.index]),
    [
      ["claude-code · sonnet", "claude on PATH", 0],
      ["openai · qwen3:8b", "OPENAI_BASE_URL=http://h/v1", 1],
    ],
  );
  assert.equal(saveActions(params).save, "Save to /r/skillwatch.toml");
});

test("the eval schemas are contributed from the repository's schemas/, and tracing is a setting", () => {
  const c = manifest.contributes;
  const urls = [...c.yamlValidation, ...c.jsonValidation].map((v: { url: string }) => v.url);
  assert.deepEqual(urls, ["./schemas/eval-yaml.schema.json", "./schemas/evals-json.schema.json"]);
  for (const url of urls) {
    const source = path.join(__dirname, "..", "..", "..", "..", "schemas", path.basename(url));
    assert.ok(fs.existsSync(source), `${source} (copied by scripts/package.mjs)`);
  }
  assert.deepEqual(c.configuration.properties["skillwatch.trace.server"].enum, ["off", "messages", "verbose"]);
});

test("contributes every command the server and extension execute", () => {
  const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, [...SERVER_COMMANDS, ...CLIENT_COMMANDS].sort());
});

test("every setting the extension reads is declared with the server's defaults", () => {
  const props = manifest.contributes.configuration.properties;
  for (const key of ["path", "profile", "rules", "historyDb", "codeLens", "historyPollMs", "daemonIdleSecs", "vet"]) {
    assert.ok(props[`skillwatch.${key}`], `skillwatch.${key} is not declared`);
  }
  const defaults = serverSettings({
    profile: props["skillwatch.profile"].default,
    rules: props["skillwatch.rules"].default,
    historyDb: props["skillwatch.historyDb"].default,
    codeLens: props["skillwatch.codeLens"].default,
    historyPollMs: props["skillwatch.historyPollMs"].default,
    daemonIdleSecs: props["skillwatch.daemonIdleSecs"].default,
    vet: props["skillwatch.vet"].default,
  });
  assert.deepEqual(defaults, {
    settings: { rules: {}, codeLens: true, historyPollMs: 2000, daemonIdleSecs: 300 },
    problems: [],
  });
});

test("an unset profile is not sent, so the skill's skillwatch.toml decides", () => {
  assert.equal(serverSettings({ profile: null }).settings.profile, undefined);
  assert.equal(serverSettings({}).settings.profile, undefined);
  assert.equal(serverSettings({ profile: "agentskills" }).settings.profile, "agentskills");
  assert.equal(serverSettings({ profile: "default" }).settings.profile, "default");
});

test("bad values are dropped and reported, good ones kept", () => {
  const { settings, problems } = serverSettings({
    profile: "strict",
    rules: { SW108: "off", SW101: "loud" },
    historyDb: "/tmp/h.sqlite3",
    historyPollMs: -5,
  });
  assert.deepEqual(settings, {
    rules: { SW108: "off" },
    historyDb: "/tmp/h.sqlite3",
    codeLens: true,
    historyPollMs: 2000,
  });
  assert.equal(problems.length, 2);
  assert.match(problems[0], /skillwatch.profile.*strict/);
  assert.match(problems[1], /SW101.*loud/);
});

test("vetting is sent only when on, and a non-boolean is reported", () => {
  assert.equal(serverSettings({ vet: true }).settings.vet, true);
  assert.equal(serverSettings({ vet: false }).settings.vet, undefined);
  assert.equal(serverSettings({}).settings.vet, undefined);
  const { settings, problems } = serverSettings({ vet: "yes" });
  assert.equal(settings.vet, undefined);
  assert.match(problems[0], /skillwatch.vet.*yes/);
});

test("says the daemon's state and job counts from `daemon status --json`", () => {
  // what the CLI prints: `running` says the daemon runs, the job counts are under `jobs`
  const up = JSON.stringify({ running: true, pid: 42, queued: 1, jobs: { queued: 1, running: 2 } });
  assert.equal(daemonState(up), "running (pid 42, 2 running, 1 queued)");
  assert.equal(daemonState(JSON.stringify({ running: true, pid: 42 })), "running (pid 42)");
  assert.equal(daemonState('{"running": false}'), DAEMON_NOT_RUNNING);
  assert.match(daemonState("", "spawn skillwatch ENOENT"), /^unknown \(spawn skillwatch ENOENT\)$/);
  assert.match(daemonState("not json"), /^unknown /);
});
