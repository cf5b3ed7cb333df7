//! Suggestions for misspelt names: the known name closest to a typo (`descripton` for
//! `description`, `licence` for `license`), shared by the frontmatter's and the eval files'
//! unknown-field rules so both suggest alike.

/// The known name closest to `key` by edit distance, if it is close enough to be a typo:
/// at most 2 edits (a quarter of the name for long names), and fewer than the name's length.
pub(crate) fn closest<'a, S: AsRef<str>>(key: &str, known: &'a [S]) -> Option<&'a str> {
    let within = |k: &str| 2.max(k.len() / 4).min(k.len().saturating_sub(1));
    known
        .iter()
        .map(AsRef::as_ref)
        // the distance is at least the difference in length: most names are ruled out so
        .filter(|k| key.len().abs_diff(k.len()) <= within(k))
        .map(|k| (edit_distance(key, k), k))
        .filter(|(d, k)| *d <= within(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance, in characters. Two rows, reused: it runs for every unknown key
/// against every known name.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
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
