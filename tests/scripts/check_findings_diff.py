#!/usr/bin/env python3
"""Assert that two `skillwatch` builds report the same findings: the guard for speed work.

A faster check must find exactly what the slower one found. This runs both binaries'
`check --json` over the same paths under both profiles and compares, per profile:
  * the count of findings per rule (printed as a table), and
  * every finding itself (file, rule, severity, span, message, fix), in order.
It exits 1 on any difference and prints the first few.

  check_findings_diff.py BASE_BIN NEW_BIN [PATH...]     (PATH defaults to ../shared/corpus)

To get BASE_BIN for a commit without disturbing the work tree (deps come from target/):
  git worktree add /tmp/sw-base <commit>
  CARGO_TARGET_DIR=target/findings-base cargo build --release -p skillwatch \\
      --manifest-path /tmp/sw-base/Cargo.toml
  # BASE_BIN is then target/findings-base/release/skillwatch
"""

import collections
import json
import subprocess
import sys

PROFILES = ("default", "agentskills")


def report(binary, paths, profile, jobs):
    out = subprocess.run(
        [binary, "check", *paths, "--json", "--profile", profile, "-j", str(jobs)],
        capture_output=True,
        text=True,
    )
    if out.returncode not in (0, 1):
        sys.exit(f"{binary} exited {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def findings(rep):
    rows = []
    for f in rep["files"]:
        for d in f["diagnostics"]:
            rows.append(
                (
                    d["path"],
                    d["rule"],
                    d["severity"],
                    d["span"]["start"],
                    d["span"]["end"],
                    d["message"],
                    json.dumps(d.get("fix"), sort_keys=True),
                )
            )
    return rows


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    base, new, paths = argv[0], argv[1], argv[2:] or ["../shared/corpus"]
    failed = False
    for profile in PROFILES:
        # The base runs on one thread, the new build on two: output must not depend on -j.
        a = findings(report(base, paths, profile, 1))
        b = findings(report(new, paths, profile, 2))
        ca = collections.Counter(r[1] for r in a)
        cb = collections.Counter(r[1] for r in b)
        print(f"profile {profile}: {len(a)} findings (base), {len(b)} (new)")
        print(f"  {'rule':6} {'base':>6} {'new':>6}")
        for rule in sorted(set(ca) | set(cb)):
            mark = "" if ca[rule] == cb[rule] else "   <-- differs"
            print(f"  {rule:6} {ca[rule]:6} {cb[rule]:6}{mark}")
        if a != b:
            failed = True
            sa, sb = set(a), set(b)
            for row in sorted(sa - sb)[:10]:
                print("  only in base:", row)
            for row in sorted(sb - sa)[:10]:
                print("  only in new: ", row)
            if sa == sb:
                print("  same findings in a different order")
    if failed:
        print("FINDINGS DIFFER")
        return 1
    print("same findings, per rule and one by one")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
