//! Suggestions for misspelt names: the known name closest to a typo (`descripton` for
//! `description`, `licence` for `license`), shared by the frontmatter's and the eval files'
//! unknown-field rules so both suggest alike.

/// The known name closest to `key` by edit distance, if it is close enough to be a typo:
/// at most 2 edits (a quarter of the name for long names), and fewer than the name's length.
pub(crate) fn closest<'a, S: AsRef<str>>(key: &str, known: &'a [S]) -> Option<&'a str> {
    known
        .iter()
        .map(AsRef::as_ref)
        .map(|k| (edit_distance(key, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_field_and_other_words_do_not() {
        let known = ["name", "description", "license", "metadata"];
        assert_eq!(closest("descripton", &known), Some("description"));
        assert_eq!(closest("licence", &known), Some("license"));
        assert_eq!(closest("nmae", &known), Some("name"));
        assert_eq!(closest("version", &known), None);
        assert_eq!(closest("tags", &known), None);
    }
}
