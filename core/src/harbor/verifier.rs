//! `tests/test.sh`: the case's assertions that need the sandbox, decided there.
//!
//! Only the `file_*` assertions need the files the agent left, which exist only in the
//! sandbox; the output assertions, constraints, invocation and the security scan read the
//! trajectory and are graded on import, as a local trial is. The script writes
//! `/logs/verifier/reward.json`: [`REWARD_KEY`] (1 when every sandbox assertion holds, so
//! Harbor's own stats mean something) and one key per assertion ([`assertion_key`]), which the
//! import puts in place of the workspace check. Globs are matched by `grep -E` with
//! [`crate::grading::glob::to_ere`], the same language as a local trial's; `file_contains`
//! reads a file's first 16 MiB, as locally.

use crate::evalspec::{Assertion, Case};
use crate::grading::assertions::MAX_FILE_BYTES;
use crate::grading::glob::to_ere;

use super::WORKDIR;
use super::manifest::MANIFEST_FILE;

/// Harbor's headline reward key.
pub const REWARD_KEY: &str = "reward";

/// Folders of the workdir the agent did not write (skills staged there by some agents):
/// globs never look inside them, as locally the staged skills are skipped.
const SKIPPED: &[&str] = &[".claude/skills", ".agents/skills", ".codex/skills"];

/// The reward key of the case's assertion at `index`.
pub fn assertion_key(index: usize) -> String {
    format!("assertion_{index}")
}

/// Whether an assertion is decided in the sandbox (it reads the workspace).
pub fn sandbox_checked(a: &Assertion) -> bool {
    matches!(
        a,
        Assertion::FileExists { .. }
            | Assertion::FileNotExists { .. }
            | Assertion::FileContains { .. }
            | Assertion::FileNotContains { .. }
    )
}

/// The verifier script of `case`.
pub fn test_sh(case: &Case) -> String {
    let mut s = String::from(
        "#!/bin/bash\n\
         # Written by `skillwatch export harbor`: the case's file assertions, decided in the\n\
         # sandbox; output assertions, constraints and skill use are graded by skillwatch on import.\n\
         mkdir -p /logs/verifier\n",
    );
    s.push_str(&format!(
        "cp /tests/{MANIFEST_FILE} /logs/verifier/{MANIFEST_FILE} 2>/dev/null || true\n"
    ));
    s.push_str(&format!("cd {WORKDIR} 2>/dev/null || cd /\n"));
    let prune = SKIPPED
        .iter()
        .map(|d| format!("-path ./{d} -prune"))
        .collect::<Vec<_>>()
        .join(" -o ");
    s.push_str(&format!(
        "FILES=\"$(find . \\( {prune} \\) -o -type f -print 2>/dev/null | sed 's|^\\./||')\"\n"
    ));
    s.push_str(
        "matching() { printf '%s\\n' \"$FILES\" | grep -E -- \"$1\" || true; }\n\
         contains() { head -c MAXBYTES \"$1\" 2>/dev/null | grep -qF -- \"$2\"; }\n\
         any_contains() { local f; while IFS= read -r f; do [ -n \"$f\" ] && contains \"$f\" \"$2\" && return 0; done <<< \"$(matching \"$1\")\"; return 1; }\n\
         ALL=1\nOUT=\"\"\n\
         put() { OUT=\"$OUT, \\\"$1\\\": $2\"; [ \"$2\" = 1 ] || ALL=0; echo \"$1 = $2 ($3)\"; }\n"
            .replace("MAXBYTES", &MAX_FILE_BYTES.to_string())
            .as_str(),
    );
    for (i, a) in case.assertions.iter().enumerate() {
        if let Some(test) = condition(a) {
            s.push_str(&format!(
                "if {test}; then put {key} 1 {what}; else put {key} 0 {what}; fi\n",
                key = assertion_key(i),
                what = quote(&describe(a)),
            ));
        }
    }
    s.push_str(&format!(
        "printf '{{\"{REWARD_KEY}\": %s%s}}\\n' \"$ALL\" \"$OUT\" > /logs/verifier/reward.json\n"
    ));
    s
}

/// The shell condition that holds when the assertion does.
fn condition(a: &Assertion) -> Option<String> {
    Some(match a {
        Assertion::FileExists { path } => format!("[ -n \"$(matching {})\" ]", glob(path)),
        Assertion::FileNotExists { path } => format!("[ -z \"$(matching {})\" ]", glob(path)),
        Assertion::FileContains { path, value } => {
            format!("any_contains {} {}", glob(path), quote(value))
        }
        Assertion::FileNotContains { path, value } => {
            format!("! any_contains {} {}", glob(path), quote(value))
        }
        _ => return None,
    })
}

fn glob(path: &str) -> String {
    quote(&to_ere(path.trim_start_matches("./")))
}

fn describe(a: &Assertion) -> String {
    match a {
        Assertion::FileExists { path } => format!("file_exists {path}"),
        Assertion::FileNotExists { path } => format!("file_not_exists {path}"),
        Assertion::FileContains { path, .. } => format!("file_contains {path}"),
        Assertion::FileNotContains { path, .. } => format!("file_not_contains {path}"),
        _ => String::new(),
    }
}

/// A single-quoted shell word.
pub(super) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::{FileKind, parse_suite};

    fn case(assertions: &str) -> Case {
        let yaml = format!("scenarios:\n  - name: a\n    prompt: p\n    assertions:\n{assertions}");
        parse_suite(FileKind::EvalYaml, &yaml, "tests/eval.yaml")
            .unwrap()
            .cases
            .remove(0)
    }

    #[test]
    fn only_file_assertions_get_a_reward_key() {
        let c = case(
            "      - type: output_contains\n        value: x\n      - type: file_exists\n        path: out/*.md\n",
        );
        let sh = test_sh(&c);
        assert!(!sh.contains("assertion_0"), "{sh}");
        assert!(sh.contains("put assertion_1 1"), "{sh}");
        assert!(sh.contains(&to_ere("out/*.md")), "{sh}");
        assert!(sh.contains("/logs/verifier/reward.json"));
        assert!(sh.contains("cp /tests/skillwatch.json /logs/verifier/skillwatch.json"));
    }

    #[test]
    fn values_are_quoted_for_the_shell() {
        let c = case(
            "      - type: file_contains\n        path: a.txt\n        value: \"it's $(rm -rf /)\"\n",
        );
        let sh = test_sh(&c);
        assert!(sh.contains(r#"'it'\''s $(rm -rf /)'"#), "{sh}");
    }
}
