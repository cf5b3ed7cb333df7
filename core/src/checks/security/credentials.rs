//! SW301: credential-looking text. Each pattern names a provider's documented token shape;
//! a match that looks like a placeholder (`EXAMPLE`, `xxxx`, `your-key`, low entropy) is not
//! reported, and what is reported shows only a prefix and the length.

use std::sync::LazyLock;

use regex::Regex;

use super::super::context::Ctx;
use crate::text::Span;

/// One credential shape.
struct Pattern {
    /// What it is, for the message ("GitHub token").
    what: &'static str,
    /// The regex; capture group 1, when present, is the secret part to redact and test.
    regex: Regex,
    /// Literals one of which every match of `regex` contains. A text without any of them
    /// cannot match, so the regex is not run on it.
    required: Required,
}

/// Where a pattern's required literals are looked for.
#[derive(Clone, Copy)]
enum Required {
    /// In the text as it is.
    Exact(&'static [&'static str]),
    /// In the text with ASCII letters lowercased, for a case-insensitive pattern whose
    /// literal has no `k` or `s` (the only ASCII letters with a non-ASCII case partner; see
    /// `pattern::compile_folded`): any match's lowercase then contains the literal.
    Folded(&'static str),
}

impl Pattern {
    /// Whether `text` can hold a match at all; `lower` gives its ASCII-lowercased form.
    fn may_match(&self, text: &str, lower: &std::cell::OnceCell<String>) -> bool {
        match self.required {
            Required::Exact(literals) => literals.iter().any(|l| text.contains(l)),
            Required::Folded(literal) => lower
                .get_or_init(|| text.to_ascii_lowercase())
                .contains(literal),
        }
    }
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = |what, re: &str, literals| Pattern {
        what,
        regex: crate::checks::pattern::compile(re),
        required: Required::Exact(literals),
    };
    let aws_secret = Pattern {
        what: "AWS secret access key",
        regex: crate::checks::pattern::compile(
            r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#,
        ),
        required: Required::Folded("ecret"),
    };
    vec![
        p(
            "AWS access key id",
            r"\b((?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})\b",
            &["AKIA", "ASIA", "ABIA", "ACCA"],
        ),
        aws_secret,
        p(
            "GitHub token",
            r"\b(gh[pousr]_[A-Za-z0-9]{36,255})\b",
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        ),
        p(
            "GitHub token",
            r"\b(github_pat_[A-Za-z0-9_]{40,255})\b",
            &["github_pat_"],
        ),
        p(
            "Anthropic API key",
            r"\b(sk-ant-[A-Za-z0-9_-]{32,})",
            &["sk-ant-"],
        ),
        p(
            "OpenAI API key",
            r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]*T3BlbkFJ[A-Za-z0-9_-]+|sk-(?:proj-|svcacct-|admin-)[A-Za-z0-9_-]{40,}|sk-[A-Za-z0-9]{48})\b",
            &["sk-"],
        ),
        p(
            "Slack token",
            r"\b(xox[abposr]-[0-9A-Za-z-]{10,})",
            &["xox"],
        ),
        p(
            "Slack webhook URL",
            r"(https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,})",
            &["https://hooks.slack.com/services/"],
        ),
        p("Google API key", r"\b(AIza[0-9A-Za-z_-]{35})\b", &["AIza"]),
        p("Hugging Face token", r"\b(hf_[A-Za-z0-9]{34,})\b", &["hf_"]),
        p(
            "NVIDIA API key",
            r"\b(nvapi-[A-Za-z0-9_-]{40,})\b",
            &["nvapi-"],
        ),
    ]
});

/// Literals one of which every credential pattern contains: a pure literal alternation, which
/// the regex crate scans at memchr speed, so files without any of them cost one fast pass.
static ANCHORS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"AKIA|ASIA|ABIA|ACCA|(?i:ecret_?acce)|gh[pousr]_|github_pat_|sk-ant-|sk-proj-|sk-svcacct-|sk-admin-|T3BlbkFJ|xox[abposr]-|hooks\.slack\.com|AIza|hf_|nvapi-",
    )
    .expect("valid built-in regex")
});

