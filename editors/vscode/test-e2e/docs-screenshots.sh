#!/usr/bin/env bash
# Copy the screenshots of the last passing VS Code e2e run (tests/tests/vscode_web.rs, under
# target/vscode-e2e/) into docs/img/vscode-*.png, the ones docs/editors.md shows, made small
# with pngquant (Debian's package) when it is installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
from="$root/target/vscode-e2e/vscode_shows_findings_fixes_status_and_a_lift_lens"
to="$root/docs/img"
mkdir -p "$to"
for pair in 02-diagnostics:diagnostics 03-hover:hover 04a-quick-fix-menu:quick-fix \
  05-fix-all-on-save:fix-all-on-save 06-status-bar:status-bar 07-lens:lens 08a-pick-list:pick \
  09-running:running 10-lens-updated:lens-updated; do
  shot="$from/${pair%%:*}.png"
  out="$to/vscode-${pair##*:}.png"
  if command -v pngquant >/dev/null; then
    pngquant --quality 60-85 --speed 1 --strip --force --output "$out" "$shot"
  else
    cp "$shot" "$out"
  fi
done
du -ch "$to"/vscode-*.png | tail -1
