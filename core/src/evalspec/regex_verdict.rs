//! Whether an assertion pattern compiles with `fancy-regex`, without paying for the compile.
//!
//! SW404 and [`super::Pattern::new`] only need a yes, or fancy-regex's own error text. Building
//! a `fancy_regex::Regex` builds regex-automata engines (forward and reverse NFAs, prefilters,
//! a one-pass DFA) for every pattern, paid by every CLI run (docs/benchmarks.md). Most
//! assertion patterns are plain regular expressions (literals, classes, groups, repetition), and
//! for those fancy-regex's own compile is fully decided by three cheaper steps:
//!
//! 1. fancy-regex's parser (`Expr::parse_tree`, the first step of `Regex::new`, same flags);
//! 2. the tree holding only node kinds fancy-regex hands whole to regex-automata (its "easy"
//!    path: no look-around, back-reference, atomic group, conditional, subroutine, `\K`, `\G`,
//!    `\R`, byte literal or Oniguruma line anchor), so none of its analysis errors (variable
//!    look-behind, back-reference to a missing group, unsupported feature) can arise;
//! 3. regex-syntax parsing and translating the pattern fancy-regex would delegate
//!    (`Expr::to_str`, with the syntax options fancy-regex's delegate builder uses), which is
//!    where a delegated class such as `\p{Nope}` or a nesting too deep fails; plus an upper
//!    estimate of the NFA size well under regex-automata's size limit, the one error left to
//!    building the engine.
//!
//! When any step cannot vouch, [`compile_verdict`] compiles with `fancy_regex::Regex::new`, so
//! the error text of an invalid pattern, and the verdict on every pattern the cheap path
//! declines, is fancy-regex's own. The grader (`crate::grading`) still compiles each pattern it
//! runs with [`super::Pattern::compile`]; this module only decides validity.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use fancy_regex::{Assertion, Expr};
use regex_syntax::hir::{Class, Hir, HirKind};

/// `None` when `pattern` compiles with `fancy_regex::Regex::new`, else fancy-regex's reason.
/// Verdicts are cached process-wide (one check of an eval file asks twice per pattern, once
/// building the suite and once for SW404, and the editor re-checks on every keystroke); the
/// cache is cleared when it grows past a bound, so a long editing session cannot grow it
/// without limit.
pub(crate) fn compile_verdict(pattern: &str) -> Option<String> {
    const MAX_CACHED: usize = 4096;
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(verdict) = cache.lock().ok().and_then(|c| c.get(pattern).cloned()) {
        return verdict;
    }
    let verdict = if cheaply_compiles(pattern) {
        None
    } else {
        full_compile_verdict(pattern)
    };
    if let Ok(mut c) = cache.lock() {
        if c.len() >= MAX_CACHED {
            c.clear();
        }
        c.insert(pattern.to_string(), verdict.clone());
    }
    verdict
}

/// The reference verdict: build the regex.
fn full_compile_verdict(pattern: &str) -> Option<String> {
    fancy_regex::Regex::new(pattern)
        .err()
        .map(|e| e.to_string())
}

/// True only when `fancy_regex::Regex::new(pattern)` is certain to succeed; false means
/// "don't know" (the caller compiles), never "invalid".
pub(crate) fn cheaply_compiles(pattern: &str) -> bool {
    let Ok(tree) = Expr::parse_tree(pattern) else {
        return false;
    };
    if tree.contains_subroutines || !tree.backrefs.is_empty() || !is_delegated_whole(&tree.expr) {
        return false;
    }
    let mut delegated = String::with_capacity(pattern.len() + pattern.len() / 2);
    tree.expr.to_str(&mut delegated, 0);
    // fancy-regex's delegate builder: `SyntaxConfig::new().utf8(true).unicode(true)`, the
    // defaults of regex-syntax's parser.
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .utf8(true)
        .unicode(true)
        .build()
        .parse(&delegated)
    else {
        return false;
    };
    nfa_weight(&hir) <= MAX_VOUCHED_WEIGHT
}

/// True when every node of `expr` is one fancy-regex's analysis marks "easy" with default
/// options, so the whole pattern goes to regex-automata and the analysis cannot fail.
fn is_delegated_whole(expr: &Expr) -> bool {
    match expr {
        Expr::Empty | Expr::Any { .. } | Expr::Literal { .. } | Expr::Delegate { .. } => true,
        Expr::Assertion(a) => !matches!(
            a,
            Assertion::StartLineOniguruma { .. } | Assertion::EndTextIgnoreTrailingNewlines { .. }
        ),
        Expr::Concat(items) | Expr::Alt(items) => items.iter().all(is_delegated_whole),
        Expr::Group(child) => is_delegated_whole(child),
        Expr::Repeat { child, .. } => is_delegated_whole(child),
        _ => false,
    }
}

