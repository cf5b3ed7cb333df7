//! SW220-SW222: checks over the skills an agent sees together. A SKILL.md can be fine alone
//! while the set it is listed in is broken: two skills with one name, two descriptions the
//! agent cannot tell apart, or a listing too long for the harness to show whole.
//!
//! The set of a skill is every skill folder beside it: the folders with a SKILL.md in the
//! same parent folder, which is how agents install skills (`.claude/skills/`, a plugin's
//! `skills/`, `~/.codex/skills/`). What else a user has installed is unknown here, so the
//! listing budget is a lower bound of the real listing.
//!
//! - SW220: another skill of the set has the same `name`.
//! - SW221: the descriptions share at least [`SIMILAR`] of their content words (Jaccard
//!   index of the two word sets, common function words left out). The finding names the
//!   other skill and the words that tell them apart.
//! - SW222: the set's listing is over Claude Code's budget, and this skill is one whose
//!   description Claude Code would drop (see [`listing`]).
//! - SW223 (needs no set): the description, with `when_to_use`, is longer than Claude Code
//!   lists for one skill, so its end never reaches the agent.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use super::context::Ctx;
use crate::memo::FolderMemo;
use crate::skill::{Discovered, SKILL_FILE, SkillDocument, load_document};
use crate::text::Span;
use crate::yaml::Resolved;

/// The share of content words two descriptions must have in common to be reported as too
/// alike: on the corpus of real skills, the sibling pairs above it share most of their
/// wording and differ in one or two words (docs/check.md has the figures).
pub const SIMILAR: f64 = 0.6;

/// Claude Code's per-skill cap in the listing: the description (with ` - when_to_use`
/// appended) is cut to this many characters (`skillListingMaxDescChars`, default 1536).
pub const LISTING_DESCRIPTION_CHARS: usize = 1536;

/// Claude Code's listing budget in characters: 1% (`skillListingBudgetFraction`) of the
/// context window in characters, at 4 characters per token of a 200,000-token window. The
/// environment variable `SLASH_COMMAND_TOOL_CHAR_BUDGET` replaces it.
pub const LISTING_BUDGET_CHARS: usize = 8_000;

/// How long a single check (editor, daemon) trusts what it read of a folder's skills.
const SIBLINGS_TTL: Duration = Duration::from_secs(10);

/// Words left out of the similarity: they say nothing about what a skill does.
const FUNCTION_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "asks", "at", "be", "by", "can", "do",
    "for", "from", "how", "if", "in", "into", "is", "it", "its", "of", "on", "or", "should",
    "skill", "skills", "that", "the", "their", "them", "these", "this", "those", "to", "use",
    "used", "user", "uses", "using", "via", "when", "will", "with", "you", "your",
];

/// What a skill shows in the set: its name and the text the harness lists for it.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// The skill's folder.
    pub dir: PathBuf,
    /// The `name` field, or the folder's name without one.
    pub name: String,
    /// The description, with ` - when_to_use` appended when there is one (as Claude Code
    /// lists it).
    pub listed: String,
    /// Whether the agent is shown the skill at all (`disable-model-invocation: true` keeps
    /// its description out of the listing).
    pub listed_to_model: bool,
    /// The description's length in bytes, the start of `listed`.
    description_len: usize,
    /// The description's content words, for the similarity.
    words: BTreeSet<String>,
}

impl Member {
    /// The member a parsed SKILL.md in `dir` makes; None when its frontmatter does not parse
    /// (its own findings say why).
    pub fn of(dir: &Path, doc: &SkillDocument) -> Option<Member> {
        let root = doc.frontmatter_root()?;
        let text = |key: &str| root.get(key).and_then(|e| e.value.as_str()).map(str::trim);
        let folder = dir.file_name()?.to_string_lossy().into_owned();
        let name = text("name").filter(|n| !n.is_empty()).unwrap_or(&folder);
        let description = text("description").unwrap_or_default();
        let listed = match text("when_to_use").filter(|w| !w.is_empty()) {
            Some(when) => format!("{description} - {when}"),
            None => description.to_string(),
        };
        let hidden = root.get("disable-model-invocation").is_some_and(|e| {
            e.value
                .as_scalar()
                .is_some_and(|s| s.resolve() == Resolved::Bool(true))
        });
        Some(Member {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            words: content_words(description),
            description_len: description.len(),
            listed,
            listed_to_model: !hidden,
        })
    }
}

