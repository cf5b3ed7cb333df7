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

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use super::context::Ctx;
use crate::memo::FolderMemo;
use crate::skill::{Discovered, SKILL_FILE, Skill, SkillDocument, load_document};
use crate::text::Span;
use crate::yaml::Resolved;

/// The share of content words two descriptions must have in common to be reported as too
/// alike: on the corpus of real skills, the sibling pairs above it share most of their
/// wording and differ in one or two words (docs/check.md has the figures).
pub const SIMILAR: f64 = 0.6;

/// Claude Code's per-skill cap in the listing: the description (with ` - when_to_use`
/// appended) is cut to this many characters (`skillListingMaxDescChars`, default 1536).
pub const LISTING_DESCRIPTION_CHARS: usize = 1536;

/// Claude Code's skill-listing budget (2.1.328, read from its code and measured against it
/// with a scripted model; docs/check.md, SW222): 1% (`skillListingBudgetFraction`) of the
/// model's context window in characters, at 4 characters per token for the model families
/// Claude Code knows that rate for and 3 for every other name. The environment variable
/// `SLASH_COMMAND_TOOL_CHAR_BUDGET` replaces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ListingBudget {
    /// The whole listing's budget in characters.
    pub chars: usize,
}

/// The model families Claude Code 2.1.328 counts at 4 characters per token, with a
/// 200,000-token window unless the name asks for `[1m]`.
const FOUR_CHARS_PER_TOKEN: &[&str] = &[
    "claude-3-opus",
    "claude-3-sonnet",
    "claude-3-haiku",
    "claude-3-5-sonnet",
    "claude-3-5-haiku",
    "claude-3-7-sonnet",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-sonnet-4-0",
    "claude-sonnet-4-5",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
];

/// What Claude Code 2.1.328 lists of its own before any installed skill: its 13 bundled
/// skills (`dataviz`, `code-review`, ...), always with their descriptions, and their line
/// breaks. They take their share of the budget first.
pub const HARNESS_LISTING_CHARS: usize = 6_196 + 13;

impl ListingBudget {
    /// The budget under Claude Code's default model (`claude-opus-5-5` in 2.1.328, 1,000,000
    /// tokens at 3 characters): what `check` assumes, as it cannot know the model.
    pub const DEFAULT: ListingBudget = ListingBudget { chars: 30_000 };

    /// The smallest budget of today's models (`claude-sonnet-4-6`, `claude-opus-4-6` and older
    /// at 200,000 tokens and 4 characters), named in SW222's message.
    pub const SMALLEST: ListingBudget = ListingBudget { chars: 8_000 };

    /// The budget Claude Code gives the listing under `model` (as passed to `--model`; None
    /// is its default model). Newer models, aliases (`sonnet`) and names Claude Code does not
    /// know get a 1,000,000-token window at 3 characters per token.
    pub fn for_model(model: Option<&str>) -> ListingBudget {
        let Some(model) = model else {
            return ListingBudget::DEFAULT;
        };
        let lower = model.trim().to_ascii_lowercase();
        let (name, one_million) = match lower.strip_suffix("[1m]") {
            Some(name) => (name, true),
            None => (lower.as_str(), false),
        };
        let known = FOUR_CHARS_PER_TOKEN.contains(&canonical(name).as_str());
        let (window, per_token) = match (known, one_million) {
            (true, false) => (200_000, 4),
            (true, true) => (1_000_000, 4),
            (false, _) => (1_000_000, 3),
        };
        ListingBudget {
            chars: window * per_token / 100,
        }
    }

    /// What is left for installed skills once Claude Code has listed its own.
    pub fn for_installed(self) -> usize {
        self.chars.saturating_sub(HARNESS_LISTING_CHARS)
    }
}

