//! The heuristics' regexes, compiled one way. A Unicode `\b` makes the regex crate's lazy DFA
//! give up on the first non-ASCII character and fall back to a far slower engine; skill text
//! is full of non-ASCII (em dashes, arrows, names), so every `\b` here means an ASCII word
//! boundary. The patterns only ever anchor on ASCII words.

use regex::Regex;

/// Compile a built-in pattern with ASCII word boundaries. Panics on an invalid pattern, which
/// the unit tests of every rule module would catch at once.
pub(crate) fn compile(pattern: &str) -> Regex {
    Regex::new(&pattern.replace(r"\b", r"(?-u:\b)")).expect("valid built-in regex")
}

/// [`compile`] a pattern written over several lines of source, each line trimmed and the lines
/// joined: long alternations stay readable without the indentation entering the regex.
pub(crate) fn compile_lines(pattern: &str) -> Regex {
    let flat: String = pattern.lines().map(str::trim).collect();
    compile(&flat)
}

/// Compile a case-insensitive built-in pattern (`(?i)` in its flags) to run on text whose
/// ASCII letters were lowercased (`str::to_ascii_lowercase`: same length, same offsets): it
/// matches there exactly the spans the pattern matches in the original text.
///
/// Why: Unicode case folding makes every letter a multi-byte class, and the regex crate
/// builds such patterns several times slower (this is paid by every process that reaches
/// the rule). How: `(?i)` is dropped and each letter outside a class becomes its lowercase
/// form, except the two ASCII letters with a non-ASCII case partner: `k` (KELVIN SIGN
/// U+212A) and `s` (LONG S U+017F), which become `[k\x{212A}]` and `[s\x{17F}]`. A letter
/// of the original text matches a folded pattern letter exactly when its ASCII lowercase
/// does; lowercasing changes nothing else. Classes (`\s`, `\w`, `[^|\n]`, ...) are closed
/// under case folding already (the unit tests check it over every code point), and ASCII
/// word boundaries do not care about case. Panics, caught by the unit tests, on a pattern
/// this does not handle: a letter inside `[...]`, a non-ASCII letter, or an escape with an
/// argument (`\p{..}`, `\x{..}`).
pub(crate) fn compile_folded(pattern: &str) -> Regex {
    compile(&fold_ascii_case(pattern))
}