/// Every pattern as one alternation: one pass over a file tells whether any credential shape
/// occurs at all (most files with an anchor have none), before the patterns run one by one.
static ANY: LazyLock<Regex> = LazyLock::new(|| {
    let alternatives: Vec<String> = PATTERNS
        .iter()
        .map(|p| format!("(?:{})", p.regex.as_str()))
        .collect();
    Regex::new(&alternatives.join("|")).expect("valid built-in regex")
});

static PRIVATE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"-----BEGIN ((?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?)-----\r?\n([A-Za-z0-9+/=:\- ]+\r?\n)*?([A-Za-z0-9+/=]{40,})",
    )
});

/// The literal every [`PRIVATE_KEY`] match contains, as a searcher built once: every text
/// file of every skill is searched for it (`str::contains` would build a Two-Way searcher per
/// call and scan without SIMD).
static PRIVATE_KEY_LITERAL: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"PRIVATE KEY"));

/// A credential found in a text.
pub(crate) struct Finding {
    /// Where the secret is.
    pub span: Span,
    /// The message, with the secret redacted.
    pub message: String,
}

/// Report every credential in the SKILL.md.
pub(super) fn check(ctx: &mut Ctx<'_>) {
    for finding in scan_text(&ctx.doc.text) {
        ctx.report("SW301", finding.span, finding.message);
    }
}

/// Every credential-looking string in `text` (SKILL.md or any other text file of the skill).
pub(crate) fn scan_text(text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    // Without an anchor and a match of some pattern, no pattern runs; with them, each pattern
    // whose literal occurs. (A pattern whose literal is absent finds nothing, so skipping it
    // changes no finding.)
    let anchored = ANCHORS.is_match(text) && ANY.is_match(text);
    let lower = std::cell::OnceCell::new();
    for pattern in PATTERNS
        .iter()
        .filter(|p| anchored && p.may_match(text, &lower))
    {
        for caps in pattern.regex.captures_iter(text) {
            let Some(m) = caps.get(1).or_else(|| caps.get(0)) else {
                continue;
            };
            if is_placeholder(m.as_str()) || out.iter().any(|f: &Finding| f.span.start == m.start())
            {
                continue;
            }
            out.push(Finding {
                span: Span::new(m.start(), m.end()),
                message: format!(
                    "credential-looking text: {} `{}`; revoke it and have the skill read it from \
                     the environment",
                    pattern.what,
                    redact(m.as_str())
                ),
            });
        }
    }
    if PRIVATE_KEY_LITERAL.find(text.as_bytes()).is_some() {
        for caps in PRIVATE_KEY.captures_iter(text) {
            let (Some(all), Some(kind)) = (caps.get(0), caps.get(1)) else {
                continue;
            };
            let header_end = all.start() + all.as_str().find('\n').unwrap_or(all.len());
            out.push(Finding {
                span: Span::new(all.start(), header_end),
                message: format!(
                    "credential-looking text: a {} block with key material; remove it and revoke the key",
                    kind.as_str()
                ),
            });
        }
    }
    out.sort_by_key(|f| f.span.start);
    out
}

/// `ghp_…(40 characters)`: enough to find it, not enough to use it.
/// `text` with every credential in it redacted (for quoting a line as evidence).
pub(crate) fn redact_in(text: &str) -> String {
    let mut out = text.to_string();
    for f in scan_text(text).iter().rev() {
        out.replace_range(
            f.span.start..f.span.end,
            &redact(&text[f.span.start..f.span.end]),
        );
    }
    out
}

pub(crate) fn redact(secret: &str) -> String {
    let prefix: String = secret.chars().take(4).collect();
    format!("{prefix}…({} characters)", secret.chars().count())
}

/// Documentation placeholders and dummy values: AWS's `EXAMPLE` keys, `xxxx`, `your-key`,
/// runs of one character, and anything with too little entropy to be generated.
fn is_placeholder(secret: &str) -> bool {
    let lower = secret.to_ascii_lowercase();
    let marked = [
        "example",
        "xxxx",
        "your",
        "dummy",
        "fake",
        "sample",
        "placeholder",
        "redacted",
        "test",
        "0000",
        "1234",
        "abcd",
    ]
    .iter()
    .any(|w| lower.contains(w));
    marked || entropy(secret) < 3.0
}

