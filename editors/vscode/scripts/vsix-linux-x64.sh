#!/usr/bin/env bash
# Package the linux-x64 .vsix with the release binary inside (bin/skillwatch), then unpack it
# and check that the binary inside runs: its version, and a check of the bundled examples.
# Run from anywhere, after `npm ci`; CI runs it from scripts/test, after the tests, whose
# release binary it reuses (the cargo build below then only checks it is up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(cd ../.. && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p skillwatch --bin skillwatch
npm run --silent compile
node scripts/package.mjs --target linux-x64 --binary "$root/target/release/skillwatch"
version=$(node -p 'require("./package.json").version')
vsix="skillwatch-$version-linux-x64.vsix"
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
python3 -m zipfile -e "$vsix" "$unpacked"
bin="$unpacked/extension/bin/skillwatch"
chmod +x "$bin" # zip extraction by Python keeps no mode; VS Code's installer does
"$bin" --version
"$bin" check "$root/examples/skills" --json >/dev/null || [ $? -eq 1 ] # 1: findings, still ran
for schema in eval-yaml evals-json; do
  test -s "$unpacked/extension/schemas/$schema.schema.json"
done
grep -q '"targetPlatform" *: *"linux-x64"\|TargetPlatform="linux-x64"' "$unpacked/extension.vsixmanifest"
echo "$vsix: bin/skillwatch runs ($(du -h "$vsix" | cut -f1))"
