// Package the extension as a .vsix with @vscode/vsce (installed locally by `npm ci`), with the
// eval JSON Schemas (contributed to yamlValidation/jsonValidation) copied from the repository's
// schemas/. `--target linux-x64 --binary PATH` makes a platform-specific package carrying the
// skillwatch binary as bin/skillwatch, which the extension starts when skillwatch.path is unset.
// The file name carries the version (and target): skillwatch-<version>[-<target>].vsix.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";

const here = new URL("..", import.meta.url);
const { values } = parseArgs({ options: { target: { type: "string" }, binary: { type: "string" } } });
const { version } = JSON.parse(readFileSync(new URL("package.json", here), "utf8"));

const schemas = new URL("schemas/", here);
mkdirSync(schemas, { recursive: true });
const source = new URL("../../schemas/", here);
for (const name of readdirSync(source).filter((n) => n.endsWith(".schema.json"))) {
  copyFileSync(new URL(name, source), new URL(name, schemas));
}

const bin = new URL("bin/", here);
rmSync(bin, { recursive: true, force: true });
const args = ["--no-install", "vsce", "package"];
let out = `skillwatch-${version}.vsix`;
if (values.target) {
  if (!values.binary) {
    throw new Error("--target needs --binary PATH (the skillwatch binary built for that target)");
  }
  mkdirSync(bin);
  const name = values.target.startsWith("win32") ? "skillwatch.exe" : "skillwatch";
  copyFileSync(values.binary, new URL(name, bin));
  chmodSync(new URL(name, bin), 0o755);
  args.push("--target", values.target);
  out = `skillwatch-${version}-${values.target}.vsix`;
}
args.push("--out", out);
execFileSync("npx", args, { stdio: "inherit", cwd: here });
console.log(`packaged ${out}`);
