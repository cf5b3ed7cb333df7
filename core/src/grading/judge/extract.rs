//! Getting the JSON object out of a judge model's reply.
//!
//! Judges wrap their JSON in prose, in ```json fences, in several fences (a code sample first),
//! add trailing commas, comments, smart quotes, or invalid escapes like `\_` (skill-validator
//! issues #99, #100). The reply is tried as: every fenced block, then every brace-balanced
//! object in the text (outermost first), each as is and then repaired; the first candidate
//! that parses to an object holding one of the `required` keys wins.

use serde_json::{Map, Value};

/// The JSON object in `reply` that has at least one of the `required` keys, or why there is
/// none.
pub fn extract_object(reply: &str, required: &[&str]) -> Result<Map<String, Value>, String> {
    let mut candidates = fenced_blocks(reply);
    candidates.extend(balanced_objects(reply));
    for candidate in &candidates {
        for text in [candidate.clone(), repair(candidate)] {
            if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text)
                && required.iter().any(|k| map.contains_key(*k))
            {
                return Ok(map);
            }
        }
    }
    let preview: String = reply.trim().chars().take(200).collect();
    Err(format!(
        "expected a JSON object with {} in the judge's reply, found {}",
        required.join(" or "),
        if preview.is_empty() {
            "an empty reply".to_owned()
        } else {
            format!("{preview:?}")
        }
    ))
}

/// The contents of ``` fences, in order.
fn fenced_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(0, |n| n + 1);
        let Some(end) = after[body_start..].find("```") else {
            break;
        };
        out.push(after[body_start..body_start + end].trim().to_owned());
        rest = &after[body_start + end + 3..];
    }
    out
}

/// Every brace-balanced `{...}` span, outermost ones first, respecting strings.
fn balanced_objects(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut stack = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' if !stack.is_empty() => in_string = true,
            b'{' => stack.push(i),
            b'}' => {
                if let Some(start) = stack.pop() {
                    spans.push((stack.len(), start, i + 1));
                }
            }
            _ => {}
        }
    }
    spans.sort_by_key(|(depth, start, _)| (*depth, *start));
    spans
        .into_iter()
        .map(|(_, s, e)| text[s..e].to_owned())
        .collect()
}

/// Common judge mistakes fixed: smart quotes, `//` and `/* */` comments, trailing commas,
/// invalid escapes (`\_` becomes `_`), raw newlines inside strings.
fn repair(text: &str) -> String {
    let text = text
        .replace(['\u{201c}', '\u{201d}'], "\"")
        .replace(['\u{2018}', '\u{2019}'], "'");
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            match c {
                '\\' => {
                    let next = chars.get(i + 1).copied();
                    match next {
                        Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u') => {
                            out.push('\\');
                            out.push(next.unwrap_or('\\'));
                        }
                        Some(other) => out.push(other),
                        None => {}
                    }
                    i += 2;
                    continue;
                }
                '"' => in_string = false,
                '\n' => {
                    out.push_str("\\n");
                    i += 1;
                    continue;
                }
                _ => {}
            }
            out.push(c);
            i += 1;
            continue;
        }
        match c {
            '"' => in_string = true,
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            ',' => {
                let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
                if matches!(next, Some('}' | ']')) {
                    i += 1;
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(reply: &str) -> Map<String, Value> {
        extract_object(reply, &["overall_score"]).unwrap()
    }

    #[test]
    fn plain_fenced_and_prose_wrapped_objects() {
        assert_eq!(get(r#"{"overall_score": 4}"#)["overall_score"], 4);
        let fenced = "Here is my verdict:\n```json\n{\"overall_score\": 3}\n```\nThanks.";
        assert_eq!(get(fenced)["overall_score"], 3);
        let prose =
            "I think {this} is fine. {\"overall_score\": 5, \"note\": \"a } in a string\"} done";
        assert_eq!(get(prose)["overall_score"], 5);
    }

    #[test]
    fn a_code_sample_before_the_verdict_is_skipped() {
        let reply = "The agent wrote:\n```csharp\nclass A { void F() { } }\n```\nVerdict:\n```json\n{\"overall_score\": 2}\n```";
        assert_eq!(get(reply)["overall_score"], 2);
    }

    #[test]
    fn trailing_commas_comments_smart_quotes_and_bad_escapes_are_repaired() {
        let reply = "{\n  // my scores\n  \"rubric_scores\": [{\"score\": 4,},],\n  \u{201c}overall_score\u{201d}: 4, /* fine */\n  \"overall_reasoning\": \"uses snake\\_case\nnames\",\n}";
        let m = get(reply);
        assert_eq!(m["overall_score"], 4);
        assert_eq!(m["overall_reasoning"], "uses snake_case\nnames");
        assert_eq!(m["rubric_scores"][0]["score"], 4);
    }

    #[test]
    fn no_object_is_a_located_error() {
        let e = extract_object("I refuse to answer.", &["overall_score"]).unwrap_err();
        assert!(
            e.contains("expected a JSON object with overall_score"),
            "{e}"
        );
        assert!(e.contains("I refuse"), "{e}");
        let wrong = extract_object(r#"{"score": 1}"#, &["overall_winner"]).unwrap_err();
        assert!(wrong.contains("overall_winner"));
        assert!(
            extract_object("", &["x"])
                .unwrap_err()
                .contains("an empty reply")
        );
    }
}