/// A model name as Claude Code compares it with its families: dots and underscores as
/// dashes, without a provider prefix (`us.anthropic.`), a date (`-20250929`, `@20250929`) or a
/// Bedrock version (`-v1:0`).
fn canonical(model: &str) -> String {
    let name = model.replace(['.', '_'], "-");
    let name = name.find("claude-").map_or(name.as_str(), |at| &name[at..]);
    let name = name.split('@').next().unwrap_or(name);
    let name = match name.rfind("-v") {
        Some(at) if name[at + 2..].starts_with(|c: char| c.is_ascii_digit()) => &name[..at],
        _ => name,
    };
    match name.rsplit_once('-') {
        Some((head, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}

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
}

impl Member {
    /// The description's content words, sorted, for the similarity.
    fn words(&self) -> Vec<String> {
        content_words(self.description())
    }

    /// The description alone (`listed` may have `when_to_use` after it).
    fn description(&self) -> &str {
        &self.listed[..self.description_len]
    }

    /// Whether `other` shows the same in the set as this member.
    fn same_listing(&self, other: &Member) -> bool {
        self.name == other.name
            && self.listed == other.listed
            && self.listed_to_model == other.listed_to_model
    }

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
    /// One run's sets, by parent folder, each read at its first need and kept for the run,
    /// and the skill folders the run's walks found, by parent folder.
    Run(FolderMemo<Group>, Walked),
}

/// The skill folders a run's walks found, by parent folder: a walk that found a skill in a
/// folder entered that folder, so it found all the skills there are (as `discover` would).
/// Folders listed one by one vouch for nothing; their siblings are read from disk.
pub(crate) struct Walked(foldhash::HashMap<PathBuf, Vec<PathBuf>>);

/// A folder's skills as one run read them: the set, and each skill as loaded, for its own
/// check to take rather than read and parse it a second time.
pub(crate) struct Group {
    set: Arc<Set>,
    loaded: Mutex<Vec<Skill>>,
}

impl SkillSets {
    /// A memo for one batch over `skills`.
    pub fn for_run(skills: &Discovered) -> SkillSets {
        let mut walked: foldhash::HashMap<PathBuf, Vec<PathBuf>> = Default::default();
        for dir in skills.walked_dirs() {
            if let Some(parent) = dir.parent() {
                walked
                    .entry(parent.to_path_buf())
                    .or_default()
                    .push(dir.clone());
            }
        }
        SkillSets::Run(FolderMemo::new(), Walked(walked))
    }

    /// The set `dir` belongs to, `dir` itself among it as read from disk.
    fn of(&self, dir: &Path) -> Arc<Set> {
        match self {
            SkillSets::Recent => dir.parent().map_or_else(
                || Arc::new(Set::of(Vec::new(), ListingBudget::DEFAULT)),
                recent,
            ),
            SkillSets::Run(..) => self.group(dir).map_or_else(
                || Arc::new(Set::of(Vec::new(), ListingBudget::DEFAULT)),
                |g| Arc::clone(&g.set),
            ),
        }
    }

    /// The skill in `dir`, loaded with the others of its folder (a batch reads each folder's
    /// skills once, for the set); None for a single check, which loads its own.
    pub fn take_loaded(&self, dir: &Path) -> Option<Skill> {
        let group = self.group(dir)?;
        let mut loaded = group.loaded.lock().ok()?;
        let at = loaded.iter().position(|s| same(&s.dir, dir))?;
        Some(loaded.swap_remove(at))
    }

    fn group(&self, dir: &Path) -> Option<Arc<Group>> {
        let SkillSets::Run(learnt, Walked(walked)) = self else {
            return None;
        };
        let parent = dir.parent()?;
        Some(learnt.get_or_compute(parent, || {
            let dirs = walked
                .get(parent)
                .cloned()
                .unwrap_or_else(|| skill_folders(parent));
            let loaded: Vec<Skill> = dirs.iter().map(|d| Skill::load(d)).collect();
            let members = loaded
                .iter()
                .filter_map(|s| Member::of(&s.dir, s.document.as_ref().ok()?))
                .collect();
            Group {
                set: Arc::new(Set::of(members, ListingBudget::DEFAULT)),
                loaded: Mutex::new(loaded),
            }
        }))
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
    let claude = ctx.options.targets_harness("claude-code");
    if claude {
        cut_in_listing(ctx, &me, description_at);
    }
    let set = sets.of(ctx.dir);
    if set.others(ctx.dir).next().is_none() {
        return;
    }
    duplicates(ctx, &me, &set, name_at);
    // The set was judged with this skill as on disk; an editor's buffer may say otherwise,
    // and then this skill is judged against the others here.
    let as_judged = set
        .members
        .iter()
        .position(|m| same(&m.dir, ctx.dir) && m.same_listing(&me));
    let (alike, listing) = match as_judged {
        Some(i) => (
            set.alike[i]
                .iter()
                .map(|(j, likeness)| (*j, *likeness))
                .collect(),
            (set.cut[i], set.listing_chars, set.listed),
        ),
        None => judge_alone(&me, &set),
    };
    if !alike.is_empty() {
        similar(ctx, &me.words(), &set, &alike, description_at);
    }
    let (cut, chars, listed) = listing;
    if cut && claude {
        let how_many = set.cut.iter().filter(|c| **c).count().max(1);
        over_budget(ctx, chars, listed, how_many, description_at);
    }
}

/// `me` judged against the other members of `set`: the alike ones (by index, with their
/// likeness), and (whether the listing cuts `me`, its length, how many skills it shows).
fn judge_alone(me: &Member, set: &Set) -> (Vec<(usize, f64)>, (bool, usize, usize)) {
    let ids = set.ids_of(&me.words());
    let others = || (0..set.members.len()).filter(|i| !same(&set.members[*i].dir, &me.dir));
    let alike = others()
        .map(|i| (i, jaccard(&ids, &set.ids[i])))
        .filter(|(_, likeness)| *likeness >= SIMILAR)
        .collect();
    let mut shown: Vec<&Member> = others()
        .map(|i| &set.members[i])
        .filter(|m| m.listed_to_model)
        .collect();
    if !me.listed_to_model {
        return (alike, (false, 0, shown.len()));
    }
    shown.push(me);
    shown.sort_by(|a, b| a.dir.cmp(&b.dir));
    let listing = listing(
        shown.iter().map(|m| (m.name.as_str(), m.listed.as_str())),
        ListingBudget::DEFAULT,
    );
    let at = shown.iter().position(|m| std::ptr::eq(*m, me)).unwrap_or(0);
    (alike, (listing.cut[at], listing.full, shown.len()))
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

fn duplicates(ctx: &mut Ctx<'_>, me: &Member, set: &Set, at: Span) {
    for other in set.others(&me.dir).filter(|o| o.name == me.name) {
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

fn similar(ctx: &mut Ctx<'_>, words: &[String], set: &Set, alike: &[(usize, f64)], at: Span) {
    for (other, likeness) in alike {
        let theirs = set.members[*other].words();
        let apart: Vec<&str> = symmetric_difference(words, &theirs).take(8).collect();
        let apart = if apart.is_empty() {
            "they use the same words".to_string()
        } else {
            format!("the words that tell them apart: `{}`", apart.join("`, `"))
        };
        ctx.report(
            "SW221",
            at,
            format!(
                "the description shares {:.0}% of its words with `{}`'s, beside this one, so an \
                 agent may not tell which to pick; {apart}",
                likeness * 100.0,
                set.members[*other].name
            ),
        );
    }
}

/// The words of one sorted list or the other but not both, in order.
fn symmetric_difference<'w>(a: &'w [String], b: &'w [String]) -> impl Iterator<Item = &'w str> {
    let only = |x: &'w [String], y: &'w [String]| {
        x.iter()
            .filter(move |w| y.binary_search(w).is_err())
            .map(String::as_str)
    };
    let mut all: Vec<&str> = only(a, b).chain(only(b, a)).collect();
    all.sort_unstable();
    all.into_iter()
}

fn over_budget(ctx: &mut Ctx<'_>, chars: usize, listed: usize, cut: usize, at: Span) {
    let budget = ListingBudget::DEFAULT;
    ctx.report(
        "SW222",
        at,
        format!(
            "Claude Code lists the {listed} skills of this folder in {chars} characters; with \
             its default model it has {} for them (its {}-character budget less its own \
             built-in skills): it would show {cut} of them, this one included, by name only, \
             and the agent would not know when to use it (on claude-sonnet-4-6, \
             claude-opus-4-6 and older models only {} are left)",
            budget.for_installed(),
            budget.chars,
            ListingBudget::SMALLEST.for_installed(),
        ),
    );
}

/// Claude Code's skill listing for `entries` (name, listed text), in the order given.
#[derive(Debug, PartialEq)]
pub(crate) struct Listing {
    /// Its width ([`listing_width`]) with every description shown.
    pub full: usize,
    /// For each entry, whether its description would be dropped to fit the budget.
    pub cut: Vec<bool>,
}

/// The listing Claude Code builds (2.1.x): one `- name: description` line per skill, the
/// description cut to [`LISTING_DESCRIPTION_CHARS`], after its own skills
/// ([`HARNESS_LISTING_CHARS`]). When the lines are over `budget`, every skill keeps its name,
/// and descriptions are kept in the order of the skills' recent use while they fit in what
/// Claude Code's own leave; with no history of use, that is the listing's order.
pub(crate) fn listing<'a>(
    entries: impl Iterator<Item = (&'a str, &'a str)>,
    budget: ListingBudget,
) -> Listing {
    let lengths: Vec<(usize, usize)> = entries
        .map(|(name, listed)| {
            let name_only = 2 + listing_width(name);
            let shown = listing_width(&cut_for_listing(listed));
            (name_only, name_only + 2 + shown)
        })
        .collect();
    let newlines = lengths.len().saturating_sub(1);
    let full = lengths.iter().map(|(_, f)| f).sum::<usize>() + newlines;
    let mut cut = vec![false; lengths.len()];
    if full + HARNESS_LISTING_CHARS > budget.chars {
        let names = lengths.iter().map(|(n, _)| n).sum::<usize>() + newlines;
        let mut left = budget.for_installed().saturating_sub(names);
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

/// What Claude Code's listing shows the model of one skill staged among others: the same
/// computation as SW220, SW222 and SW223, asked of one staging instead of one folder, so
/// `skillwatch trigger` can tell before spending a token whether the skill can be picked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Visibility {
    /// The skill's name as listed.
    pub name: String,
    /// How many skills the listing shows the model, this one included when it is shown.
    pub listed_skills: usize,
    /// The listing's length in characters with every description shown.
    pub listing_chars: usize,
    /// The listed text's length (description, ` - when_to_use`), in characters.
    pub description_chars: usize,
    /// What keeps the agent from seeing the skill, or from seeing all of its description.
    pub problems: Vec<VisibilityProblem>,
}

/// One reason the listing does not show a skill as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VisibilityProblem {
    /// `disable-model-invocation: true`: the model is never shown it.
    Hidden,
    /// The listing is over the budget and shows this skill by name only (SW222).
    DroppedByBudget {
        /// The listing's budget in characters.
        budget: usize,
        /// What the harness's own skills leave of it for installed skills.
        for_installed: usize,
    },
    /// The description is cut to its first characters (SW223); the rest never reaches the model.
    DescriptionCut {
        /// The characters kept.
        kept: usize,
    },
    /// Another staged skill has the same name (SW220).
    NameCollision {
        /// The other skill's folder.
        other: PathBuf,
    },
    /// SKILL.md has no frontmatter the listing can read.
    Unreadable,
}

impl VisibilityProblem {
    /// Whether the model cannot pick the skill as written at all (a cut description still
    /// shows its beginning, so it only warns).
    pub fn blocks(&self) -> bool {
        !matches!(self, VisibilityProblem::DescriptionCut { .. })
    }
}

impl Visibility {
    /// Whether any problem keeps the model from picking the skill.
    pub fn blocked(&self) -> bool {
        self.problems.iter().any(VisibilityProblem::blocks)
    }
}

/// How Claude Code lists the skill in `target` when `others` are staged beside it (sibling
/// skills, decoys), in the listing's order (by folder), under `budget` (the model's:
/// [`ListingBudget::for_model`]).
pub fn visibility(target: &Path, others: &[PathBuf], budget: ListingBudget) -> Visibility {
    let mut dirs: Vec<PathBuf> = others
        .iter()
        .filter(|d| !same(d, target))
        .cloned()
        .chain([target.to_path_buf()])
        .collect();
    dirs.sort_by(|a, b| a.file_name().cmp(&b.file_name()).then(a.cmp(b)));
    let members = read_members(&dirs);
    let Some(me) = members.iter().position(|m| same(&m.dir, target)) else {
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
        return Visibility {
            name: name.unwrap_or_default(),
            listed_skills: members.iter().filter(|m| m.listed_to_model).count(),
            listing_chars: 0,
            description_chars: 0,
            problems: vec![VisibilityProblem::Unreadable],
        };
    };
    let set = Set::of(members, budget);
    let own = &set.members[me];
    let mut problems = Vec::new();
    if !own.listed_to_model {
        problems.push(VisibilityProblem::Hidden);
    }
    if set.cut[me] {
        problems.push(VisibilityProblem::DroppedByBudget {
            budget: budget.chars,
            for_installed: budget.for_installed(),
        });
    }
    let description_chars = utf16_len(&own.listed);
    if own.listed_to_model && description_chars > LISTING_DESCRIPTION_CHARS {
        problems.push(VisibilityProblem::DescriptionCut {
            kept: LISTING_DESCRIPTION_CHARS,
        });
    }
    for other in set.others(&own.dir).filter(|o| o.name == own.name) {
        problems.push(VisibilityProblem::NameCollision {
            other: other.dir.clone(),
        });
    }
    Visibility {
        name: own.name.clone(),
        listed_skills: set.listed,
        listing_chars: set.listing_chars,
        description_chars,
        problems,
    }
}

/// Whether two folder paths are the same, as written. The folders of one run or one folder
/// listing are written alike, and comparing bytes skips `Path`'s component parsing, which a
/// set of hundreds of skills would pay for every pair.
fn same(a: &Path, b: &Path) -> bool {
    a.as_os_str() == b.as_os_str()
}

/// `listed` as the listing shows it: cut to [`LISTING_DESCRIPTION_CHARS`] UTF-16 units, the
/// last of them an ellipsis.
fn cut_for_listing(listed: &str) -> std::borrow::Cow<'_, str> {
    if utf16_len(listed) <= LISTING_DESCRIPTION_CHARS {
        return listed.into();
    }
    let mut units = 0;
    let kept: String = listed
        .chars()
        .take_while(|c| {
            units += c.len_utf16();
            units < LISTING_DESCRIPTION_CHARS
        })
        .collect();
    format!("{kept}\u{2026}").into()
}

fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// A listing's width as Claude Code budgets it (`Bun.stringWidth`): East Asian wide
/// characters count two, control characters (a line break inside a description) none,
/// ambiguous ones such as `—` one. The per-skill cut ([`LISTING_DESCRIPTION_CHARS`]) is in
/// UTF-16 units instead, as JavaScript's `length` counts.
pub fn listing_width(text: &str) -> usize {
    use unicode_width::UnicodeWidthChar;
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

fn content_words(text: &str) -> Vec<String> {
    let lowered = text.to_lowercase();
    let mut words: Vec<String> = content_word_slices(&lowered)
        .into_iter()
        .map(str::to_string)
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// The content words of lowercased text (repeats included, in order).
fn content_word_slices(lowered: &str) -> Vec<&str> {
    let content = |w: &&str| w.len() > 1 && FUNCTION_WORDS.binary_search(w).is_err();
    if lowered.is_ascii() {
        lowered
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(content)
            .collect()
    } else {
        lowered
            .split(|c: char| !c.is_alphanumeric())
            .filter(content)
            .collect()
    }
}

/// The skills of one folder, judged once: which descriptions are alike, and which the
/// listing cuts. Each skill's check then only looks its own findings up.
pub(crate) struct Set {
    members: Vec<Member>,
    /// A number for each content word of the set's descriptions.
    vocabulary: foldhash::HashMap<String, u32>,
    /// Each member's content words as their numbers, sorted.
    ids: Vec<Vec<u32>>,
    /// For each member, the others whose description is alike, with the share of words.
    alike: Vec<Vec<(usize, f64)>>,
    /// For each member, whether the listing drops its description.
    cut: Vec<bool>,
    /// The listing's length with every description shown.
    listing_chars: usize,
    /// How many skills the listing shows to the model.
    listed: usize,
}

impl Set {
    /// Judge `members` (sorted by folder, the listing's order) under `budget`.
    fn of(members: Vec<Member>, budget: ListingBudget) -> Set {
        let mut vocabulary = foldhash::HashMap::default();
        let mut lowered = String::new();
        let ids: Vec<Vec<u32>> = members
            .iter()
            .map(|m| {
                let description = m.description();
                lowered.clear();
                if description.is_ascii() {
                    lowered.push_str(description);
                    lowered.make_ascii_lowercase();
                } else {
                    lowered.push_str(&description.to_lowercase());
                }
                let mut ids: Vec<u32> = content_word_slices(&lowered)
                    .into_iter()
                    .map(|w| match vocabulary.get(w) {
                        Some(id) => *id,
                        None => {
                            let id = vocabulary.len() as u32;
                            vocabulary.insert(w.to_string(), id);
                            id
                        }
                    })
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            })
            .collect();
        let alike = alike_pairs(&ids, vocabulary.len());
        let shown: Vec<usize> = (0..members.len())
            .filter(|i| members[*i].listed_to_model)
            .collect();
        let listing = listing(
            shown
                .iter()
                .map(|i| (members[*i].name.as_str(), members[*i].listed.as_str())),
            budget,
        );
        let mut cut = vec![false; members.len()];
        for (k, i) in shown.iter().enumerate() {
            cut[*i] = listing.cut[k];
        }
        Set {
            vocabulary,
            ids,
            alike,
            cut,
            listing_chars: listing.full,
            listed: shown.len(),
            members,
        }
    }

    /// The members but the one in `dir`.
    fn others<'s>(&'s self, dir: &'s Path) -> impl Iterator<Item = &'s Member> {
        self.members.iter().filter(move |m| !same(&m.dir, dir))
    }

    /// `words` as the set's numbers, sorted; a word no member uses gets a number of its own.
    fn ids_of(&self, words: &[String]) -> Vec<u32> {
        let mut unknown = u32::MAX;
        let mut ids: Vec<u32> = words
            .iter()
            .map(|w| {
                self.vocabulary.get(w).copied().unwrap_or_else(|| {
                    unknown -= 1;
                    unknown
                })
            })
            .collect();
        ids.sort_unstable();
        ids
    }
}

/// Each member's alike others, by prefix filtering (the standard way to find the pairs of a
/// similarity join without comparing every pair): with the words of each description ordered
/// rarest first, two descriptions that share at least [`SIMILAR`] of their words share a
/// word among the first `n - ceil(SIMILAR * n) + 1` of each, so only pairs that do are
/// compared. A folder of hundreds of skills then compares a few hundred pairs, not tens of
/// thousands.
fn alike_pairs(ids: &[Vec<u32>], words: usize) -> Vec<Vec<(usize, f64)>> {
    let mut frequency = vec![0u32; words];
    for id in ids.iter().flatten() {
        frequency[*id as usize] += 1;
    }
    let mut alike = vec![Vec::new(); ids.len()];
    let mut holders: foldhash::HashMap<u32, Vec<usize>> = foldhash::HashMap::default();
    let mut compared = vec![usize::MAX; ids.len()];
    for (i, own) in ids.iter().enumerate() {
        let mut rarest = own.clone();
        rarest.sort_unstable_by_key(|id| (frequency[*id as usize], *id));
        // ceil(0.6 * n) in integers
        let needed = (3 * rarest.len()).div_ceil(5);
        let prefix = &rarest[..(rarest.len() + 1).saturating_sub(needed).min(rarest.len())];
        for id in prefix {
            let earlier = holders.entry(*id).or_default();
            for &j in earlier.iter() {
                if compared[j] == i {
                    continue;
                }
                compared[j] = i;
                let likeness = jaccard(own, &ids[j]);
                if likeness >= SIMILAR {
                    alike[i].push((j, likeness));
                    alike[j].push((i, likeness));
                }
            }
            earlier.push(i);
        }
    }
    for list in &mut alike {
        list.sort_by_key(|(j, _)| *j);
    }
    alike
}

/// The share of two sorted, distinct lists' items they have in common.
fn jaccard<T: Ord>(a: &[T], b: &[T]) -> f64 {
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let all = a.len() + b.len() - shared;
    if all == 0 {
        0.0
    } else {
        shared as f64 / all as f64
    }
}

/// The skills beside the one in `dir`: the other folders of its parent with a SKILL.md, by
/// name (the set SW220-SW222 judge it in).
pub fn sibling_skills(dir: &Path) -> Vec<PathBuf> {
    dir.parent()
        .map(skill_folders)
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.file_name() != dir.file_name())
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
type Record = std::collections::HashMap<PathBuf, (Instant, Vec<(PathBuf, Seen)>, Arc<Set>)>;

/// The skills of `parent` for a single check: listed again after [`SIBLINGS_TTL`], and then
/// only the SKILL.md files whose size or modification time changed are parsed again, so an
/// editor in a folder of hundreds of skills pays a listing, not hundreds of parses.
fn recent(parent: &Path) -> Arc<Set> {
    recent_at(parent, Instant::now())
}

/// [`recent`] as of `now`.
fn recent_at(parent: &Path, now: Instant) -> Arc<Set> {
    static RECORD: OnceLock<Mutex<Record>> = OnceLock::new();
    let record = RECORD.get_or_init(Default::default);
    let Ok(mut record) = record.lock() else {
        return Arc::new(Set::of(
            read_members(&skill_folders(parent)),
            ListingBudget::DEFAULT,
        ));
    };
    let entry = record.entry(parent.to_path_buf()).or_insert_with(|| {
        (
            now,
            Vec::new(),
            Arc::new(Set::of(Vec::new(), ListingBudget::DEFAULT)),
        )
    });
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
        let members = entry
            .1
            .iter()
            .filter_map(|(_, s)| s.member.clone())
            .collect();
        entry.2 = Arc::new(Set::of(members, ListingBudget::DEFAULT));
    }
    Arc::clone(&entry.2)
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

    proptest::proptest! {
        /// Prefix filtering finds exactly the pairs comparing every pair finds.
        #[test]
        fn prefix_filtering_finds_every_alike_pair(
            sets in proptest::collection::vec(proptest::collection::btree_set(0u32..12, 0..8), 0..24)
        ) {
            let ids: Vec<Vec<u32>> = sets.into_iter().map(|s| s.into_iter().collect()).collect();
            let mut every = vec![Vec::new(); ids.len()];
            for i in 0..ids.len() {
                for j in 0..ids.len() {
                    let likeness = jaccard(&ids[i], &ids[j]);
                    if i != j && likeness >= SIMILAR {
                        every[i].push((j, likeness));
                    }
                }
            }
            proptest::prop_assert_eq!(alike_pairs(&ids, 12), every);
        }
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
        let names: Vec<String> = (0..8).map(|i| format!("n{i:02}")).collect();
        let entries = || names.iter().map(|n| (n.as_str(), long.as_str()));
        // each entry: `- nNN: ` + 1536 characters = 1543, eight with line breaks 12,351
        let small = listing(entries(), ListingBudget::SMALLEST);
        assert_eq!(small.full, 8 * (2 + 3 + 2 + 1536) + 7);
        // names alone: 8 * 5 + 7 = 47; 8,000 - 6,209 - 47 = 1,744 left, 1,538 per
        // description: one fits
        assert_eq!(small.cut, [false, true, true, true, true, true, true, true]);
        // 30,000 - 6,209 = 23,791 for installed skills: all eight fit
        let large = listing(entries(), ListingBudget::for_model(Some("sonnet")));
        assert_eq!(large.cut, [false; 8]);
        let short = listing(
            [("a", "b"), ("c", "d")].into_iter(),
            ListingBudget::SMALLEST,
        );
        assert_eq!(
            short,
            Listing {
                full: 6 + 1 + 6,
                cut: vec![false, false]
            }
        );
    }

    #[test]
    fn the_budget_follows_the_model_as_claude_code_computes_it() {
        let chars = |m: Option<&str>| ListingBudget::for_model(m).chars;
        // Measured on Claude Code 2.1.328 (its debug log's "Skill listing over budget" line).
        assert_eq!(chars(Some("claude-sonnet-4-5")), 8_000);
        assert_eq!(chars(Some("claude-opus-4-6")), 8_000);
        assert_eq!(chars(Some("claude-opus-4-6[1m]")), 40_000);
        assert_eq!(chars(Some("claude-opus-4-7")), 30_000);
        assert_eq!(chars(Some("sonnet")), 30_000);
        assert_eq!(chars(Some("mock-model")), 30_000);
        assert_eq!(chars(Some("gpt-5")), 30_000);
        assert_eq!(chars(None), 30_000);
        // Spellings Claude Code folds to one family.
        assert_eq!(chars(Some("claude-sonnet-4-5-20250929")), 8_000);
        assert_eq!(
            chars(Some("us.anthropic.claude-3-7-sonnet-20250219-v1:0")),
            8_000
        );
        assert_eq!(chars(Some("claude-haiku-4.5")), 8_000);
        assert_eq!(chars(Some("claude-sonnet-4-5@20250929")), 8_000);
    }

    #[test]
    fn skills_cut_from_the_listing_are_named_and_hidden_ones_do_not_count() {
        let tmp = tempfile::tempdir().unwrap();
        let long = format!("when_to_use: {}\n", "Read invoices quickly. ".repeat(80));
        for i in 0..17 {
            skill(tmp.path(), &format!("s{i:02}"), &long);
        }
        let hidden = skill(
            tmp.path(),
            "s99",
            &format!("{long}disable-model-invocation: true\n"),
        );
        // names alone: 17 * 5 + 16 = 101; 30,000 - 6,209 - 101 = 23,690 left, 1,538 per
        // description: fifteen fit
        let sw222 = |i: usize| {
            rules(&tmp.path().join(format!("s{i:02}")))
                .into_iter()
                .find(|(r, _)| *r == "SW222")
        };
        let cut: Vec<usize> = (0..17).filter(|i| sw222(*i).is_some()).collect();
        assert_eq!(cut, [15, 16]);
        let message = sw222(16).unwrap().1;
        assert!(message.contains("lists the 17 skills"), "{message}");
        assert!(rules(&hidden).iter().all(|(r, _)| *r != "SW222"));
    }

    #[test]
    fn an_edited_sibling_is_read_again_once_the_listing_is_old() {
        let tmp = tempfile::tempdir().unwrap();
        let a = skill(tmp.path(), "a", "");
        skill(tmp.path(), "b", "");
        let names = |set: &Set| {
            set.members
                .iter()
                .map(|m| m.name.clone())
                .collect::<Vec<_>>()
        };
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
    fn visibility_says_what_the_check_says_of_a_staging() {
        let tmp = tempfile::tempdir().unwrap();
        let long = format!("when_to_use: {}\n", "Read invoices quickly. ".repeat(80));
        let dirs: Vec<PathBuf> = (0..6)
            .map(|i| skill(tmp.path(), &format!("s{i}"), &long))
            .collect();
        // The check assumes Claude Code's default model, whose budget holds all six; the
        // small budget of older models drops all but the first.
        assert!(rules(&dirs[5]).iter().all(|(r, _)| *r != "SW222"));
        let small = ListingBudget::SMALLEST;
        let v = visibility(&dirs[5], &dirs[..5], small);
        assert!(v.blocked(), "{v:?}");
        assert!(v.problems.contains(&VisibilityProblem::DroppedByBudget {
            budget: 8_000,
            for_installed: 8_000 - HARNESS_LISTING_CHARS,
        }));
        // A model with the larger budget shows all six.
        let large = visibility(
            &dirs[5],
            &dirs[..5],
            ListingBudget::for_model(Some("sonnet")),
        );
        assert!(!large.blocked(), "{large:?}");
        assert!(
            v.problems
                .contains(&VisibilityProblem::DescriptionCut { kept: 1536 })
        );
        assert_eq!(v.listed_skills, 6);
        // s0 comes first in the listing: cut at 1,536 characters, still shown.
        let first = visibility(&dirs[0], &dirs[1..], small);
        assert!(!first.blocked(), "{first:?}");
        assert_eq!(
            first.problems,
            [VisibilityProblem::DescriptionCut { kept: 1536 }]
        );
        // Alone and short: nothing to say.
        let alone = tempfile::tempdir().unwrap();
        let short = skill(alone.path(), "short", "");
        assert_eq!(visibility(&short, &[], small).problems, []);
        // A decoy of the same name from elsewhere collides.
        let twin = tempfile::tempdir().unwrap();
        let other = skill(twin.path(), "short", "");
        let v = visibility(&short, std::slice::from_ref(&other), small);
        assert_eq!(v.problems, [VisibilityProblem::NameCollision { other }]);
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
