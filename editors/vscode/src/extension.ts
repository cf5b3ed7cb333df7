// The skillwatch VS Code extension: starts `skillwatch lsp` and wires it to the editor. All
// features (diagnostics, hovers, completion, quick fixes, lift code lenses and their commands)
// come from the server; this file launches it, forwards settings, answers the server's
// `skillwatch/pickRun` with a quick pick, hands palette commands the active skill, and keeps a
// status bar item (server state, daemon state, a running job).

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  ClientCapabilities,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
} from "vscode-languageclient/node";
import {
  DOCUMENT_SELECTOR,
  PickRunParams,
  daemonState as describeDaemon,
  isSkillFile,
  RawSettings,
  bundledBinaryPath,
  commandArguments,
  pickItems,
  saveActions,
  serverLaunch,
  serverSettings,
} from "./config";

let client: LanguageClient | undefined;
let status: vscode.StatusBarItem;
let bundled: string | undefined;
const running = new Set<string>();
let daemonState = "unknown";

function readSettings(): RawSettings {
  const config = vscode.workspace.getConfiguration("skillwatch");
  return {
    path: config.get("path"),
    profile: config.get("profile"),
    rules: config.get("rules"),
    historyDb: config.get("historyDb"),
    codeLens: config.get("codeLens"),
    historyPollMs: config.get("historyPollMs"),
    daemonIdleSecs: config.get("daemonIdleSecs"),
    vet: config.get("vet"),
  };
}

/** Tells the server this client answers `skillwatch/pickRun` with a picker. */
const pickRunFeature: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental ?? {}), skillwatch: { pickRun: true } };
  },
  initialize(): void {},
  getState: () => ({ kind: "static" }),
  clear(): void {},
};

async function pickRun(params: PickRunParams): Promise<{ index: number; save: boolean } | null> {
  const picked = await vscode.window.showQuickPick(pickItems(params), {
    title: params.title,
    placeHolder: "Harness and model (found on this machine)",
  });
  if (picked === undefined) {
    return null;
  }
  const { save, notNow } = saveActions(params);
  const answer = await vscode.window.showInformationMessage(
    `Keep ${picked.label} for the next runs?`,
    save,
    notNow,
  );
  return { index: picked.index, save: answer === save };
}

function showStatus(): void {
  const state = client?.state;
  const server = state === State.Running ? "running" : state === State.Starting ? "starting" : "stopped";
  const icon = running.size > 0 ? "$(sync~spin)" : server === "running" ? "$(check)" : "$(error)";
  status.text = `${icon} skillwatch${running.size > 0 ? ": run" : ""}`;
  status.tooltip = [
    `Language server: ${server}`,
    `Daemon: ${daemonState}`,
    running.size > 0 ? `Running: ${[...running].join(", ")}` : "No run in progress",
  ].join("\n");
  status.command = "skillwatch.showOutput";
  status.show();
}

/** Ask the binary whether the daemon runs (`skillwatch daemon status --json`). */
function pollDaemon(): void {
  const command = serverLaunch(readSettings(), bundled).command;
  execFile(command, ["daemon", "status", "--json"], { timeout: 5000 }, (error, stdout) => {
    // exit code 1 with `{"running": false}` is the answer "none runs", not a failure
    const spawnError = error && typeof error.code !== "number" ? error.message : undefined;
    daemonState = describeDaemon(stdout, spawnError);
    showStatus();
  });
}

/**
 * Poll the daemon a few times in the seconds after a skill file opens: the server starts the
 * daemon then, and the 30 s poll alone would show "not running" for that long.
 */
function pollSoon(): void {
  for (const delay of [1000, 3000, 8000]) {
    setTimeout(pollDaemon, delay);
  }
}

function createClient(output: vscode.OutputChannel): LanguageClient {
  const raw = readSettings();
  const launch = serverLaunch(raw, bundled);
  const { settings, problems } = serverSettings(raw);
  for (const problem of problems) {
    output.appendLine(problem);
    void vscode.window.showWarningMessage(problem);
  }
  const serverOptions: ServerOptions = { command: launch.command, args: launch.args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: settings,
    outputChannel: output,
    middleware: {
      executeCommand: (command, args, next) => {
        const active = vscode.window.activeTextEditor?.document;
        const file = active?.uri.scheme === "file" ? active.uri.fsPath : undefined;
        return next(command, commandArguments(args, file));
      },
    },
  };
  const created = new LanguageClient("skillwatch", "skillwatch", serverOptions, clientOptions);
  created.registerFeature(pickRunFeature);
  created.onDidChangeState(() => showStatus());
  return created;
}

async function start(output: vscode.OutputChannel): Promise<void> {
  client = createClient(output);
  try {
    await client.start();
    client.onRequest("skillwatch/pickRun", (params: PickRunParams) => pickRun(params));
    client.onNotification("$/progress", (p: { token: string; value: { kind: string; message?: string } }) => {
      if (typeof p.token === "string" && p.token.startsWith("skillwatch-run-")) {
        if (p.value.kind === "end") {
          running.delete(p.token);
        } else if (p.value.kind === "begin") {
          running.add(p.token);
        }
        showStatus();
      }
    });
    // the server shows the run's outcome itself (window/showMessage): a message here would
    // repeat it, as a second toast
    client.onNotification("skillwatch/runFinished", () => {
      running.clear();
      pollDaemon();
    });
  } catch (error) {
    const path = serverLaunch(readSettings(), bundled).command;
    void vscode.window.showErrorMessage(
      `skillwatch: could not start \`${path} lsp\` (${String(error)}). Set "skillwatch.path" to the skillwatch binary.`,
    );
  }
  showStatus();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("skillwatch");
  const candidate = bundledBinaryPath(context.extensionPath, process.platform);
  bundled = fs.existsSync(candidate) ? candidate : undefined;
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  const timer = setInterval(pollDaemon, 30_000);
  context.subscriptions.push(output, status, { dispose: () => clearInterval(timer) });
  context.subscriptions.push(
    vscode.commands.registerCommand("skillwatch.showOutput", () => output.show()),
    vscode.commands.registerCommand("skillwatch.restartServer", async () => {
      await client?.stop();
      await start(output);
    }),
    vscode.workspace.onDidOpenTextDocument((document) => {
      if (document.uri.scheme === "file" && isSkillFile(document.uri.fsPath)) {
        pollSoon();
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration("skillwatch") || !client) {
        return;
      }
      if (event.affectsConfiguration("skillwatch.path")) {
        await client.stop();
        await start(output);
        return;
      }
      const { settings } = serverSettings(readSettings());
      await client.sendNotification("workspace/didChangeConfiguration", { settings: { skillwatch: settings } });
    }),
  );
  await start(output);
  pollDaemon();
  pollSoon();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
