// What the extension asks of the language server, as plain data: which files it serves, how
// `skillwatch lsp` is started, and the settings it is sent. Kept free of the `vscode` module so
// it can be unit-tested with node's test runner, outside VS Code.

/** The files skillwatch understands: SKILL.md and the two eval formats. */
export const DOCUMENT_SELECTOR = [
  { scheme: "file", pattern: "**/SKILL.md" },
  { scheme: "file", pattern: "**/tests/**/eval.{yaml,yml}" },
  { scheme: "file", pattern: "**/evals/evals.json" },
];

/** Commands the server executes (lens commands) plus the extension's own. */
export const SERVER_COMMANDS = ["skillwatch.runEval", "skillwatch.showHistory"];
export const CLIENT_COMMANDS = ["skillwatch.restartServer"];

/** The `skillwatch.*` settings as VS Code returns them (any may be missing). */
export interface RawSettings {
  path?: unknown;
  profile?: unknown;
  rules?: unknown;
  historyDb?: unknown;
  codeLens?: unknown;
  historyPollMs?: unknown;
}

/** How to start the server. */
export interface ServerLaunch {
  command: string;
  args: string[];
}

/** The settings object the server reads (lsp/src/settings.rs). */
export interface ServerSettings {
  /** Absent: the skill's skillwatch.toml `[check] profile` applies, else `default`. */
  profile?: "default" | "agentskills";
  rules: Record<string, "error" | "warning" | "info" | "off">;
  historyDb?: string;
  codeLens: boolean;
  historyPollMs: number;
}

const LEVELS = new Set(["error", "warning", "info", "off"]);

/** The binary to start: the `skillwatch.path` setting, `skillwatch` on PATH by default. */
export function serverLaunch(raw: RawSettings): ServerLaunch {
  const path = typeof raw.path === "string" && raw.path.trim() !== "" ? raw.path.trim() : "skillwatch";
  return { command: path, args: ["lsp"] };
}

/**
 * Settings for the server, with wrong values dropped (and listed in `problems`) rather than
 * sent: the server would refuse the whole object for one bad rule level.
 */
export function serverSettings(raw: RawSettings): { settings: ServerSettings; problems: string[] } {
  const problems: string[] = [];
  const profile = raw.profile === "default" || raw.profile === "agentskills" ? raw.profile : undefined;
  if (profile === undefined && raw.profile !== undefined && raw.profile !== null) {
    problems.push(`skillwatch.profile: expected "default" or "agentskills", found ${JSON.stringify(raw.profile)}`);
  }
  const rules: ServerSettings["rules"] = {};
  if (raw.rules && typeof raw.rules === "object") {
    for (const [id, level] of Object.entries(raw.rules as Record<string, unknown>)) {
      if (typeof level === "string" && LEVELS.has(level)) {
        rules[id] = level as ServerSettings["rules"][string];
      } else {
        problems.push(`skillwatch.rules.${id}: expected error, warning, info or off, found ${JSON.stringify(level)}`);
      }
    }
  }
  const settings: ServerSettings = {
    rules,
    codeLens: raw.codeLens !== false,
    historyPollMs:
      typeof raw.historyPollMs === "number" && raw.historyPollMs >= 0 ? Math.floor(raw.historyPollMs) : 2000,
  };
  if (profile !== undefined) {
    settings.profile = profile;
  }
  if (typeof raw.historyDb === "string" && raw.historyDb.trim() !== "") {
    settings.historyDb = raw.historyDb.trim();
  }
  return { settings, problems };
}