/// Where a check learns the other skills of a set.
pub(crate) enum SkillSets {
    /// Read them from disk, sharing what was read for [`SIBLINGS_TTL`] (a single check).
    Recent,
    /// One run's sets, by parent folder, each read at its first need and kept for the run.
    Run(FolderMemo<Vec<Member>>, Discovered),
}

impl SkillSets {
    /// A memo for one batch over `skills`.
    pub fn for_run(skills: &Discovered) -> SkillSets {
        SkillSets::Run(FolderMemo::new(), skills.clone())
    }

    /// The skills of the set `dir` belongs to, `dir` itself among them as read from disk.
    fn of(&self, dir: &Path) -> Arc<Vec<Member>> {
        let Some(parent) = dir.parent() else {
            return Arc::new(Vec::new());
        };
        match self {
            SkillSets::Recent => recent(parent),
            SkillSets::Run(learnt, skills) => learnt.get_or_compute(parent, || {
                let dirs = skills
                    .below(parent)
                    .map(|dirs| {
                        dirs.into_iter()
                            .filter(|d| d.parent() == Some(parent))
                            .collect()
                    })
                    .unwrap_or_else(|| skill_folders(parent));
                read_members(&dirs)
            }),
        }
    }
}

/// Report the set's findings on the SKILL.md of `ctx`.
pub(crate) fn check(ctx: &mut Ctx<'_>, sets: &SkillSets) {
    let Some(me) = Member::of(ctx.dir, ctx.doc) else {
        return;
    };
    let root = ctx.doc.frontmatter_root();
    let span_of = |key: &str| root.and_then(|r| r.get(key)).map(|e| e.value.span);
    let name_at = span_of("name").unwrap_or(Span::new(0, 3));
    let description_at = span_of("description").unwrap_or(name_at);
    cut_in_listing(ctx, &me, description_at);
    let set = sets.of(ctx.dir);
    let others: Vec<&Member> = set.iter().filter(|m| m.dir != ctx.dir).collect();
    if others.is_empty() {
        return;
    }
    duplicates(ctx, &me, &others, name_at);
    similar(ctx, &me, &others, description_at);
    over_budget(ctx, &me, &others, description_at);
}

fn cut_in_listing(ctx: &mut Ctx<'_>, me: &Member, at: Span) {
    let length = utf16_len(&me.listed);
    if !me.listed_to_model || length <= LISTING_DESCRIPTION_CHARS {
        return;
    }
    let what = if me.listed.len() > me.description_len {
        "the description and `when_to_use` together are"
    } else {
        "the description is"
    };
    ctx.report(
        "SW223",
        at,
        format!(
            "{what} {length} characters; Claude Code lists the first \
             {LISTING_DESCRIPTION_CHARS} of them, so the rest never reaches the agent when it \
             picks a skill: put what decides the choice first, or shorten it"
        ),
    );
}

fn duplicates(ctx: &mut Ctx<'_>, me: &Member, others: &[&Member], at: Span) {
    for other in others.iter().filter(|o| o.name == me.name) {
        ctx.report(
            "SW220",
            at,
            format!(
                "`{}` is also the name of the skill in `{}`, beside this one: an agent \
                 lists one name for two skills",
                me.name,
                other.dir.display()
            ),
        );
    }
}