/// The largest [`nfa_weight`] vouched for. regex-automata refuses an NFA over 10 MiB
/// (`nfa_size_limit`); a weight unit stands for at most a few dozen bytes of NFA, so this
/// keeps vouched patterns far below the limit (the tests build every vouched pattern with a
/// limit a quarter of the default). Real assertion patterns weigh a few hundred to a few
/// thousand.
const MAX_VOUCHED_WEIGHT: u64 = 20_000;

/// An upper estimate of the Thompson NFA regex-automata builds for `hir`, in transitions:
/// a counted repetition copies its body once per allowed count, and a Unicode class range
/// can take several UTF-8 byte sequences of up to four bytes each.
fn nfa_weight(hir: &Hir) -> u64 {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(lit) => lit.0.len() as u64,
        HirKind::Class(Class::Unicode(class)) => 1 + 8 * class.ranges().len() as u64,
        HirKind::Class(Class::Bytes(class)) => 1 + class.ranges().len() as u64,
        HirKind::Capture(cap) => 2 + nfa_weight(&cap.sub),
        HirKind::Repetition(rep) => {
            let copies = u64::from(rep.max.unwrap_or(rep.min).max(rep.min) + 1);
            (1 + nfa_weight(&rep.sub)).saturating_mul(copies)
        }
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs
            .iter()
            .fold(1u64, |sum, sub| sum.saturating_add(1 + nfa_weight(sub))),
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::*;
    use crate::evalspec::{FileKind, parse_tree};
    use crate::yaml::{Node, Value};

    /// regex-automata's default `nfa_size_limit`.
    const DEFAULT_NFA_LIMIT: usize = 10 * (1 << 20);

    /// The parity every caller relies on: a vouched pattern compiles (also with a quarter of
    /// the NFA size limit, so the weight estimate has margin), and whatever `compile_verdict`
    /// says is exactly what `Regex::new` says.
    fn assert_parity(pattern: &str) -> Result<(), TestCaseError> {
        let reference = full_compile_verdict(pattern);
        if cheaply_compiles(pattern) {
            prop_assert_eq!(&reference, &None, "vouched for `{}`", pattern);
            let small = fancy_regex::RegexBuilder::new(pattern)
                .delegate_size_limit(DEFAULT_NFA_LIMIT / 4)
                .build();
            prop_assert!(
                small.is_ok(),
                "`{}` needs more than 1/4 of the NFA limit",
                pattern
            );
        }
        prop_assert_eq!(
            compile_verdict(pattern),
            reference,
            "verdict on `{}`",
            pattern
        );
        Ok(())
    }

    fn eval_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                eval_files(&path, out);
            } else if name == "eval.yaml" || name == "evals.json" {
                out.push(path);
            }
        }
    }

    fn patterns_in(node: &Node, out: &mut Vec<String>) {
        match &node.value {
            Value::Scalar(_) => {}
            Value::Sequence(items) => items.iter().for_each(|n| patterns_in(n, out)),
            Value::Mapping(entries) => {
                for e in entries {
                    match e.value.as_scalar() {
                        Some(s) if e.key.as_key() == Some("pattern") => out.push(s.text.clone()),
                        _ => patterns_in(&e.value, out),
                    }
                }
            }
        }
    }

    #[test]
    fn verdicts_match_fancy_regex_on_every_corpus_pattern() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus");
        let mut files = Vec::new();
        eval_files(&corpus, &mut files);
        let mut patterns = Vec::new();
        for path in &files {
            let (Some(kind), Ok(text)) = (FileKind::of_path(path), std::fs::read_to_string(path))
            else {
                continue;
            };
            if let Ok(tree) = parse_tree(kind, &text) {
                patterns_in(&tree, &mut patterns);
            }
        }
        assert!(
            !patterns.is_empty(),
            "no assertion pattern under {corpus:?}"
        );
        let vouched = patterns.iter().filter(|p| cheaply_compiles(p)).count();
        for p in &patterns {
            assert_parity(p).unwrap();
        }
        // The point of the cheap path: it answers for most real patterns.
        assert!(
            vouched * 10 >= patterns.len() * 9,
            "only {vouched} of {} corpus patterns vouched for",
            patterns.len()
        );
    }

    #[test]
    fn declines_what_fancy_regex_rejects_or_delegates_only_in_part() {
        for p in [
            r"(?<=a+)b",        // variable-length look-behind
            r"(?<=ab)c",        // look-behind
            r"(a)\2",           // back-reference to a missing group
            r"(a)\1",           // back-reference
            r"\k<name>",        // named back-reference, no such group
            r"(?>a+)b",         // atomic group
            r"a++",             // possessive
            r"(?(1)a|b)",       // conditional
            r"\p{NoSuchClass}", // unknown Unicode class, rejected by regex-syntax
            r"\w{1000}",        // NFA too big for the estimate
            r"(a{100}){100}",   // NFA too big
            r"\Ga",             // continue from previous match
            r"a\Kb",            // keep out
            r"(",               // parse error
        ] {
            assert!(!cheaply_compiles(p), "must decline `{p}`");
            assert_parity(p).unwrap();
        }
        for p in [
            r"\d+ ROWS",
            r"(?i)dear (alice|bob)\b",
            r"^#{1,3} [A-Z][\w-]*$",
            "a|b",
        ] {
            assert!(cheaply_compiles(p), "should vouch for `{p}`");
        }
    }

    fn one_of(pieces: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::sample::select(pieces).prop_map(str::to_string)
    }

    /// Regex-like strings from the pieces that decide fancy-regex's verdict: mostly pieces of
    /// valid patterns (so many samples are vouched for), then what fancy-regex compiles only
    /// in its VM, then plain syntax errors.
    fn pattern() -> impl Strategy<Value = String> {
        let plain = one_of(&[
            "a",
            "b",
            "ab",
            ".",
            r"\d",
            r"\w",
            r"\s",
            r"\b",
            r"\B",
            r"\pL",
            r"\p{Greek}",
            r"\x41",
            r"\u0041",
            r"\z",
            r"\A",
            r"\.",
            "[a-z]",
            "[^0-9]",
            r"[\w-]",
            "[[:alpha:]]",
            "[a-c&&b]",
            "^",
            "$",
            "|",
            "(",
            ")",
            "(?:",
            "(?i)",
            "(?x)",
            "(?m:",
            "(?s)",
            "(?P<n>",
            "(?<n>",
            "*",
            "+",
            "?",
            "*?",
            "+?",
            " ",
            "#",
        ]);
        let fancy = one_of(&[
            "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?(1)", r"\1", r"\2", r"\k<n>", "(?1)", "++",
            r"\G", r"\K", r"\R", r"\Z", r"\Q", r"\E",
        ]);
        let broken = one_of(&[
            r"\p{Nope}",
            r"\q",
            "\\",
            "[z-a]",
            "[",
            "]",
            "{",
            "(?",
            "(?<",
            "(?P<1>",
        ]);
        let atom = prop_oneof![
            10 => plain,
            3 => fancy,
            1 => broken,
            2 => (0u32..4, 0u32..4).prop_map(|(n, m)| format!("{{{n},{m}}}")),
            1 => (0u32..400).prop_map(|n| format!("{{{n}}}")),
            1 => (0u32..60).prop_map(|n| format!("{{{n},}}")),
        ];
        prop::collection::vec(atom, 0..12).prop_map(|parts| parts.concat())
    }

    /// Patterns built as trees, so groups balance and most samples are valid: leaves, then
    /// groups of every kind, concatenation, alternation and repetition around them.
    fn nested_pattern() -> impl Strategy<Value = String> {
        let leaf = one_of(&[
            "a",
            "xyz",
            ".",
            r"\d",
            r"\w",
            r"\W",
            r"\s",
            r"\b",
            r"\pL",
            r"\p{Han}",
            "[a-z]",
            r"[^\s]",
            r"[\w.-]",
            "^",
            "$",
            r"\A",
            r"\z",
            r"\Z",
            r"\1",
            r"\k<n>",
            r"\G",
            r"\K",
            r"\R",
            "",
            r"\p{Nope}",
            "[[:word:]]",
        ]);
        leaf.prop_recursive(4, 24, 3, |inner| {
            let open = one_of(&[
                "(", "(?:", "(?i:", "(?-i:", "(?x:", "(?<n>", "(?=", "(?!", "(?<=", "(?<!", "(?>",
                "(?(1)",
            ]);
            let quantifier = one_of(&[
                "*", "+", "?", "*?", "++", "{2}", "{1,3}", "{0,}", "{3,1}", "{30}", "{200}",
            ]);
            prop_oneof![
                (open, inner.clone()).prop_map(|(o, i)| format!("{o}{i})")),
                prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
                prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.join("|")),
                (inner, quantifier).prop_map(|(i, q)| format!("(?:{i}){q}")),
            ]
        })
    }

    proptest! {
        // Each case compiles the pattern twice; unoptimised builds (CI's `cargo test`) are
        // slow at that, so they run fewer cases.
        #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 400 } else { 2000 }))]
        #[test]
        fn cheap_verdict_agrees_with_fancy_regex(p in prop_oneof![pattern(), nested_pattern()]) {
            assert_parity(&p)?;
        }
    }
}
