// Unit tests of the extension's configuration: what it starts, which files it serves, and the
// settings it sends. Run with `npm test` (node's built-in test runner, no VS Code needed).

import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { CLIENT_COMMANDS, DOCUMENT_SELECTOR, SERVER_COMMANDS, serverLaunch, serverSettings } from "../src/config";

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
});

test("contributes every command the server and extension execute", () => {
  const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, [...SERVER_COMMANDS, ...CLIENT_COMMANDS].sort());
});

test("every setting the extension reads is declared with the server's defaults", () => {
  const props = manifest.contributes.configuration.properties;
  for (const key of ["path", "profile", "rules", "historyDb", "codeLens", "historyPollMs"]) {
    assert.ok(props[`skillwatch.${key}`], `skillwatch.${key} is not declared`);
  }
  const defaults = serverSettings({
    profile: props["skillwatch.profile"].default,
    rules: props["skillwatch.rules"].default,
    historyDb: props["skillwatch.historyDb"].default,
    codeLens: props["skillwatch.codeLens"].default,
    historyPollMs: props["skillwatch.historyPollMs"].default,
  });
  assert.deepEqual(defaults, {
    settings: { rules: {}, codeLens: true, historyPollMs: 2000 },
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
