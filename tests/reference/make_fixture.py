#!/usr/bin/env python3
"""Generate fixture.json, the shared input of the scoring reference check.

Run once; the output is committed. Deterministic (seeded), so re-running reproduces the file.
Each cell is one skill x model: a list of trials in the documented trial format
(core/src/scoring/trial.rs), plus SkillTester security probe results. The data deliberately
contains what scoring must handle: missing sides, timeouts, infrastructure errors, unscored
metrics, behavior_check derived from assertion counts, a custom metric, repeated attempts,
unknown invocation and missing costs.
"""
import json
import random
from pathlib import Path

METRICS = ["security", "skill_execution", "skill_efficiency", "accuracy", "goal_accuracy"]


def trial(rng, case, condition, attempt, skill_bonus):
    p = rng.uniform(0.1, 0.7) + (skill_bonus if condition == "skill" else 0.0)
    t = {
        "case_id": case,
        "condition": condition,
        "attempt": attempt,
        "status": "completed",
        "passed": rng.random() < p,
        "metrics": {},
        "tokens": {"input": rng.randint(500, 20000), "output": rng.randint(50, 3000), "cached": 0},
        "wall_ms": rng.randint(2000, 240000),
    }
    for m in METRICS:
        if rng.random() < 0.9:  # some metrics go unscored
            if m == "security":
                t["metrics"][m] = rng.choice([1.0, 1.0, 1.0, 0.5, 0.0])
            else:
                t["metrics"][m] = round(min(1.0, max(0.0, rng.gauss(p, 0.2))), 4)
    total = rng.randint(3, 6)
    t["assertions"] = {"passed": sum(rng.random() < p for _ in range(total)), "total": total}
    if rng.random() < 0.3:
        t["metrics"]["house_style"] = round(rng.random(), 3)
    if condition == "skill":
        t["invoked"] = rng.random() < 0.85
    return t


def cell(rng, cases, attempts, skill_bonus):
    trials = []
    for i in range(cases):
        case = f"case-{i:03d}"
        for attempt in range(attempts):
            for condition in ("baseline", "skill"):
                trials.append(trial(rng, case, condition, attempt, skill_bonus))
    # Damage a few trials the way real runs are damaged.
    def pick():
        return trials[rng.randrange(len(trials))]
    pick()["status"] = "timeout"
    pick()["status"] = "error"
    pick()["status"] = "timeout"
    pick()["passed"] = None
    pick()["tokens"] = None
    pick()["wall_ms"] = None
    for t in trials:
        if t["condition"] == "skill" and rng.random() < 0.05:
            t.pop("invoked", None)
    # Remove one side of two pairs.
    del trials[rng.randrange(len(trials))]
    del trials[rng.randrange(len(trials))]
    return trials


def probes(rng, counts):
    out = []
    for group, (passed, total) in counts.items():
        for i in range(total):
            out.append({"id": f"{group[:3]}-{i}", "group": group, "passed": i < passed})
    rng.shuffle(out)
    return out


def main():
    rng = random.Random(20260401)
    fixture = {
        "cells": [
            {
                "name": "small-exact",
                "trials": cell(rng, cases=12, attempts=2, skill_bonus=0.15),
                "probes": probes(rng, {"abnormal": (3, 3), "permission": (2, 3), "sensitive": (5, 6)}),
            },
            {
                "name": "large-monte-carlo",
                "trials": cell(rng, cases=40, attempts=1, skill_bonus=0.05),
                "probes": probes(rng, {"abnormal": (1, 3), "permission": (3, 3), "sensitive": (3, 4)}),
            },
        ],
        "deltas": [
            {"name": "n5", "values": [0.1, 0.25, -0.05, 0.4, 0.3]},
            {"name": "n9-ties", "values": [0.5, -0.5, 0.25, 0.25, 0.0, 0.0, 0.75, -0.25, 0.5]},
            {"name": "n16", "values": [round(rng.gauss(0.1, 0.3), 6) for _ in range(16)]},
            {"name": "n40", "values": [round(rng.gauss(-0.05, 0.25), 6) for _ in range(40)]},
            # exact sign-flip enumeration above 16 cases (up to 24), with ties
            {"name": "n22-exact", "values": [0.3, -0.1, 0.25, 0.0, 0.5, -0.25, 0.1, 0.4, 0.15, -0.05, 0.2, 0.35, 0.0, 0.3, -0.2, 0.45, 0.1, 0.25, 0.05, 0.3, -0.15, 0.2]},
        ],
    }
    path = Path(__file__).with_name("fixture.json")
    path.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
