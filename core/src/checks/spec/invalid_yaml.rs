//! SW102: a frontmatter that is not YAML: where the error is shown, and the message and fix
//! for the commonest causes, plain values YAML reads as something else (see [`quote_fix`]).

use crate::checks::context::Ctx;
use crate::checks::quote_fix::quote_fix;
use crate::fields::Place;
use crate::text::Span;
use crate::yaml::YamlError;

/// Report SW102 for the frontmatter `fm` (the YAML between the fences) that failed with `error`.
pub(super) fn report(ctx: &mut Ctx<'_>, fm: Span, error: &YamlError) {
    let text = &ctx.doc.text;
    let mut message = format!("frontmatter is not valid YAML: {}", error.describe(text));
    let fields: Vec<&str> = Place::Frontmatter.fields().iter().map(|f| f.name).collect();
    let fix = quote_fix(text, fm, error.span.start, &error.message, &fields).map(|(why, fix)| {
        message.push_str("; ");
        message.push_str(&why);
        fix
    });
    ctx.report_fix("SW102", error_span(text, fm, error), message, fix);
}

/// Where to point for a YAML error. The parser reports a tab at the start of the scalar it
/// was reading; the author needs the tab itself.
pub(crate) fn error_span(text: &str, fm: Span, error: &YamlError) -> Span {
    if error.message.contains("tab") {
        let at = error.span.start.min(fm.end);
        let from = text[..at].rfind('\n').map_or(0, |i| i + 1).max(fm.start);
        if let Some(i) = text[from..fm.end].find('\t') {
            return Span::new(from + i, from + i + 1);
        }
    }
    error.span
}

#[cfg(test)]
mod tests {
    use crate::checks::test_support::*;

    const COLON: &str = "license: Apache-2.0 or MIT: see LICENSE for which applies";

    #[test]
    fn a_colon_in_a_plain_value_is_quoted_and_the_result_parses() {
        let text = good_with("license: Apache-2.0", COLON);
        let found = check_rule(&text, "SW102");
        assert_eq!(found.len(), 1, "{found:?}");
        let d = &found[0];
        assert!(
            d.message.ends_with(
                "the value of `license` holds `: `, which YAML reads as a nested mapping: quote it"
            ),
            "{}",
            d.message
        );
        let repaired = fixed(&text, d);
        assert!(repaired.contains("license: 'Apache-2.0 or MIT: see LICENSE for which applies'\n"));
        assert!(check_rule(&repaired, "SW102").is_empty());
        // Single quotes in the value are doubled, and CRLF lines keep their `\r`.
        let text = good_with("license: Apache-2.0", "license: it's A: b").replace('\n', "\r\n");
        let repaired = fixed(&text, &check_rule(&text, "SW102")[0]);
        assert!(
            repaired.contains("license: 'it''s A: b'\r\n"),
            "{repaired:?}"
        );
        assert!(check_rule(&repaired, "SW102").is_empty());
    }

    #[test]
    fn a_value_starting_with_a_reserved_character_or_a_star_is_quoted() {
        let cases = [
            (
                "`MIT` or Apache-2.0",
                "starts with `` ` ``, which YAML reserves",
            ),
            (
                "@acme internal licence",
                "starts with `@`, which YAML reserves",
            ),
            ("%s licence", "starts with `%`, which YAML reserves"),
            (
                "*Proprietary*, see LICENSE",
                "starts with `*`, which YAML reads as an alias",
            ),
        ];
        for (value, why) in cases {
            let text = good_with("license: Apache-2.0", &format!("license: {value}"));
            let found = check_rule(&text, "SW102");
            assert_eq!(found.len(), 1, "{value}: {found:?}");
            assert!(
                found[0].message.ends_with(&format!("{why}: quote it")),
                "{}",
                found[0].message
            );
            let repaired = fixed(&text, &found[0]);
            let doc = crate::skill::SkillDocument::parse(repaired.clone());
            let crate::skill::Frontmatter::Parsed { root, .. } = &doc.frontmatter else {
                panic!("{repaired:?} does not parse");
            };
            assert_eq!(
                root.get("license").and_then(|e| e.value.as_str()),
                Some(value)
            );
        }
    }

