//! docs/rules.md, the page every diagnostic links to (LSP `codeDescription.href`): one section
//! per rule of the catalog, written from it. A unit test compares the page in the repository
//! with [`markdown`], so the page cannot drift from the catalog;
//! `SKILLWATCH_BLESS=1 cargo test -p skillwatch-core --lib rules_doc` rewrites it.

use super::catalog::{self, all_rules};
use super::diagnostic::Rule;

/// Where the page lives in the repository.
pub const PAGE: &str = "docs/rules.md";

/// The page's address on the repository's default branch.
const PAGE_URL: &str = "https://github.com/skillwatch/skillwatch/blob/main/docs/rules.md";

/// The section anchor of `rule` (GitHub's: the heading lowercased, spaces as dashes).
pub fn anchor(rule: &Rule) -> String {
    format!("{}-{}", rule.id.to_ascii_lowercase(), rule.name)
}

/// The address of `rule`'s section.
pub fn href(rule: &Rule) -> String {
    format!("{PAGE_URL}#{}", anchor(rule))
}

fn lower<T: std::fmt::Debug>(value: T) -> String {
    format!("{value:?}").to_ascii_lowercase()
}

/// The whole page.
pub fn markdown() -> String {
    let mut out = String::from(
        "# skillwatch rules\n\n\
         Written from the rule catalog (core/src/checks/catalog.rs) by\n\
         `SKILLWATCH_BLESS=1 cargo test -p skillwatch-core --lib rules_doc`: do not edit by hand.\n\
         Every diagnostic in the editor links to its section here; `skillwatch check --explain ID`\n\
         prints the same text. Severities are the defaults of the `default` profile\n\
         (`[check] rules` in skillwatch.toml, or the editor's settings, change them).\n\n\
         | Rule | Name | Severity | Category |\n|---|---|---|---|\n",
    );
    for rule in all_rules() {
        out.push_str(&format!(
            "| [{}](#{}) | {} | {} | {} |\n",
            rule.id,
            anchor(rule),
            rule.name,
            lower(rule.severity),
            lower(rule.category)
        ));
    }
    for rule in all_rules() {
        out.push_str(&format!(
            "\n## {} {}\n\n{} · {}\n\n{}\n",
            rule.id,
            rule.name,
            lower(rule.severity),
            lower(rule.category),
            rule.summary
        ));
        if let Some(text) = catalog::explain(rule.id).filter(|t| *t != rule.summary) {
            out.push_str(&format!("\n{text}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_page_is_written_from_the_catalog() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(PAGE);
        let want = markdown();
        if std::env::var_os("SKILLWATCH_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let found = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            found == want,
            "{PAGE} differs from the catalog: rewrite it with \
             SKILLWATCH_BLESS=1 cargo test -p skillwatch-core --lib rules_doc"
        );
    }

    /// The README says how many rules there are; it says the catalog's number (it once
    /// said 81 when the catalog held 82).
    #[test]
    fn the_readme_counts_the_catalogs_rules() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("README.md");
        let readme = std::fs::read_to_string(&path).unwrap();
        let n = all_rules().count();
        assert!(
            readme.contains(&format!("{n} rules over SKILL.md")),
            "README.md: expected \"{n} rules over SKILL.md\", the catalog's count"
        );
    }

    #[test]
    fn every_rule_has_its_own_section() {
        let page = markdown();
        let mut anchors: Vec<String> = all_rules().map(anchor).collect();
        for rule in all_rules() {
            assert!(page.contains(&format!("\n## {} {}\n", rule.id, rule.name)));
            assert!(href(rule).ends_with(&format!("#{}", anchor(rule))));
        }
        anchors.sort();
        anchors.dedup();
        assert_eq!(anchors.len(), all_rules().count());
    }
}