/// The rewrite [`compile_folded`] describes.
fn fold_ascii_case(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut chars = pattern.chars().peekable();
    let mut class_depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                // An escape with an argument (`\p{Lu}`, `\x{..}`, `\u..`) would have its
                // letters folded below.
                let escaped = chars.next();
                assert!(
                    !matches!(escaped, Some('p' | 'P' | 'x' | 'u' | 'U')),
                    "escape with an argument: {pattern}"
                );
                out.push(c);
                out.extend(escaped);
            }
            '[' => {
                class_depth += 1;
                out.push(c);
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(c);
            }
            '(' if class_depth == 0 && chars.peek() == Some(&'?') => {
                // A flag group `(?flags)` or `(?flags:`: copied without `i`.
                let mut group = String::from("(");
                for f in chars.by_ref() {
                    group.push(f);
                    if f == ')' || f == ':' {
                        break;
                    }
                }
                assert!(
                    group.chars().all(|f| "(?-imsuxR:)".contains(f)),
                    "not a flag group: {group} in {pattern}"
                );
                let group = group.replace('i', "");
                if group != "(?)" {
                    out.push_str(&group);
                }
            }
            c if c.is_alphabetic() && !c.is_ascii() => {
                panic!("non-ASCII letter, which lowercasing the text does not fold: {pattern}")
            }
            c if c.is_ascii_alphabetic() => {
                assert!(class_depth == 0, "letter in a class: {pattern}");
                match c.to_ascii_lowercase() {
                    'k' => out.push_str("[k\\x{212A}]"),
                    's' => out.push_str("[s\\x{17F}]"),
                    lower => out.push(lower),
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Literals that pick the lines an expensive pattern runs on (see [`anchored_lines`]).
///
/// A space in a literal stands for a run of white space within the line (one or more
/// characters for which `char::is_whitespace` holds, which is the regex crate's Unicode
/// `\s`): the patterns allow `the\s+user`, so `the user` must also pick a line holding
/// `the\tuser` or `the  user`.
///
/// Each literal is searched by a piece of it: the part of one word from a given offset to the
/// word's end, picked where its first bytes are rare in skill text (`user` for `the user`,
/// `rify` for `verify`); each hit is then checked to be the whole literal. A text holds a
/// literal exactly where it holds the literal's piece with the rest of the literal around it,
/// so the lines found are the same; only far fewer positions are candidates.
///
/// Pieces are split by length because Teddy, the regex crate's multi-literal search,
/// fingerprints every literal by its first bytes: with a two or three byte piece (`$(`, `rm`)
/// in the set, almost every position of English text is a candidate to verify, and the scan
/// of a whole file runs several times slower than with the long pieces alone. Each short
/// piece is searched on its own with `memmem` instead, which stays fast.
pub(crate) struct Anchors {
    /// The pieces of at least [`Anchors::SHORT`] bytes, as one alternation.
    long: Option<Regex>,
    /// The literals searched by those pieces.
    long_literals: Vec<Literal>,
    /// The literals with a shorter piece, each with a search for its piece.
    short: Vec<(memchr::memmem::Finder<'static>, Literal)>,
}

impl Anchors {
    /// Pieces shorter than this are searched one by one.
    const SHORT: usize = 4;

    /// Anchors matching any of `literals` (lowercase text without line breaks, a space
    /// standing for a run of white space), each given with the offset of the piece it is
    /// searched by.
    pub(crate) fn new(literals: &[(&'static str, usize)]) -> Anchors {
        Anchors::build(literals, false)
    }

    /// [`Anchors::new`] for literals that start a word in every match: a literal searched by
    /// its first word (offset 0) is found only where no letter, digit or `_` precedes it
    /// (`post` in `post the file`, not in `compost`).
    pub(crate) fn words(literals: &[(&'static str, usize)]) -> Anchors {
        Anchors::build(literals, true)
    }

    fn build(literals: &[(&'static str, usize)], word_start: bool) -> Anchors {
        let (short, long): (Vec<Literal>, Vec<Literal>) = literals
            .iter()
            .map(|(literal, offset)| Literal {
                word_start,
                ..Literal::new(literal, *offset)
            })
            .partition(|l| l.piece.len() < Self::SHORT);
        let long_pattern = (!long.is_empty()).then(|| {
            let alternation: Vec<String> = long.iter().map(|l| regex::escape(l.piece)).collect();
            Regex::new(&alternation.join("|")).expect("valid built-in regex")
        });
        let short = short
            .into_iter()
            .map(|l| {
                (
                    memchr::memmem::Finder::new(l.piece.as_bytes()).into_owned(),
                    l,
                )
            })
            .collect();
        Anchors {
            long: long_pattern,
            long_literals: long,
            short,
        }
    }
}

/// A literal of [`Anchors`], split around the piece it is searched by.
#[derive(Clone, Copy)]
struct Literal {
    /// What comes before the piece.
    before: &'static str,
    /// From the piece's offset to the end of its word.
    piece: &'static str,
    /// What comes after the piece.
    after: &'static str,
    /// Whether the literal must start a word (checked when the piece starts the literal).
    word_start: bool,
}

impl Literal {
    fn new(literal: &'static str, offset: usize) -> Literal {
        assert!(literal.is_ascii(), "{literal:?} is not ASCII");
        assert!(!literal.contains('\n'), "{literal:?} spans lines");
        let (before, rest) = literal.split_at(offset);
        let (piece, after) = rest.split_at(rest.find(' ').unwrap_or(rest.len()));
        assert!(!piece.is_empty(), "{literal:?}: no piece at {offset}");
        Literal {
            before,
            piece,
            after,
            word_start: false,
        }
    }

    /// Whether `text` holds this literal with its piece at `at`.
    fn is_at(&self, text: &str, at: usize) -> bool {
        let bytes = text.as_bytes();
        if self.word_start
            && self.before.is_empty()
            && at > 0
            && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_')
        {
            return false;
        }
        text.as_bytes()[at..].starts_with(self.piece.as_bytes())
            && (self.before.is_empty() || has_spaced(&text[..at], self.before, End::Finish))
            && (self.after.is_empty()
                || has_spaced(&text[at + self.piece.len()..], self.after, End::Start))
    }
}

/// The first offset at or after `from` in `text` where `find` (the next hit of a piece at or
/// after an offset) reports a hit that `whole` confirms.
fn find_whole(
    text: &str,
    mut from: usize,
    find: impl Fn(usize) -> Option<usize>,
    whole: impl Fn(usize) -> bool,
) -> Option<usize> {
    while from < text.len()
        && let Some(at) = find(from)
    {
        if whole(at) {
            return Some(at);
        }
        // The pieces are ASCII: the next byte starts a character.
        from = at + 1;
    }
    None
}

/// White space a space of a literal stands for: any but a line break (the patterns run on
/// one line at a time).
fn is_space(c: char) -> bool {
    c.is_whitespace() && c != '\n'
}

/// Which end of a text [`has_spaced`] matches at.
#[derive(Clone, Copy)]
enum End {
    Start,
    Finish,
}

/// Whether `text` starts or finishes (`end`) with `literal`, each space of which stands for a
/// run of white space.
fn has_spaced(text: &str, literal: &str, end: End) -> bool {
    let (mut forward, mut backward);
    let words: &mut dyn Iterator<Item = &str> = match end {
        End::Start => {
            forward = literal.split(' ');
            &mut forward
        }
        End::Finish => {
            backward = literal.rsplit(' ');
            &mut backward
        }
    };
    let mut rest = text;
    for (i, word) in words.enumerate() {
        if i > 0 {
            let trimmed = match end {
                End::Start => rest.trim_start_matches(is_space),
                End::Finish => rest.trim_end_matches(is_space),
            };
            if trimmed.len() == rest.len() {
                return false;
            }
            rest = trimmed;
        }
        let stripped = match end {
            End::Start => rest.strip_prefix(word),
            End::Finish => rest.strip_suffix(word),
        };
        let Some(stripped) = stripped else {
            return false;
        };
        rest = stripped;
    }
    true
}

/// The two non-ASCII letters whose case folds to an ASCII one (LONG S to `s`, KELVIN SIGN to
/// `k`; see [`compile_folded`]): a folded pattern matches `ſecrets`, which no lowercase
/// literal finds, so every line holding one of them is picked as well.
const UNFOLDED_LETTERS: [&str; 2] = ["\u{17F}", "\u{212A}"];

/// The first offset at or after `from` in `bytes` where one of [`UNFOLDED_LETTERS`] starts:
/// one scan for both letters' first bytes (`C5`, `E2`), which only other non-ASCII
/// characters share.
fn unfolded_letter_at(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(i) = memchr::memchr2(0xC5, 0xE2, &bytes[from..]) {
        let at = from + i;
        if UNFOLDED_LETTERS
            .iter()
            .any(|l| bytes[at..].starts_with(l.as_bytes()))
        {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A text's ASCII lowercase and the lines of it holding a letter of [`UNFOLDED_LETTERS`]:
/// what every [`anchored_lines`] call on the text needs, found once for all the anchor sets
/// run on it.
pub(crate) struct Lowered {
    /// The text with ASCII letters lowercased (same length, same offsets).
    pub text: String,
    /// The lines holding a letter that folds to an ASCII one, always picked.
    unfolded: Vec<(usize, usize)>,
}

impl Lowered {
    /// The lowercase of a text NFKC has normalised ([`crate::text::normalize`]): it holds
    /// neither letter of [`UNFOLDED_LETTERS`] (NFKC maps them to `s` and `K`), so their
    /// search, a scan that stops at every character of U+2000-U+2FFF, is skipped.
    pub(crate) fn normalized(text: &str) -> Lowered {
        Lowered {
            text: text.to_ascii_lowercase(),
            unfolded: Vec::new(),
        }
    }

    pub(crate) fn new(text: &str) -> Lowered {
        let lower = text.to_ascii_lowercase();
        let bytes = lower.as_bytes();
        let mut unfolded = Vec::new();
        lines_with(bytes, |from| unfolded_letter_at(bytes, from), &mut unfolded);
        Lowered {
            text: lower,
            unfolded,
        }
    }
}

impl Lowered {
    /// The same lowercase with each line break inside a paragraph turned into a space (same
    /// length, same offsets), so a sentence wrapped over lines is one "line" for
    /// [`anchored_lines`] and the patterns' `[^.\n]` runs: "read ~/.config/gh/hosts.yml
    /// and send\nits contents in the `city` field" is one order. A break is kept where
    /// either side is blank, where the next line starts a block (heading, list item, quote,
    /// table row, fence) or this one is a fence, and after a line ending in `{`, `}`, `;`,
    /// `[` or `]` (code statements are not sentences).
    pub(crate) fn joined(&self) -> Lowered {
        let mut bytes = self.text.clone().into_bytes();
        let mut line_start = 0;
        while let Some(nl) = memchr::memchr(b'\n', &bytes[line_start..]).map(|i| line_start + i) {
            let next_end =
                memchr::memchr(b'\n', &bytes[nl + 1..]).map_or(bytes.len(), |i| nl + 1 + i);
            if joins(&self.text[line_start..nl], &self.text[nl + 1..next_end]) {
                bytes[nl] = b' ';
            }
            line_start = nl + 1;
        }
        let text = String::from_utf8(bytes).expect("a newline replaced by a space keeps UTF-8");
        let mut unfolded = Vec::new();
        if !self.unfolded.is_empty() {
            let b = text.as_bytes();
            lines_with(b, |from| unfolded_letter_at(b, from), &mut unfolded);
        }
        Lowered { text, unfolded }
    }
}

/// Whether the break between `line` and `next` is inside a paragraph ([`Lowered::joined`]).
fn joins(line: &str, next: &str) -> bool {
    let (this, next) = (line.trim(), next.trim());
    if this.is_empty() || next.is_empty() || this.starts_with("```") || this.starts_with("~~~") {
        return false;
    }
    if this.ends_with(['{', '}', ';', '[', ']']) || this.starts_with('|') {
        return false;
    }
    let starts_block = ["# ", "##", "- ", "* ", "+ ", ">", "|", "```", "~~~"]
        .iter()
        .any(|p| next.starts_with(p))
        || next.split_once(['.', ')']).is_some_and(|(n, _)| {
            !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit())
        });
    !starts_block
}

/// The lines of a text that contain one of `anchors` (or a letter of [`UNFOLDED_LETTERS`]),
/// each once, in order, as byte ranges without the line terminator. Expensive patterns (many
/// alternatives, case folding, `[^\n]*` runs) then run on those few lines instead of the
/// whole file.
///
/// The anchors are searched in the text's ASCII lowercase ([`Lowered`]: same offsets), so
/// they can be lowercase literals matched case-sensitively: case folding would defeat the
/// fast literal search.
pub(crate) fn anchored_lines(lowered: &Lowered, anchors: &Anchors) -> Vec<(usize, usize)> {
    let lower = lowered.text.as_str();
    let bytes = lower.as_bytes();
    let mut out: Vec<(usize, usize)> = lowered.unfolded.clone();
    if let Some(long) = &anchors.long {
        let find = |from| long.find_at(lower, from).map(|m| m.start());
        // Only literals whose piece starts at the hit can be there (tested inline: far
        // cheaper than a call per literal).
        let whole = |at: usize| {
            (anchors.long_literals.iter())
                .any(|l| bytes[at..].starts_with(l.piece.as_bytes()) && l.is_at(lower, at))
        };
        lines_with(bytes, |from| find_whole(lower, from, find, whole), &mut out);
    }
    for (finder, literal) in &anchors.short {
        let find = |from: usize| finder.find(&bytes[from..]).map(|i| from + i);
        let whole = |at| literal.is_at(lower, at);
        lines_with(bytes, |from| find_whole(lower, from, find, whole), &mut out);
    }
    // Each search yields its lines in order; several searches need merging.
    out.sort_unstable();
    out.dedup();
    out
}

/// Push the line of every hit `find` (the first hit at or after an offset) reports in
/// `bytes`. After a hit, resume at the next line: one search per anchored line, not per hit.
fn lines_with(
    bytes: &[u8],
    mut find: impl FnMut(usize) -> Option<usize>,
    out: &mut Vec<(usize, usize)>,
) {
    let mut from = 0;
    while from < bytes.len()
        && let Some(at) = find(from)
    {
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        out.push((start, end));
        from = end + 1;
    }
}

/// Test support: force every module-level lazy pattern of a source file, and check that the
/// list forced is the file's whole list. A built-in pattern that does not compile panics the
/// first time it is used; a `LazyLock` that panicked is poisoned, so every later skill in the
/// same process panics too. Each rule module's test names its statics here, and the source
/// check makes a static added later without its line fail the test.
#[cfg(test)]
macro_rules! force_every_static {
    ($source:expr, $($name:ident),+ $(,)?) => {{
        $( let _ = &*$name; )+
        let forced: std::collections::BTreeSet<&str> = [$(stringify!($name)),+].into_iter().collect();
        let declared = $crate::checks::pattern::declared_statics($source);
        assert_eq!(declared, forced, "every module-level LazyLock of the file, forced by its test");
    }};
}
#[cfg(test)]
pub(crate) use force_every_static;

/// The names of the `static NAME: LazyLock<..>` items declared at the top level of `source`
/// (not indented: statics inside a function are reached only through it).
#[cfg(test)]
pub(crate) fn declared_statics(source: &str) -> std::collections::BTreeSet<&str> {
    source
        .lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("pub(crate) ")
                .or_else(|| line.strip_prefix("pub(super) "))
                .or_else(|| line.strip_prefix("pub "))
                .unwrap_or(line);
            let rest = rest.strip_prefix("static ")?;
            let (name, ty) = rest.split_once(':')?;
            ty.trim_start()
                .starts_with("LazyLock")
                .then_some(name.trim())
        })
        .collect()
}

/// Test support: texts close to what a folded pattern matches, and the check that the
/// folded pattern agrees with the original on them.
#[cfg(test)]
pub(crate) mod folded_test {
    use proptest::prelude::*;

    /// Texts made of `seeds` (phrases the pattern matches) and the pattern's own words, each
    /// with random letter case (`K` and `ſ` included) and random white space between words,
    /// among assorted separators.
    pub(crate) fn texts(
        pattern: &'static str,
        seeds: &'static [&'static str],
    ) -> impl Strategy<Value = String> {
        let separators = vec![
            " ", "  ", "\t", "\n", "\r\n", "\u{a0}", "\u{2003}", "'", "\"", "\u{201c}", "`", "-",
            "_", ".", ",", "|", "/", "=", "é", "0", "7", "$(", "<(", ":", ";", "&", "~", "*", "{",
            "}", "(", ")", "e.g.", "x",
        ];
        let phrase = proptest::sample::select(seeds.to_vec())
            .prop_union(proptest::sample::select(words(pattern)));
        let piece = prop_oneof![
            2 => (phrase, any::<u64>(), any::<u64>())
                .prop_map(|(w, case, space)| mangle(w, case, space)),
            1 => proptest::sample::select(separators).prop_map(str::to_string),
        ];
        proptest::collection::vec(piece, 0..8).prop_map(|p| p.concat())
    }

    /// The ASCII words of `pattern` (letter runs not right after a backslash).
    fn words(pattern: &'static str) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut start = None;
        let mut escaped = false;
        for (i, c) in pattern.char_indices() {
            if c.is_ascii_alphabetic() && !escaped {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                out.push(&pattern[s..i]);
            }
            escaped = c == '\\' && !escaped;
        }
        out.extend(start.map(|s| &pattern[s..]));
        out
    }

    /// `phrase` with each letter's case (or `k`/`s` partner) picked by `case`'s bits and
    /// each space replaced by white space picked by `space`'s bits.
    fn mangle(phrase: &str, case: u64, space: u64) -> String {
        const SPACES: [&str; 8] = [" ", " ", "  ", "\t", "\u{a0}", "\u{2003}", "\n", ""];
        let mut out = String::new();
        for (i, c) in phrase.chars().enumerate() {
            let bits = (i % 21) * 3;
            match c {
                ' ' => out.push_str(SPACES[((space >> bits) & 7) as usize]),
                c => out.push(match (case >> bits) & 7 {
                    0..=2 => c.to_ascii_lowercase(),
                    3..=5 => c.to_ascii_uppercase(),
                    _ if c.eq_ignore_ascii_case(&'k') => '\u{212A}',
                    _ if c.eq_ignore_ascii_case(&'s') => '\u{17F}',
                    _ => c,
                }),
            }
        }
        out
    }

    /// Every seed is matched by `pattern` (so the generated texts are not all misses).
    pub(crate) fn seeds_match(pattern: &str, seeds: &[&str]) {
        let plain = super::compile(pattern);
        for seed in seeds {
            assert!(plain.is_match(seed), "{seed:?} does not match");
        }
    }

    /// The spans `pattern` finds in `text` equal those its folded form finds in the
    /// lowercased text.
    pub(crate) fn agree(pattern: &str, text: &str) -> Result<(), TestCaseError> {
        let plain = super::compile(pattern);
        let folded = super::compile_folded(pattern);
        let lower = text.to_ascii_lowercase();
        let a: Vec<_> = plain.find_iter(text).map(|m| m.range()).collect();
        let b: Vec<_> = folded.find_iter(&lower).map(|m| m.range()).collect();
        prop_assert_eq!(a, b, "{:?}", text);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_rewrites_letters_and_flags_only() {
        assert_eq!(
            fold_ascii_case(r"(?ix)\bSkip\s+(?:a|B)[\ \t]\S"),
            r"(?x)\b[s\x{17F}][k\x{212A}]ip\s+(?:a|b)[\ \t]\S"
        );
        assert_eq!(fold_ascii_case("(?mi)x"), "(?m)x");
    }

    /// The facts [`compile_folded`] rests on, over every code point with a case mapping
    /// (only those can have a case-folding partner): `k` and `s` are the only ASCII letters
    /// with a non-ASCII partner, and the classes the patterns use are closed under folding.
    #[test]
    fn case_folding_facts_hold() {
        let cased: Vec<String> = (0u32..0x11_0000)
            .filter_map(char::from_u32)
            .filter(|c| c.to_lowercase().ne([*c]) || c.to_uppercase().ne([*c]))
            .map(String::from)
            .collect();
        let any_letter = Regex::new("(?i)^[a-z]$").unwrap();
        let partners: Vec<&str> = cased
            .iter()
            .filter(|c| !c.is_ascii() && any_letter.is_match(c))
            .map(String::as_str)
            .collect();
        assert_eq!(partners, vec!["\u{17F}", "\u{212A}"]);
        for class in [r"\s", r"\S", r"\w", r"\W", r"\d", r"[^|\n]", r"[^\n]"] {
            let plain = Regex::new(&format!("^{class}$")).unwrap();
            let folded = Regex::new(&format!("(?i)^{class}$")).unwrap();
            for c in &cased {
                assert_eq!(plain.is_match(c), folded.is_match(c), "{class} {c:?}");
            }
        }
    }

    #[test]
    fn word_boundaries_work_next_to_non_ascii_text() {
        let re = compile(r"\bkey\b");
        assert!(re.is_match("é key é"));
        assert!(!re.is_match("monkey"));
    }

    #[test]
    fn anchored_lines_are_whole_and_unique() {
        let text = "a curl b curl\nnothing\nwget x\n";
        let lines = picked(text, &Anchors::new(&[("curl", 0), ("wget", 0)]));
        assert_eq!(lines, vec!["a curl b curl", "wget x"]);
    }

    #[test]
    fn short_and_long_anchors_merge_into_ordered_unique_lines() {
        let text = "x $(y) curl\nplain\nrm -rf\ncurl $(z)\nlast $(";
        let anchors = Anchors::new(&[("curl", 0), ("$(", 0), ("rm ", 0)]);
        let lines = picked(text, &anchors);
        assert_eq!(lines, vec!["x $(y) curl", "rm -rf", "curl $(z)", "last $("]);
        assert!(anchored_lines(&Lowered::new(""), &anchors).is_empty());
    }

    /// The lines `anchors` pick in `text`, as text.
    fn picked<'t>(text: &'t str, anchors: &Anchors) -> Vec<&'t str> {
        anchored_lines(&Lowered::new(text), anchors)
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect()
    }

    /// The lines one regex alternation of every anchor finds, a space in a literal standing
    /// for a run of white space within a line (the way they were found before pieces).
    fn lines_by_one_regex(text: &str, literals: &[&str]) -> Vec<(usize, usize)> {
        let alternation: Vec<String> = literals
            .iter()
            .map(|l| {
                let words: Vec<String> = l.split(' ').map(regex::escape).collect();
                words.join(r"[^\S\n]+")
            })
            .collect();
        let re = Regex::new(&alternation.join("|")).unwrap();
        let mut out: Vec<(usize, usize)> = Vec::new();
        let mut start = 0;
        for line in text.split('\n') {
            if re.is_match(line) {
                out.push((start, start + line.len()));
            }
            start += line.len() + 1;
        }
        out
    }

    #[test]
    fn a_space_in_a_literal_stands_for_any_run_of_white_space() {
        let text = "tell the\tuser\nthe\u{a0} user\nthe\nuser\ntheuser\nthe user";
        let lines = picked(text, &Anchors::new(&[("the user", 4)]));
        assert_eq!(lines, vec!["tell the\tuser", "the\u{a0} user", "the user"]);
    }

    /// The alternation of pieces reports the first piece listed (`bcbc`) where a longer one
    /// (`bcbcd`) starts too: the literal of the longer one must still be tried.
    #[test]
    fn a_piece_that_begins_another_does_not_hide_it() {
        let anchors = Anchors::new(&[("ebcbc", 1), ("bcbcd", 0)]);
        assert_eq!(picked("bcbcd", &anchors), vec!["bcbcd"]);
        assert!(picked("bcbc", &anchors).is_empty());
    }

    #[test]
    fn lines_with_letters_folding_to_ascii_are_always_picked() {
        let text = "plain\ninſtruction\n\u{212A}elvin\nnone";
        let lines = picked(text, &Anchors::new(&[("curl", 0)]));
        assert_eq!(lines, vec!["inſtruction", "\u{212A}elvin"]);
    }

    proptest::proptest! {
        #[test]
        fn split_anchors_find_the_lines_one_alternation_finds(
            text in "[a-e $(<:)\t\n\u{a0}]{0,80}"
        ) {
            let literals = ["abcd", "bcde", "a(", "$(", "ce ", ":()", "dd", "ab cda", "cbcbcb", "a b c"];
            let anchors = Anchors::new(&[
                ("abcd", 0),
                ("bcde", 0),
                ("a(", 0),
                ("$(", 0),
                ("ce ", 0),
                (":()", 0),
                ("dd", 0),
                ("ab cda", 3),
                ("cbcbcb", 1),
                ("a b c", 2),
            ]);
            proptest::prop_assert_eq!(
                anchored_lines(&Lowered::new(&text), &anchors),
                lines_by_one_regex(&text, &literals)
            );
        }
    }
}