/// Shannon entropy in bits per character.
fn entropy(text: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in text.bytes() {
        counts[b as usize] += 1;
    }
    let n = text.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lazy pattern of this file compiles (a panic there poisons every later skill).
    #[test]
    fn every_pattern_compiles() {
        crate::checks::pattern::force_every_static!(
            include_str!("credentials.rs"),
            PATTERNS,
            ANCHORS,
            ANY,
            PRIVATE_KEY,
            PRIVATE_KEY_LITERAL
        );
    }

    /// A token-shaped string built at run time, so this file holds no literal secret.
    fn fake(prefix: &str, len: usize) -> String {
        let alphabet = b"Q7vLmZ2pX9kR4tW8nB3cY6hJ5dF1gS0aEuKiOoPl";
        let body: String = (0..len)
            .map(|i| alphabet[(i * 7 + 3) % alphabet.len()] as char)
            .collect();
        format!("{prefix}{body}")
    }

    #[test]
    fn finds_provider_tokens_and_redacts_them() {
        let gh = fake("ghp_", 36);
        let text = format!("token: {gh}\n");
        let found = scan_text(&text);
        assert_eq!(found.len(), 1);
        assert_eq!(&text[found[0].span.start..found[0].span.end], gh);
        assert!(
            found[0]
                .message
                .contains("GitHub token `ghp_…(40 characters)`")
        );
        assert!(!found[0].message.contains(&gh[4..]));
        for token in [
            fake("AKIA", 16).to_uppercase(),
            fake("sk-ant-api03-", 40),
            fake("xoxb-", 30),
            fake("hf_", 34),
        ] {
            assert_eq!(scan_text(&format!("x {token} y")).len(), 1, "{token}");
        }
    }

    /// The AWS secret pattern ignores case, so its anchor must too (a mixed-case name once
    /// slipped past the anchors, which listed four spellings).
    #[test]
    fn aws_secret_key_names_in_any_case_are_found() {
        let secret = fake("", 40);
        for name in [
            "aws_secret_access_key",
            "AWS_Secret_Access_Key",
            "AwsSecretACCESSKey",
        ] {
            let text = format!("{name} = \"{secret}\"\n");
            assert_eq!(scan_text(&text).len(), 1, "{text}");
        }
    }

    #[test]
    fn placeholders_are_not_credentials() {
        for text in [
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "sk-ant-your-key-goes-here-and-nothing-else-please",
            "hf_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
        ] {
            assert!(scan_text(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn private_key_blocks_need_key_material() {
        let body = fake("", 64);
        let text =
            format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n");
        let found = scan_text(&text);
        assert_eq!(found.len(), 1);
        assert_eq!(
            &text[found[0].span.start..found[0].span.end],
            "-----BEGIN RSA PRIVATE KEY-----"
        );
        assert!(!found[0].message.contains(&body));
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// Skipping a text without [`ANCHORS`], or a pattern whose required literals are
        /// absent, loses no match.
        #[test]
        fn required_literals_hold_for_every_match(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![
                        "AKIA", "ASIA", "ghp_", "gho_", "github_pat_", "sk-", "sk-ant-", "sk-proj-",
                        "T3BlbkFJ", "xoxb-", "xoxp-", "https://hooks.slack.com/services/T", "/B",
                        "AIza", "hf_", "nvapi-", "aws_secret_access_key=", "Aws_SeCReT_AcceSS_KEY: ",
                        "AWS\u{17F}ECRETACCE\u{17F}\u{17F}\u{212A}EY=", " ", "-", "_", "\n",
                    ]).prop_map(str::to_string),
                    "[A-Za-z0-9]{1,50}",
                ],
                0..12,
            )
        ) {
            let text = parts.concat();
            for pattern in PATTERNS.iter() {
                // The gate of `scan_text` first: without an anchor, no pattern may match.
                if !ANCHORS.is_match(&text) || !pattern.may_match(&text, &std::cell::OnceCell::new()) {
                    proptest::prop_assert!(
                        pattern.regex.find(&text).is_none(),
                        "{} in {text:?}",
                        pattern.what
                    );
                }
            }
        }
    }
}
