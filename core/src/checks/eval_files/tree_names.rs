//! The skills of the repository a skill lives in, by folder and frontmatter `name`, for SW411
//! (an `expected_skill` naming no skill of the tree).
//!
//! The answer is the one of reading every SKILL.md with [`load_document`](crate::skill) and
//! taking its frontmatter `name` (trimmed, non-empty, lower case). Parsing every frontmatter
//! with the YAML parser was most of the cost (docs/benchmarks.md; most skills of a catalog are
//! one repository), so the walk reads each file and keeps only its
//! frontmatter text; a frontmatter is parsed when a lookup cannot rule it out by text (see
//! [`FrontmatterText::text_rules_out`]), and then once. Every file is still read whole at walk time, so an
//! unreadable, binary or invalid UTF-8 SKILL.md has no name exactly as before, and the text
//! kept is the text of that moment.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::memo::FolderMemo;
use crate::skill::{Discovered, SKILL_FILE, discover, frontmatter_text, read_skill_md};
use crate::yaml::{self, Node};

/// The skills of a repository, computed only when an `expected_skill` names another skill.
/// Finding them walks the repository and reads every SKILL.md, so an editor checking on
/// every keystroke shares one result per repository for [`TREE_NAMES_TTL`].
pub(crate) struct TreeNames {
    /// The folder whose skills count (see [`tree_root`]).
    pub root: PathBuf,
    /// Every skill folder's name, lower case.
    folders: HashSet<String>,
    /// Every skill's frontmatter name, parsed on demand.
    skills: Mutex<Vec<SkillName>>,
}

/// What the walk learnt of one SKILL.md.
enum SkillName {
    /// The frontmatter `name`, lower case (None: no usable name, or the file is unreadable).
    Known(Option<String>),
    /// A frontmatter not parsed yet.
    Unparsed(FrontmatterText),
}

/// Where a check learns the skills of a tree.
///
/// A single check (editor, daemon) shares one walk per tree for [`TREE_NAMES_TTL`], so a
/// skill added a moment ago is seen soon. A batch (one `skillwatch check` run) learns each
/// tree once, at its first need, however long the run takes: every folder of the run is
/// judged against the same tree, and a run pays for each tree on every run (the bench's
/// passes included, which a time-bounded cache would let share one walk). It takes the
/// tree's skill folders from the run's own discovery when that walked through the tree
/// (the usual `skillwatch check DIR`), and walks the tree otherwise; either way it reads
/// every SKILL.md of the tree.
pub(crate) enum Trees {
    /// The process-wide cache of [`TreeNames::for_skill`].
    Recent,
    /// One run's trees, by tree root, and the skill folders the run was given.
    Run(FolderMemo<TreeNames>, Discovered),
}

impl Trees {
    /// A memo for one batch over `skills`.
    pub fn for_run(skills: &Discovered) -> Trees {
        Trees::Run(FolderMemo::new(), skills.clone())
    }

    /// The names of the tree `skill_dir` belongs to.
    pub fn names_for(&self, skill_dir: &Path) -> Arc<TreeNames> {
        match self {
            Trees::Recent => TreeNames::for_skill(skill_dir),
            Trees::Run(learnt, skills) => {
                let root = tree_root(skill_dir);
                learnt.get_or_compute(&root, || {
                    let dirs = skills.below(&root).unwrap_or_else(|| discover(&root));
                    TreeNames::of(root.clone(), dirs)
                })
            }
        }
    }
}

/// The YAML text between the fences of a SKILL.md, as the walk read it.
struct FrontmatterText {
    yaml: String,
    /// `yaml` in ASCII lower case when [`text_rules_out`] may judge it, else None.
    lower: Option<String>,
}

/// How long a repository's skill names are reused before the tree is walked again.
const TREE_NAMES_TTL: Duration = Duration::from_secs(10);

impl TreeNames {
    /// The names of the tree `skill_dir` belongs to, shared for [`TREE_NAMES_TTL`].
    pub fn for_skill(skill_dir: &Path) -> Arc<TreeNames> {
        type Cache = Mutex<HashMap<PathBuf, (Instant, Arc<TreeNames>)>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let root = tree_root(skill_dir);
        let cache = CACHE.get_or_init(Default::default);
        if let Some((at, names)) = cache.lock().ok().and_then(|c| c.get(&root).cloned())
            && at.elapsed() < TREE_NAMES_TTL
        {
            return names;
        }
        let names = Arc::new(TreeNames::walk(root.clone()));
        if let Ok(mut c) = cache.lock() {
            c.retain(|_, (at, _)| at.elapsed() < TREE_NAMES_TTL);
            c.insert(root, (Instant::now(), Arc::clone(&names)));
        }
        names
    }

    /// Walk the tree at `root` for its skills.
    fn walk(root: PathBuf) -> TreeNames {
        let dirs = discover(&root);
        TreeNames::of(root, dirs)
    }

    /// The names of the skill folders `dirs`, which are every skill of the tree at `root`.
    fn of(root: PathBuf, dirs: Vec<PathBuf>) -> TreeNames {
        let mut folders = HashSet::new();
        let mut skills = Vec::new();
        for dir in dirs {
            if let Some(n) = dir.file_name().and_then(|n| n.to_str()) {
                folders.insert(n.to_lowercase());
            }
            skills.push(SkillName::read(&dir.join(SKILL_FILE)));
        }
        TreeNames {
            root,
            folders,
            skills: Mutex::new(skills),
        }
    }