fn similar(ctx: &mut Ctx<'_>, me: &Member, others: &[&Member], at: Span) {
    if me.words.is_empty() {
        return;
    }
    for other in others {
        let shared = me.words.intersection(&other.words).count();
        let all = me.words.union(&other.words).count();
        let likeness = shared as f64 / all.max(1) as f64;
        if likeness < SIMILAR {
            continue;
        }
        let differ: Vec<&str> = me
            .words
            .symmetric_difference(&other.words)
            .take(8)
            .map(String::as_str)
            .collect();
        let apart = if differ.is_empty() {
            "they use the same words".to_string()
        } else {
            format!("the words that tell them apart: `{}`", differ.join("`, `"))
        };
        ctx.report(
            "SW221",
            at,
            format!(
                "the description shares {:.0}% of its words with `{}`'s, beside this one, so an \
                 agent may not tell which to pick; {apart}",
                likeness * 100.0,
                other.name
            ),
        );
    }
}

fn over_budget(ctx: &mut Ctx<'_>, me: &Member, others: &[&Member], at: Span) {
    if !me.listed_to_model {
        return;
    }
    let mut set: Vec<&Member> = others.to_vec();
    set.push(me);
    set.retain(|m| m.listed_to_model);
    set.sort_by(|a, b| a.dir.cmp(&b.dir));
    let listing = listing(set.iter().map(|m| (m.name.as_str(), m.listed.as_str())));
    let Some(position) = set.iter().position(|m| std::ptr::eq(*m, me)) else {
        return;
    };
    if listing.full <= LISTING_BUDGET_CHARS || !listing.cut[position] {
        return;
    }
    let cut = listing.cut.iter().filter(|c| **c).count();
    ctx.report(
        "SW222",
        at,
        format!(
            "Claude Code lists the {} skills of this folder in {} characters, over its budget \
             of {LISTING_BUDGET_CHARS} (1% of a 200,000-token context): it would show {cut} of \
             them, this one included, by name only, and the agent would not know when to use it",
            set.len(),
            listing.full,
        ),
    );
}

/// Claude Code's skill listing for `entries` (name, listed text), in the order given.
#[derive(Debug, PartialEq)]
pub(crate) struct Listing {
    /// Its length in characters (UTF-16 code units, as JavaScript counts) with every
    /// description shown.
    pub full: usize,
    /// For each entry, whether its description would be dropped to fit the budget.
    pub cut: Vec<bool>,
}

/// The listing Claude Code builds (2.1.x): one `- name: description` line per skill, the
/// description cut to [`LISTING_DESCRIPTION_CHARS`]. When the lines are over
/// [`LISTING_BUDGET_CHARS`], every skill keeps its name, and descriptions are kept in the
/// order of the skills' recent use while they fit; with no history of use, that is the
/// listing's order.
pub(crate) fn listing<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> Listing {
    let lengths: Vec<(usize, usize)> = entries
        .map(|(name, listed)| {
            let name_only = 2 + utf16_len(name);
            let shown = utf16_len(listed).min(LISTING_DESCRIPTION_CHARS);
            (name_only, name_only + 2 + shown)
        })
        .collect();
    let newlines = lengths.len().saturating_sub(1);
    let full = lengths.iter().map(|(_, f)| f).sum::<usize>() + newlines;
    let mut cut = vec![false; lengths.len()];
    if full > LISTING_BUDGET_CHARS {
        let names = lengths.iter().map(|(n, _)| n).sum::<usize>() + newlines;
        let mut left = LISTING_BUDGET_CHARS.saturating_sub(names);
        for (i, (name_only, with)) in lengths.iter().enumerate() {
            let extra = with - name_only;
            if extra <= left {
                left -= extra;
            } else {
                cut[i] = true;
            }
        }
    }
    Listing { full, cut }
}

fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

fn content_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .filter(|w| FUNCTION_WORDS.binary_search(&w.as_str()).is_err())
        .collect()
}

/// The folders in `parent` that hold a SKILL.md, by name.
fn skill_folders(parent: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|d| d.join(SKILL_FILE).is_file())
        .collect();
    dirs.sort();
    dirs
}

fn read_members(dirs: &[PathBuf]) -> Vec<Member> {
    dirs.iter()
        .filter_map(|dir| {
            let doc = load_document(&dir.join(SKILL_FILE)).ok()?;
            Member::of(dir, &doc)
        })
        .collect()
}

