//! Counts in words: "1 trial", "2 trials", "3 queries". Every count the CLI, the daemon and
//! the editor print goes through here, so none says "1 trials" and none falls back on
//! "trial(s)".
//!
//! The nouns counted are the project's own (trial, run, probe, query, case, pair, error,
//! retry, ...): all regular, so English's regular rule is the whole table: a consonant and
//! `y` become `ies`, a sibilant ending takes `es`, anything else takes `s`. A noun phrase
//! ("judge error", "reused baseline") is pluralised on its last word.

use std::borrow::Cow;
use std::fmt::Display;

/// A count of any integer type (`usize`, `u32`, `i64`, ...).
pub trait Count: Copy + Display + PartialEq + From<u8> {}

impl<T: Copy + Display + PartialEq + From<u8>> Count for T {}

/// `n` and `noun` agreeing with it: `count(1, "trial")` is "1 trial", `count(0, "query")`
/// "0 queries".
pub fn count(n: impl Count, noun: &str) -> String {
    format!("{n} {}", agree(n, noun))
}

/// `noun` as it agrees with `n` (singular for 1, plural otherwise, 0 included), for a count
/// written apart from its noun ("3/12 trials").
pub fn agree<N: Count>(n: N, noun: &str) -> Cow<'_, str> {
    if n == N::from(1) {
        Cow::Borrowed(noun)
    } else {
        Cow::Owned(plural(noun))
    }
}

/// The plural of a regular English noun (or of a phrase's last word).
pub fn plural(noun: &str) -> String {
    let consonant_y = noun.ends_with('y')
        && !noun[..noun.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u'])
        && noun.len() > 1;
    if consonant_y {
        return format!("{}ies", &noun[..noun.len() - 1]);
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| noun.ends_with(e))
    {
        return format!("{noun}es");
    }
    format!("{noun}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1u32, "trial"), "1 trial");
        assert_eq!(count(0i64, "trial"), "0 trials");
        assert_eq!(count(2usize, "trial"), "2 trials");
        assert_eq!(count(1u32, "query"), "1 query");
        assert_eq!(count(3u32, "query"), "3 queries");
        assert_eq!(count(2u32, "retry"), "2 retries");
        assert_eq!(count(2u32, "judge error"), "2 judge errors");
        assert_eq!(agree(12u32, "probe"), "probes");
        assert_eq!(agree(1u32, "probe"), "probe");
    }

    #[test]
    fn the_project_nouns_take_their_english_plurals() {
        for (one, many) in [
            ("trial", "trials"),
            ("run", "runs"),
            ("probe", "probes"),
            ("query", "queries"),
            ("case", "cases"),
            ("pair", "pairs"),
            ("attempt", "attempts"),
            ("skill", "skills"),
            ("file", "files"),
            ("finding", "findings"),
            ("timeout", "timeouts"),
            ("day", "days"),
            ("match", "matches"),
            ("access", "accesses"),
            ("field", "fields"),
        ] {
            assert_eq!(plural(one), many);
        }
    }
}