    #[test]
    fn two_fields_joined_on_one_line_are_split_not_quoted() {
        let text = "---\nname: pdf-tools description: Extract text. Use when reading PDFs.\nlicense: MIT\n---\nBody\n";
        let d = &check_rule(text, "SW102")[0];
        assert!(
            d.message.ends_with(
                "`description:` follows the value of `name` on the same line: put it on a line of its own"
            ),
            "{}",
            d.message
        );
        let repaired = fixed(text, d);
        assert_eq!(
            repaired,
            "---\nname: pdf-tools\ndescription: Extract text. Use when reading PDFs.\nlicense: MIT\n---\nBody\n"
        );
        // CRLF stays CRLF
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(
            fixed(&crlf, &check_rule(&crlf, "SW102")[0]),
            repaired.replace('\n', "\r\n")
        );
        // a field name inside a sentence is quoted, as is one already set elsewhere
        for text in [
            "---\nname: a\ndescription: Use when the license: header is missing.\n---\n",
            "---\nname: a\nlicense: MIT description: x\ndescription: y\n---\n",
        ] {
            let d = &check_rule(text, "SW102")[0];
            assert!(d.fix.as_ref().unwrap().title.starts_with("Quote"), "{d:?}");
        }
    }

    #[test]
    fn two_bad_lines_are_repaired_one_save_at_a_time() {
        let text = good_with(
            "license: Apache-2.0",
            &format!("{COLON}\ncompatibility: Needs: python 3"),
        );
        let first = fixed(&text, &check_rule(&text, "SW102")[0]);
        let second = &check_rule(&first, "SW102")[0];
        assert!(
            second.message.contains("`compatibility`"),
            "{}",
            second.message
        );
        assert!(check_rule(&fixed(&first, second), "SW102").is_empty());
    }

    #[test]
    fn no_repair_where_a_quote_would_change_or_not_mend_the_text() {
        let cases = [
            // The value goes on over the next, more indented line.
            format!("{COLON}\n  and more"),
            // A comment would move inside the quotes.
            "license: A: b # note".to_string(),
            // Already quoted, a flow collection, an anchor.
            "license: \"A\": b".to_string(),
            "license: [A]: b".to_string(),
            "license: &x A: b".to_string(),
            // The error is not the value's colon: a wrongly indented key.
            "license: MIT\n  compatibility: x".to_string(),
        ];
        for case in cases {
            let text = good_with("license: Apache-2.0", &case);
            let found = check_rule(&text, "SW102");
            assert_eq!(found.len(), 1, "{case:?}: {found:?}");
            assert!(found[0].fix.is_none(), "{case:?}: {:?}", found[0].fix);
            assert!(
                !found[0].message.contains("quote it"),
                "{}",
                found[0].message
            );
        }
    }

    proptest::proptest! {
        /// A plain value with `: ` in it is repaired unless it holds a comment, and the
        /// repaired frontmatter parses with the field holding exactly the text written.
        #[test]
        fn the_repair_keeps_the_written_text(
            before in "[A-Za-z][A-Za-z0-9 ,.'\"()/_-]{0,30}",
            after in "[A-Za-z0-9 ,.:'\"#()/_-]{0,30}",
        ) {
            let value = format!("{before}: {after}").trim_end().to_string();
            let text = good_with("license: Apache-2.0", &format!("license: {value}"));
            let found = check_rule(&text, "SW102");
            proptest::prop_assert_eq!(found.len(), 1);
            proptest::prop_assert_eq!(found[0].fix.is_some(), !value.contains(" #"));
            if found[0].fix.is_some() {
                let repaired = fixed(&text, &found[0]);
                let doc = crate::skill::SkillDocument::parse(repaired.clone());
                let crate::skill::Frontmatter::Parsed { root, .. } = &doc.frontmatter else {
                    panic!("{repaired:?} does not parse");
                };
                let license = root.get("license").and_then(|e| e.value.as_str());
                proptest::prop_assert_eq!(license, Some(value.as_str()));
            }
        }
    }
}