    /// Whether a skill of the tree has this name (trimmed, any case), by folder or frontmatter.
    pub fn contains(&self, name: &str) -> bool {
        let wanted = name.trim().to_lowercase();
        if self.folders.contains(&wanted) {
            return true;
        }
        let Ok(mut skills) = self.skills.lock() else {
            return false;
        };
        let runs = Runs::of(&wanted);
        skills
            .iter_mut()
            .any(|skill| skill.is_named(&wanted, &runs))
    }
}

impl SkillName {
    /// What `load_document` + the frontmatter `name` would give, short of the YAML parse.
    fn read(path: &Path) -> SkillName {
        let Ok(text) = read_skill_md(path) else {
            return SkillName::Known(None);
        };
        match frontmatter_text(&text) {
            Some(yaml) => SkillName::Unparsed(FrontmatterText::new(yaml)),
            None => SkillName::Known(None),
        }
    }

    /// Whether this skill's lower-case frontmatter name is `wanted`; parses the frontmatter
    /// (once) unless its text rules the name out.
    fn is_named(&mut self, wanted: &str, runs: &Runs) -> bool {
        if let SkillName::Unparsed(front) = self {
            if front.text_rules_out(runs) {
                return false;
            }
            let name = yaml::parse(&front.yaml, 0)
                .ok()
                .and_then(|root| name_in(&root))
                .map(|n| n.to_lowercase());
            *self = SkillName::Known(name);
        }
        matches!(self, SkillName::Known(Some(n)) if n == wanted)
    }
}

impl FrontmatterText {
    fn new(yaml: &str) -> FrontmatterText {
        let lower = may_judge_by_text(yaml).then(|| yaml.to_ascii_lowercase());
        FrontmatterText {
            yaml: yaml.to_string(),
            lower,
        }
    }

    /// True only when no parse of this frontmatter can give a `name` whose lower case is
    /// `wanted` (lower case, trimmed).
    ///
    /// Why this is exact: every YAML scalar style builds its value from the source text by
    /// removing indentation, folding line breaks into a space or a newline, turning `''` into
    /// `'` (single quotes) and decoding `\` escapes (double quotes); an alias copies a value
    /// of the same text. With no `\` in the frontmatter, each whitespace-free run of the value
    /// without a `'` is therefore a substring of the source. When `wanted` is ASCII, a value
    /// lowercasing to it has only characters that lowercase to ASCII, which are ASCII unless
    /// the source holds one of the few non-ASCII characters that lowercase to ASCII (the
    /// Kelvin sign); [`may_judge_by_text`] excludes those frontmatters. So a whitespace-free
    /// run of `wanted` (no `'`) missing from the ASCII-lower-cased source rules the name out.
    fn text_rules_out(&self, runs: &Runs) -> bool {
        let Some(lower) = &self.lower else {
            return false;
        };
        runs.0
            .iter()
            .any(|run| run.find(lower.as_bytes()).is_none())
    }
}

/// The whitespace-free runs of a wanted name (ASCII, lower case) that
/// [`FrontmatterText::text_rules_out`] looks for, each with its searcher built once per
/// lookup rather than once per SKILL.md: `wanted.split_ascii_whitespace()` without the runs
/// holding a `'`, and none at all when `wanted` is not ASCII (then no text rules it out).
struct Runs(Vec<memchr::memmem::Finder<'static>>);

impl Runs {
    fn of(wanted: &str) -> Runs {
        if !wanted.is_ascii() {
            return Runs(Vec::new());
        }
        Runs(
            wanted
                .split_ascii_whitespace()
                .filter(|run| !run.contains('\''))
                .map(|run| memchr::memmem::Finder::new(run).into_owned())
                .collect(),
        )
    }
}

/// Whether [`FrontmatterText::text_rules_out`] may judge this frontmatter: no escapes, and no
/// non-ASCII character whose lower case holds an ASCII one.
fn may_judge_by_text(yaml: &str) -> bool {
    !yaml.contains('\\')
        && (yaml.is_ascii()
            || yaml
                .chars()
                .all(|c| c.is_ascii() || !c.to_lowercase().any(|l| l.is_ascii())))
}

/// The trimmed, non-empty `name` of a parsed frontmatter.
pub(super) fn name_in(root: &Node) -> Option<String> {
    root.get("name")?
        .value
        .as_str()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The folder whose skills count as "the tree": `<root>` for `<root>/skills/<skill>` and for
/// `<root>/plugins/<plugin>/skills/<skill>`, else the skill's parent folder.
fn tree_root(skill_dir: &Path) -> PathBuf {
    let Some(parent) = skill_dir.parent() else {
        return skill_dir.to_path_buf();
    };
    if parent.file_name().is_some_and(|n| n == "skills")
        && let Some(up) = parent.parent()
    {
        return match up.parent() {
            Some(plugins) if plugins.file_name().is_some_and(|n| n == "plugins") => {
                plugins.parent().unwrap_or(plugins).to_path_buf()
            }
            _ => up.to_path_buf(),
        };
    }
    parent.to_path_buf()
}

#[cfg(test)]
mod tests;
