// Drives a real VS Code (code-server, in Debian's Chromium through playwright-core) with the
// skillwatch extension installed, the way a skill author would: opens a broken SKILL.md, reads
// the Problems panel and the squiggles, hovers, applies a quick fix, saves with fix-all on
// save, reads the status bar, then runs the lift lens and waits for it to update by itself.
//
// Run by tests/tests/vscode_web.rs, which starts code-server, the scripted model server and
// the daemon's private folders, and asserts on what this writes. Input: the JSON file named by
// argv[2] (see `Config` below). Output: `out` (every step with `ok`, what it saw and its
// screenshot), and a PNG per step in `shots`. A failed step ends the walk: the later steps
// need its state.
//
// Nothing here decides the test: it records what the page shows; the Rust test asserts.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * @typedef {object} Config
 * @property {string} url         code-server's address with `?folder=` the workspace
 * @property {string} playwright  the playwright-core package folder
 * @property {string} chromium    the browser executable
 * @property {string} out         where the results go (JSON)
 * @property {string} shots       folder for the screenshots
 * @property {string} workspace   the workspace folder (for settings and reading files)
 * @property {string} broken      the broken SKILL.md, relative to the workspace
 * @property {string} lifted      the SKILL.md whose lens is run, relative to the workspace
 * @property {string} pick        the quick pick entry to choose (harness · model)
 * @property {string} hoverWants  the text of skillwatch's hover on `description:`
 * @property {number} runTimeoutMs how long the paired run may take
 */
/** @type {Config} */
const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const require = createRequire(join(config.playwright, "package.json"));
const { chromium } = require(config.playwright);

mkdirSync(config.shots, { recursive: true });
const results = { steps: [], console: [] };
const save = () => writeFileSync(config.out, JSON.stringify(results, null, 2));

/** Monaco writes spaces as U+00A0. */
const plain = (s) => (s ?? "").replace(/\u00a0/g, " ");

let page;

const pad = (n) => String(n).padStart(2, "0");

/** A screenshot within the current step (`07a-pick-list.png`). */
const extraShot = (name) => page.screenshot({ path: join(config.shots, `${pad(results.steps.length)}a-${name}.png`) });

/** Run one step: its screenshot is taken whether it passed or not. */
async function step(name, body) {
  const started = Date.now();
  const record = { name, ok: false };
  results.steps.push(record);
  try {
    Object.assign(record, (await body()) ?? {});
    record.ok = true;
  } catch (error) {
    record.error = String(error?.stack ?? error);
  }
  record.ms = Date.now() - started;
  record.shot = join(config.shots, `${pad(results.steps.length)}-${name}.png`);
  await page.screenshot({ path: record.shot }).catch((e) => (record.shotError = String(e)));
  save();
  if (!record.ok) {
    throw new Error(`step ${name} failed: ${record.error}`);
  }
}

/**
 * Call `probe` (in this process) until it returns a truthy value other than an empty array;
 * that value. (An empty array is truthy in JavaScript: a probe that collects what is drawn
 * once returned `[]` before the squiggles were drawn, and the step failed on it.)
 */