/// One SKILL.md as last read: what it said, and the file's state then.
struct Seen {
    stamp: Option<(SystemTime, u64)>,
    member: Option<Member>,
}

/// The process-wide record of [`SkillSets::Recent`]: per parent folder, when it was listed
/// and each SKILL.md as last read.
type Record = std::collections::HashMap<PathBuf, (Instant, Vec<(PathBuf, Seen)>)>;

/// The skills of `parent` for a single check: listed again after [`SIBLINGS_TTL`], and then
/// only the SKILL.md files whose size or modification time changed are parsed again, so an
/// editor in a folder of hundreds of skills pays a listing, not hundreds of parses.
fn recent(parent: &Path) -> Arc<Vec<Member>> {
    recent_at(parent, Instant::now())
}

/// [`recent`] as of `now`.
fn recent_at(parent: &Path, now: Instant) -> Arc<Vec<Member>> {
    static RECORD: OnceLock<Mutex<Record>> = OnceLock::new();
    let record = RECORD.get_or_init(Default::default);
    let Ok(mut record) = record.lock() else {
        return Arc::new(read_members(&skill_folders(parent)));
    };
    let entry = record
        .entry(parent.to_path_buf())
        .or_insert_with(|| (now, Vec::new()));
    if entry.1.is_empty() || now.saturating_duration_since(entry.0) > SIBLINGS_TTL {
        let mut old = std::mem::take(&mut entry.1);
        entry.1 = skill_folders(parent)
            .into_iter()
            .map(|dir| {
                let stamp = std::fs::metadata(dir.join(SKILL_FILE))
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())));
                let known = old
                    .iter()
                    .position(|(d, seen)| *d == dir && seen.stamp.is_some() && seen.stamp == stamp)
                    .map(|i| old.swap_remove(i).1);
                let seen = known.unwrap_or_else(|| Seen {
                    stamp,
                    member: read_members(std::slice::from_ref(&dir)).pop(),
                });
                (dir, seen)
            })
            .collect();
        entry.0 = now;
    }
    Arc::new(
        entry
            .1
            .iter()
            .filter_map(|(_, s)| s.member.clone())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::test_support::*;
    use crate::checks::{CheckOptions, check_skill_dir};

    fn skill(root: &Path, folder: &str, frontmatter: &str) -> PathBuf {
        let dir = root.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let text = GOOD.replacen(
            "name: good-skill\n",
            &format!("name: {folder}\n{frontmatter}"),
            1,
        );
        std::fs::write(dir.join(SKILL_FILE), text).unwrap();
        dir
    }

    fn rules(dir: &Path) -> Vec<(&'static str, String)> {
        check_skill_dir(dir, &CheckOptions::default())[0]
            .diagnostics
            .iter()
            .filter(|d| d.rule.starts_with("SW22"))
            .map(|d| (d.rule, d.message.clone()))
            .collect()
    }

    #[test]
    fn function_words_are_sorted_for_the_binary_search() {
        assert!(FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn two_skills_of_one_folder_with_one_name_are_both_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let a = skill(tmp.path(), "invoices", "");
        let b = tmp.path().join("invoices-v2");
        std::fs::create_dir(&b).unwrap();
        std::fs::write(
            b.join(SKILL_FILE),
            good_with("name: good-skill", "name: invoices"),
        )
        .unwrap();
        let found = rules(&a);
        assert_eq!(found.len(), 2, "{found:?}"); // same name, same description
        assert_eq!(found[0].0, "SW220");
        assert!(found[0].1.contains("invoices-v2"), "{}", found[0].1);
        assert!(rules(&b).iter().any(|(r, _)| *r == "SW220"));
        // a folder of its own: no set
        let alone = tempfile::tempdir().unwrap();
        assert!(rules(&skill(alone.path(), "invoices", "")).is_empty());
    }

    #[test]
    fn descriptions_alike_name_each_other_and_the_words_that_differ() {
        let tmp = tempfile::tempdir().unwrap();
        let mri = "description: Generates synthetic body MRI volumes with NV-Generate. Not for production training data.\n";
        let brain = "description: Generates synthetic brain MRI volumes with NV-Generate. Not for production training data.\n";
        let other = "description: Plots training curves from TensorBoard logs into PNG files for reports.\n";
        let strip = |fm: &str| {
            GOOD.replace("description: Extracts tables from PDF invoices into CSV files. Use when the user asks to pull line items, totals or dates out of PDF invoices.\n", fm)
        };
        for (folder, fm) in [("mri", mri), ("mri-brain", brain), ("curves", other)] {
            let dir = tmp.path().join(folder);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(
                dir.join(SKILL_FILE),
                strip(fm).replace("good-skill", folder),
            )
            .unwrap();
        }
        let found = rules(&tmp.path().join("mri"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "SW221");
        assert!(
            found[0].1.contains("`mri-brain`'s") && found[0].1.contains("`body`, `brain`"),
            "{}",
            found[0].1
        );
        assert!(rules(&tmp.path().join("curves")).is_empty());
    }

    #[test]
    fn the_listing_keeps_descriptions_in_order_while_they_fit() {
        let long = "x".repeat(2000);
        // each entry: `- nNN: ` + 1536 characters = 1543; five fit in 8,000, the sixth not
        let names: Vec<String> = (0..8).map(|i| format!("n{i:02}")).collect();
        let eight = listing(names.iter().map(|n| (n.as_str(), long.as_str())));
        assert_eq!(eight.full, 8 * (2 + 3 + 2 + 1536) + 7);
        // names alone: 8 * 5 + 7 = 47; 7,953 left, 1,538 per description: 5 fit
        assert_eq!(
            eight.cut,
            [false, false, false, false, false, true, true, true]
        );
        let short = listing([("a", "b"), ("c", "d")].into_iter());
        assert_eq!(
            short,
            Listing {
                full: 6 + 1 + 6,
                cut: vec![false, false]
            }
        );
    }

    #[test]
    fn skills_cut_from_the_listing_are_named_and_hidden_ones_do_not_count() {
        let tmp = tempfile::tempdir().unwrap();
        let long = format!("when_to_use: {}\n", "Read invoices quickly. ".repeat(80));
        for i in 0..6 {
            skill(tmp.path(), &format!("s{i}"), &long);
        }
        let hidden = skill(
            tmp.path(),
            "s9",
            &format!("{long}disable-model-invocation: true\n"),
        );
        let cut = |i: usize| rules(&tmp.path().join(format!("s{i}")));
        assert!(cut(0).iter().all(|(r, _)| *r != "SW222"));
        let last = cut(5);
        let sw222 = last.iter().find(|(r, _)| *r == "SW222").expect("s5 is cut");
        assert!(sw222.1.contains("lists the 6 skills"), "{}", sw222.1);
        assert!(rules(&hidden).iter().all(|(r, _)| *r != "SW222"));
    }

    #[test]
    fn an_edited_sibling_is_read_again_once_the_listing_is_old() {
        let tmp = tempfile::tempdir().unwrap();
        let a = skill(tmp.path(), "a", "");
        skill(tmp.path(), "b", "");
        let names = |set: &[Member]| set.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
        let start = Instant::now();
        assert_eq!(names(&recent_at(tmp.path(), start)), ["a", "b"]);
        std::fs::write(
            a.join(SKILL_FILE),
            good_with("name: good-skill", "name: renamed-a"),
        )
        .unwrap();
        skill(tmp.path(), "c", "");
        assert_eq!(
            names(&recent_at(tmp.path(), start)),
            ["a", "b"],
            "trusted for the TTL"
        );
        let later = start + SIBLINGS_TTL + Duration::from_secs(1);
        assert_eq!(
            names(&recent_at(tmp.path(), later)),
            ["renamed-a", "b", "c"]
        );
    }

    #[test]
    fn a_description_longer_than_the_listing_shows_is_reported_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let when = format!("when_to_use: {}\n", "Read invoices quickly. ".repeat(80));
        let found = rules(&skill(tmp.path(), "long", &when));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .1
                .starts_with("the description and `when_to_use` together are")
        );
    }
}
