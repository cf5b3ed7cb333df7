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
export const CLIENT_COMMANDS = ["skillwatch.restartServer", "skillwatch.showOutput"];

/** The `skillwatch.*` settings as VS Code returns them (any may be missing). */
export interface RawSettings {
  path?: unknown;
  profile?: unknown;
  rules?: unknown;
  historyDb?: unknown;
  codeLens?: unknown;
  historyPollMs?: unknown;
  daemonIdleSecs?: unknown;
  vet?: unknown;
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
  /** Absent: the server's default (300 s). */
  daemonIdleSecs?: number;
  /** Sent only when on: off is the server's default, and a skill's skillwatch.toml `[check] vet`
   * can still turn vetting on for that skill. */
  vet?: true;
}

const LEVELS = new Set(["error", "warning", "info", "off"]);

/**
 * The binary to start: the `skillwatch.path` setting when set, else the one bundled in a
 * platform-specific .vsix (`bundled`, when the extension found one), else `skillwatch` on PATH.
 */
export function serverLaunch(raw: RawSettings, bundled?: string): ServerLaunch {
  const configured = typeof raw.path === "string" && raw.path.trim() !== "" ? raw.path.trim() : undefined;
  return { command: configured ?? bundled ?? "skillwatch", args: ["lsp"] };
}

/** Where a platform-specific .vsix carries the binary, inside the extension's folder. */
export function bundledBinaryPath(extensionDir: string, platform: string): string {
  const name = platform === "win32" ? "skillwatch.exe" : "skillwatch";
  return `${extensionDir}/bin/${name}`;
}

/** Whether `path` is a file skillwatch serves (the same files as DOCUMENT_SELECTOR). */
export function isSkillFile(path: string): boolean {
  const parts = path.split(/[\\/]/);
  const name = parts[parts.length - 1];
  if (name === "SKILL.md") {
    return true;
  }
  if (name === "evals.json") {
    return parts[parts.length - 2] === "evals";
  }
  if (name === "eval.yaml" || name === "eval.yml") {
    return parts.slice(0, -1).includes("tests");
  }
  return false;
}

/**
 * The arguments of a server command: as given (a lens names its skill), else the active
 * editor's file when it is a skill file (a command-palette call names none), else none (the
 * server then takes the only open skill, or says which to choose).
 */
export function commandArguments(args: unknown[], activeFile: string | undefined): unknown[] {
  if (args.length > 0 || activeFile === undefined || !isSkillFile(activeFile)) {
    return args;
  }
  return [activeFile];
}

/** One choice of `skillwatch/pickRun` (lsp/src/ext.rs). */
export interface PickChoice {
  label: string;
  harness: string;
  model: string;
  baseUrl?: string;
  found: string;
}

/** What `skillwatch/pickRun` asks. */
export interface PickRunParams {
  skillDir: string;
  title: string;
  choices: PickChoice[];
  saveTo: string;
}

/** The quick-pick items of a pickRun request, in its order (the index is the answer). */
export function pickItems(params: PickRunParams): { label: string; description: string; index: number }[] {
  return params.choices.map((c, index) => ({ label: c.label, description: c.found, index }));
}

/** The two answers of the save question after a pick. */
export function saveActions(params: PickRunParams): { save: string; notNow: string } {
  return { save: `Save to ${params.saveTo}`, notNow: "Not now" };
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
  if (typeof raw.daemonIdleSecs === "number" && raw.daemonIdleSecs >= 0) {
    settings.daemonIdleSecs = Math.floor(raw.daemonIdleSecs);
  } else if (raw.daemonIdleSecs !== undefined && raw.daemonIdleSecs !== null) {
    problems.push(`skillwatch.daemonIdleSecs: expected a number of seconds, found ${JSON.stringify(raw.daemonIdleSecs)}`);
  }
  if (typeof raw.historyDb === "string" && raw.historyDb.trim() !== "") {
    settings.historyDb = raw.historyDb.trim();
  }
  if (raw.vet === true) {
    settings.vet = true;
  } else if (raw.vet !== undefined && raw.vet !== null && raw.vet !== false) {
    problems.push(`skillwatch.vet: expected true or false, found ${JSON.stringify(raw.vet)}`);
  }
  return { settings, problems };
}

/** What the status bar says of the daemon. */
export const DAEMON_NOT_RUNNING = "not running (the server starts it when a skill opens)";

/**
 * The daemon's state from `skillwatch daemon status --json`: its output (`{"running": true,
 * "pid": ..., "jobs": {"queued": ..., "running": ...}}`, or `{"running": false}` with exit
 * code 1 when none runs) and whether the command failed to run at all (`spawnError`).
 */
export function daemonState(stdout: string, spawnError?: string): string {
  let status: { running?: unknown; pid?: unknown; jobs?: { queued?: unknown; running?: unknown } } | undefined;
  try {
    status = JSON.parse(stdout);
  } catch {
    status = undefined;
  }
  if (status?.running === true) {
    const jobs = status.jobs;
    const counts =
      typeof jobs?.running === "number" && typeof jobs?.queued === "number"
        ? `, ${jobs.running} running, ${jobs.queued} queued`
        : "";
    return `running (pid ${String(status.pid)}${counts})`;
  }
  if (status?.running === false) {
    return DAEMON_NOT_RUNNING;
  }
  return `unknown (${spawnError ?? "no answer from skillwatch daemon status"})`;
}