async function poll(what, probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = await probe();
    if (found && !(Array.isArray(found) && found.length === 0)) {
      return found;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Evaluate `probe` in the page until it returns a truthy value; that value. */
const until = (what, probe, arg, timeoutMs = 30_000) => poll(what, () => page.evaluate(probe, arg), timeoutMs);

/** The visible rows of the quick input (palette, quick open, quick pick). */
const quickRows = () => page.locator(".quick-input-widget .quick-input-list .monaco-list-row").filter({ visible: true });

/** Run a command from the command palette by its title. */
async function command(title) {
  await page.keyboard.press("Control+Shift+P");
  const input = page.locator(".quick-input-widget input").filter({ visible: true });
  await input.waitFor();
  await input.fill(`>${title}`);
  await quickRows().filter({ hasText: title }).first().waitFor();
  await page.keyboard.press("Enter");
}

/** Open a workspace file with Quick Open, and wait for its editor (by its breadcrumbs). */
async function open(relative) {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input").filter({ visible: true });
  await input.waitFor();
  await input.fill(relative);
  const parts = relative.split("/");
  const dir = parts.slice(0, -1).join("/");
  await quickRows().filter({ hasText: dir }).first().click();
  await until(`the editor of ${relative}`, (want) => {
    const crumbs = document.querySelector(".breadcrumbs-control")?.textContent?.replace(/\s+/g, "") ?? "";
    return crumbs.includes(want);
  }, parts.join(""));
  await page.locator(".editor-instance .monaco-editor .view-lines").first().waitFor();
}

/** Wait until the file's text passes `test`; its text. */
async function fileWith(file, what, test, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let text = readFileSync(file, "utf8");
  while (!test(text)) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the file holds:\n${text}`);
    }
    await page.waitForTimeout(200);
    text = readFileSync(file, "utf8");
  }
  return text;
}

/** The visible lines of the active editor: line number (1-based) to text. */
function editorLines() {
  const editor = document.querySelector(".editor-instance .monaco-editor");
  const tops = new Map();
  for (const n of editor.querySelectorAll(".margin-view-overlays > div")) {
    const number = n.querySelector(".line-numbers")?.textContent?.trim();
    if (number) tops.set(n.style.top, Number(number));
  }
  const lines = {};
  for (const l of editor.querySelectorAll(".view-lines > .view-line")) {
    const number = tops.get(l.style.top);
    if (number !== undefined) lines[number] = l.textContent.replace(/\u00a0/g, " ");
  }
  return lines;
}

/**
 * The squiggles of the active editor as line and columns (1-based, end exclusive), found by
 * where each decoration is drawn: the columns of the characters under its left and right
 * edges, measured with DOM ranges on the rendered line.
 */
function squiggles() {
  const editor = document.querySelector(".editor-instance .monaco-editor");
  const tops = new Map();
  for (const n of editor.querySelectorAll(".margin-view-overlays > div")) {
    const number = n.querySelector(".line-numbers")?.textContent?.trim();
    if (number) tops.set(n.style.top, Number(number));
  }
  const lineAt = new Map();
  for (const l of editor.querySelectorAll(".view-lines > .view-line")) {
    lineAt.set(l.style.top, l);
  }
  /** x (client) of the left edge of each column of a rendered line, and its end. */
  function columnEdges(line) {
    const edges = [];
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    let last = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        edges.push(rect.left);
        last = rect.right;
      }
    }
    edges.push(last ?? line.getBoundingClientRect().left);
    return edges;
  }
  const nearest = (edges, x) => {
    let best = 0;
    for (let i = 0; i < edges.length; i++) {
      if (Math.abs(edges[i] - x) < Math.abs(edges[best] - x)) best = i;
    }
    return { column: best + 1, off: Math.abs(edges[best] - x) };
  };
  const found = [];
  for (const holder of editor.querySelectorAll(".view-overlays > div")) {
    const line = lineAt.get(holder.style.top);
    const number = tops.get(holder.style.top);
    for (const s of holder.querySelectorAll("[class*='squiggly-']")) {
      if (!line || number === undefined) continue;
      const kind = [...s.classList].find((c) => c.startsWith("squiggly-")).slice("squiggly-".length);
      const rect = s.getBoundingClientRect();
      const edges = columnEdges(line);
      const start = nearest(edges, rect.left);
      const end = nearest(edges, rect.right);
      found.push({
        kind,
        line: number,
        start: start.column,
        end: end.column,
        offPx: Math.max(start.off, end.off),
        text: line.textContent.replace(/\u00a0/g, " ").slice(start.column - 1, end.column - 1),
      });
    }
  }
  return found.sort((a, b) => a.line - b.line || a.start - b.start);
}

/** Click at a column of an editor line (1-based), placing the cursor there. */
async function clickAt(lineStartsWith, column) {
  const point = await until(`a line starting ${lineStartsWith}`, ([prefix, col]) => {
    const editor = document.querySelector(".editor-instance .monaco-editor");
    for (const l of editor.querySelectorAll(".view-lines > .view-line")) {
      if (!l.textContent.replace(/\u00a0/g, " ").startsWith(prefix)) continue;
      const walker = document.createTreeWalker(l, NodeFilter.SHOW_TEXT);
      let seen = 0;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (seen + node.length >= col) {
          const range = document.createRange();
          range.setStart(node, col - 1 - seen);
          range.setEnd(node, Math.min(node.length, col - seen));
          const r = range.getBoundingClientRect();
          return { x: r.left + 1, y: r.top + r.height / 2 };
        }
        seen += node.length;
      }
    }
    return null;
  }, [lineStartsWith, column]);
  await page.mouse.click(point.x, point.y);
  return point;
}

/** The text of the visible hover widget, if one shows. */
function hoverText() {
  for (const h of document.querySelectorAll(".monaco-hover, .workbench-hover")) {
    const visible = h.offsetParent !== null && !h.classList.contains("hidden");
    const text = h.textContent?.trim();
    if (visible && text) return text;
  }
  return null;
}

/** The titles of the active editor's code lenses, as shown; null when it has none. */
function lenses() {
  const editor = document.querySelector(".editor-instance .monaco-editor");
  const titles = [...editor.querySelectorAll(".codelens-decoration > a, .codelens-decoration > span")]
    .map((e) => e.textContent.replace(/\u00a0/g, " ").trim())
    .filter((t) => t !== "" && t !== "|");
  return titles.length ? titles : null;
}

/** The skillwatch status bar item: its text and its tooltip (aria-label). */
function statusItem() {
  for (const item of document.querySelectorAll(".statusbar-item")) {
    if (item.id === "skillwatch.skillwatch" || item.textContent.includes("skillwatch")) {
      const label = item.querySelector("a")?.getAttribute("aria-label") ?? item.getAttribute("aria-label");
      return { id: item.id, text: item.textContent.trim(), label, icons: [...item.querySelectorAll(".codicon")].map((i) => i.className) };
    }
  }
  return null;
}

/** The notification toasts now visible. */
function toasts() {
  return [...document.querySelectorAll(".notification-toast-container .notification-list-item")].map((t) => ({
    message: t.querySelector(".notification-list-item-message")?.textContent?.trim() ?? "",
    buttons: [...t.querySelectorAll(".monaco-button")].map((b) => b.textContent.trim()),
  }));
}

async function main() {
  const browser = await chromium.launch({
    executablePath: config.chromium,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 760 } });
    page = await context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error" && results.console.length < 200) results.console.push(m.text().slice(0, 400));
    });
    await walk();
  } finally {
    save();
    await browser.close();
  }
}

async function walk() {
  await step("workbench", async () => {
    await page.goto(config.url);
    await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
    await page.locator(".explorer-folders-view").waitFor({ timeout: 60_000 });
    return {};
  });

  await step("diagnostics", async () => {
    await open(config.broken);
    await command("View: Focus Problems");
    const rows = await until("the Problems panel's skillwatch rows", () => {
      const found = [...document.querySelectorAll(".markers-panel .monaco-list-row")]
        .map((r) => r.textContent.replace(/\u00a0/g, " ").trim());
      if (found.filter((t) => /skillwatch\(?SW\d/.test(t)).length >= 2) return found;
      // a server that did not start says so in the status bar and a message: no use waiting
      const item = document.getElementById("skillwatch.skillwatch");
      const label = item?.querySelector("a")?.getAttribute("aria-label") ?? "";
      if (label.includes("Language server: stopped")) {
        const said = [...document.querySelectorAll(".notification-toast-container .notification-list-item-message")];
        return { stopped: label, said: said.map((m) => m.textContent.trim()) };
      }
      return null;
    }, undefined, 60_000);
    if (!Array.isArray(rows)) {
      throw new Error(`the language server is not running: ${JSON.stringify(rows)}`);
    }
    // the lenses above line 1 move every line down when they come: wait for them before
    // pointing at text
    await until("the lenses", lenses);
    // one squiggle per skillwatch row: both drawn, not the first of them
    const wanted = rows.filter((t) => /skillwatch\(?SW\d/.test(t)).length;
    const squiggled = await poll(`${wanted} squiggles`, async () => {
      const found = await page.evaluate(squiggles);
      return found.length >= wanted ? found : null;
    });
    return { problems: rows, squiggles: squiggled, lines: await page.evaluate(editorLines) };
  });

  await step("hover", async () => {
    await page.keyboard.press("Escape");
    const at = await clickAt("description:", 3);
    await page.mouse.move(at.x + 4, at.y);
    // VS Code shows each hover provider's part as it comes (its own chat-skill hover too): wait
    // for the text the test looks for, else report what showed
    let text = await until("a hover over description:", hoverText, undefined, 15_000);
    const deadline = Date.now() + 15_000;
    while (!plain(text).includes(config.hoverWants) && Date.now() < deadline) {
      await page.waitForTimeout(250);
      text = (await page.evaluate(hoverText)) ?? text;
    }
    return { hover: plain(text) };
  });

  await step("quick-fix", async () => {
    await page.mouse.move(5, 300);
    await clickAt("name:", 9);
    const menu = page.locator(".action-widget .monaco-list-row").filter({ visible: true });
    // Ctrl+. while the editor is still asking for the cursor's code actions can show nothing:
    // asked again, as a user would
    for (let attempt = 1; ; attempt++) {
      await page.keyboard.press("Control+.");
      const shown = await menu.first().waitFor({ timeout: 5_000 }).then(() => true, () => false);
      if (shown) break;
      if (attempt === 3) throw new Error("Ctrl+. showed no code action menu, three times");
      await page.keyboard.press("Escape");
    }
    const actions = (await menu.allTextContents()).map((t) => plain(t).trim());
    await extraShot("quick-fix-menu");
    await menu.filter({ hasText: "Set name to" }).first().click();
    const lines = await until("the fixed name line", () => {
      const editor = document.querySelector(".editor-instance .monaco-editor");
      const texts = [...editor.querySelectorAll(".view-lines > .view-line")].map((l) => l.textContent.replace(/\u00a0/g, " "));
      return texts.some((t) => t.startsWith("name: pdf-tools")) ? texts : null;
    });
    const problems = await until("SW108 gone from the Problems panel", () => {
      const rows = [...document.querySelectorAll(".markers-panel .monaco-list-row")]
        .map((r) => r.textContent.replace(/\u00a0/g, " ").trim())
        .filter((t) => /skillwatch\(?SW\d/.test(t));
      return rows.some((r) => r.includes("SW108")) ? null : rows;
    });
    return { actions, lines, problems, squiggles: await page.evaluate(squiggles) };
  });

  await step("fix-all-on-save", async () => {
    const file = join(config.workspace, config.broken);
    // without the setting, saving writes the text as it is (with the quick fix)
    await page.keyboard.press("Control+S");
    const savedPlain = await fileWith(file, "the quick fix saved", (t) => t.includes("name: pdf-tools\n"));
    // with it (workspace settings, as docs/editors.md says), saving applies every fix; the
    // settings file is read when its watcher fires, so the save is repeated until it has
    mkdirSync(join(config.workspace, ".vscode"), { recursive: true });
    writeFileSync(
      join(config.workspace, ".vscode/settings.json"),
      JSON.stringify({ "editor.codeActionsOnSave": { "source.fixAll.skillwatch": "explicit" } }, null, 2),
    );
    await clickAt("# ", 3);
    let savedFixed;
    let saves = 0;
    const deadline = Date.now() + 30_000;
    while (savedFixed === undefined) {
      await page.keyboard.press("Control+S");
      saves += 1;
      savedFixed = await fileWith(file, "fix-all on save", (t) => !t.includes("licence"), 2_000).catch((e) => {
        if (Date.now() > deadline) throw e;
        return undefined;
      });
    }
    const problems = await until("no skillwatch finding left", () =>
      [...document.querySelectorAll(".markers-panel .monaco-list-row")].every((r) => !/skillwatch\(?SW\d/.test(r.textContent)),
    );
    return { savedPlain, savedFixed, saves, problems, lines: await page.evaluate(editorLines) };
  });

  await step("status-bar", async () => {
    const item = await until("the daemon running in the status bar", () => {
      for (const item of document.querySelectorAll(".statusbar-item")) {
        const a = item.querySelector("a") ?? item;
        const label = a.getAttribute("aria-label") ?? "";
        if (label.includes("Daemon: running")) return true;
      }
      return null;
    }, undefined, 60_000).then(() => page.evaluate(statusItem));
    const box = await page.locator(".statusbar-item", { hasText: "skillwatch" }).first().boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const tooltip = await until("the status bar tooltip", hoverText, undefined, 10_000);
    await page.waitForTimeout(600); // its fade-in, for the screenshot
    return { item, tooltip: plain(tooltip) };
  });

  await step("lens", async () => {
    await page.mouse.move(600, 300);
    await open(config.lifted);
    const shown = await until("the lift lens", lenses);
    return { lenses: shown };
  });

  let clickedRunAt;
  await step("pick", async () => {
    await page.locator(".codelens-decoration a", { hasText: "Run paired eval" }).first().click();
    const rows = quickRows();
    const asked = await until("the harness pick (or a message saying why not)", () => {
      const pick = [...document.querySelectorAll(".quick-input-widget .quick-input-list .monaco-list-row")].some(
        (r) => r.offsetParent !== null,
      );
      const said = [...document.querySelectorAll(".notification-toast-container .notification-list-item-message")].map(
        (m) => m.textContent.trim(),
      );
      return pick ? "pick" : said.length ? said : null;
    }, undefined, 30_000);
    if (asked !== "pick") {
      throw new Error(`no harness pick; the editor said: ${JSON.stringify(asked)}`);
    }
    const title = plain(await page.locator(".quick-input-widget .quick-input-title").filter({ visible: true }).first().textContent());
    const items = (await rows.allTextContents()).map((t) => plain(t).trim());
    await extraShot("pick-list");
    await rows.filter({ hasText: config.pick }).first().click();
    const question = await until("the save question", () => {
      const t = [...document.querySelectorAll(".notification-toast-container .notification-list-item")]
        .map((n) => ({
          message: n.querySelector(".notification-list-item-message")?.textContent?.trim() ?? "",
          buttons: [...n.querySelectorAll(".monaco-button")].map((b) => b.textContent.trim()),
        }))
        .find((n) => n.message.startsWith("Keep "));
      return t ?? null;
    });
    await page.locator(".notification-toast-container .monaco-button", { hasText: "Save to" }).first().click();
    clickedRunAt = Date.now();
    await page.mouse.move(700, 400); // off the toasts: nothing in the editor is touched from here
    return { title, items, question };
  });

  await step("running", async () => {
    const item = await until("the status bar's running job", () => {
      for (const item of document.querySelectorAll(".statusbar-item")) {
        if (item.textContent.includes("skillwatch: run")) return item.textContent.trim();
      }
      return null;
    }, undefined, 30_000);
    const progress = await page.evaluate(toasts);
    return { item, progress };
  });

  await step("lens-updated", async () => {
    const titles = await poll(
      "a lift in the lens, with no action in the editor",
      async () => {
        const shown = await page.evaluate(lenses);
        return shown?.some((t) => t.startsWith("Lift ")) ? shown : null;
      },
      config.runTimeoutMs,
    );
    const shownAfterMs = Date.now() - clickedRunAt;
    const finished = await until("the run's end message", () => {
      const t = [...document.querySelectorAll(".notification-toast-container .notification-list-item-message")]
        .map((n) => n.textContent.trim())
        .find((m) => m.includes("Paired run"));
      return t ?? null;
    }, undefined, 30_000);
    const status = await page.evaluate(statusItem);
    return { lenses: titles, shownAfterMs, finished, status };
  });
}

main().catch((error) => {
  results.fatal = String(error?.stack ?? error);
  save();
  console.error(error);
  process.exit(1);
});
