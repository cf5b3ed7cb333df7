//! Where a skill's eval files are, and which skill an eval file belongs to.
//!
//! skill-validator reads `<skill>/tests/eval.yaml`, or, in a plugin repository such as
//! dotnet/skills, `tests/<plugin>/<skill>/eval.yaml` beside `plugins/<plugin>/skills/<skill>/`
//! (its `--tests-dir` lookup: flat `tests/<skill>/`, then one level of subfolders). ACES and
//! skill-creator read `<skill>/evals/evals.json`.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use super::{EvalFile, Role};
use crate::memo::FolderMemo;
use crate::skill::SKILL_FILE;

/// How many folders above a skill the tests tree is looked for (plugins/<p>/skills/<s> is
/// four levels below the repository root).
const MAX_LEVELS_UP: usize = 5;

/// The eval files of the skill in `skill_dir`: eval.yaml-like files first (the skill's own,
/// else its tests tree), then the evals.json family, then the Vally experiment files that
/// name one of them. Never fails: an unreadable folder just has no eval files. The cases of
/// a waza or skill-up eval.yaml live in member files, listed by [`super::member_files`].
pub fn find_eval_files(skill_dir: &Path) -> Vec<EvalFile> {
    find_eval_files_in(
        skill_dir,
        |rel| skill_dir.join(rel).is_file(),
        &AboveSkills::ask_disk(),
    )
}

/// eval.yaml-like files inside a skill, in the order they are read.
/// Where a skill's own eval.yaml is looked for; the last is microsoft/waza's place (its
/// examples keep `eval.yaml` beside SKILL.md, the task files in `tasks/`).
const IN_SKILL: &[&str] = &[
    "tests/eval.yaml",
    "evals/eval.yaml",
    "eval/eval.yaml",
    "eval.yaml",
];

/// The evals.json family inside a skill, in SkillEvaluator's order (its first found is read).
const EVALS_JSON: &[&str] = &[
    "evals/evals.json",
    "evals/evals.jsonl",
    "evals/evals.yaml",
    "evals/evals.yml",
    "eval/dataset.jsonl",
    "eval/dataset.yaml",
    "eval/dataset.yml",
    "eval/dataset.json",
];

/// [`find_eval_files`] for a check that has listed the skill's folder already: `is_file`
/// answers whether a `/`-separated path inside the skill is a file (following symlinks), and
/// `above` is shared with the other skills checked in the same run.
pub(crate) fn find_eval_files_in(
    skill_dir: &Path,
    is_file: impl Fn(&str) -> bool,
    above: &AboveSkills,
) -> Vec<EvalFile> {
    let mut files = Vec::new();
    let suite = |path: PathBuf| EvalFile::new(path, Role::Suite);
    for rel in IN_SKILL {
        if is_file(rel) {
            files.push(suite(skill_dir.join(rel)));
        }
    }
    for folder in ["tests", "evals"] {
        for name in vally_named(&skill_dir.join(folder)) {
            let rel = format!("{folder}/{name}");
            if is_file(&rel) {
                files.push(suite(skill_dir.join(rel)));
            }
        }
    }
    if !is_file("tests/eval.yaml") {
        files.extend(tests_tree_evals(skill_dir, above).into_iter().map(suite));
    }
    if let Some(rel) = EVALS_JSON.iter().find(|rel| is_file(rel)) {
        files.push(suite(skill_dir.join(rel)));
    }
    let experiments = experiments_for(skill_dir, &files, above);
    files.extend(experiments);
    files
}

/// The `*.eval.yaml` and `eval.vally.yaml` files of a folder (Vally's spec names), sorted.
fn vally_named(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| is_vally_name(n))
        .collect();
    names.sort();
    names
}

/// Vally's spec file names: `eval.vally.yaml`, `*.eval.yaml` (`*.eval.yml`).
fn is_vally_name(name: &str) -> bool {
    name == "eval.vally.yaml"
        || name == "eval.vally.yml"
        || (name.len() > ".eval.yaml".len() && name.ends_with(".eval.yaml"))
        || (name.len() > ".eval.yml".len() && name.ends_with(".eval.yml"))
}

/// What the folders above skills hold, as far as finding a tests tree needs: a `tests` folder
/// with its subfolders, and whether the folder is a repository root.
///
/// A single check (the editor's, the daemon's) asks the disk each time, so a tests folder made
/// a moment ago is seen. One `skillwatch check` run remembers the answers for all its skills:
/// the skills of a repository share the same few folders above them, and asking again for each
/// costs a failed `stat` per folder per skill, a large share of a run's system calls
/// (docs/benchmarks.md).
pub struct AboveSkills {
    memo: Option<FolderMemo<Folder>>,
}

/// One folder above a skill. Each answer is asked of the disk when the search first needs it
/// (a flat `tests/<skill>/eval.yaml` ends the search before the subfolders are listed), so a
/// single check does no more I/O than the search itself.
struct Folder {
    path: PathBuf,
    /// Whether `<folder>/tests` is a folder.
    has_tests: bool,
    /// The subfolders of `<folder>/tests`, sorted.
    test_subdirs: OnceLock<Vec<PathBuf>>,
    /// Whether the folder holds `.git`: the search stops there.
    repo_root: OnceLock<bool>,
    /// The Vally experiment files in the folder and its `experiments/`.
    experiments: OnceLock<Vec<Experiment>>,
}

impl AboveSkills {
    /// Answers from the disk, every time.
    pub fn ask_disk() -> AboveSkills {
        AboveSkills { memo: None }
    }

    /// Answers from the disk once per folder, then from memory: for one run over many skills.
    pub fn remembered() -> AboveSkills {
        AboveSkills {
            memo: Some(FolderMemo::new()),
        }
    }

    fn folder(&self, path: &Path) -> Arc<Folder> {
        match &self.memo {
            None => Arc::new(Folder::read(path)),
            Some(memo) => memo.get_or_compute(path, || Folder::read(path)),
        }
    }
}

impl Folder {
    fn read(path: &Path) -> Folder {
        Folder {
            path: path.to_path_buf(),
            has_tests: path.join("tests").is_dir(),
            test_subdirs: OnceLock::new(),
            repo_root: OnceLock::new(),
            experiments: OnceLock::new(),
        }
    }

    fn test_subdirs(&self) -> &[PathBuf] {
        self.test_subdirs.get_or_init(|| {
            let mut subdirs: Vec<PathBuf> = fs::read_dir(self.path.join("tests"))
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            subdirs.sort();
            subdirs
        })
    }

    fn experiments(&self) -> &[Experiment] {
        self.experiments
            .get_or_init(|| Experiment::in_folder(&self.path))
    }

    fn is_repo_root(&self) -> bool {
        *self
            .repo_root
            .get_or_init(|| self.path.join(".git").exists())
    }
}

/// The eval files of the skill's folder in a tests tree: `tests/<plugin>/<skill>/` (the
/// dotnet/skills convention), else skill-validator's flat `tests/<skill>/` or nested
/// `tests/<any>/<skill>/`, searched in the folders above the skill up to the repository root.
/// A folder counts when it holds `eval.yaml`, `eval.vally.yaml` or a `*.eval.yaml`; all of
/// them are returned (`eval.yaml` first).
fn tests_tree_evals(skill_dir: &Path, above: &AboveSkills) -> Vec<PathBuf> {
    let Some(skill) = skill_dir.file_name() else {
        return Vec::new();
    };
    if let Some((root, plugin)) = plugin_layout(skill_dir) {
        let found = evals_in(&root.join("tests").join(plugin).join(skill));
        if !found.is_empty() {
            return found;
        }
    }
    for ancestor in skill_dir.ancestors().skip(1).take(MAX_LEVELS_UP) {
        let folder = above.folder(ancestor);
        if folder.has_tests {
            let flat = evals_in(&ancestor.join("tests").join(skill));
            if !flat.is_empty() {
                return flat;
            }
            if let Some(nested) = folder
                .test_subdirs()
                .iter()
                .map(|d| evals_in(&d.join(skill)))
                .find(|found| !found.is_empty())
            {
                return nested;
            }
        }
        if folder.is_repo_root() {
            break;
        }
    }
    Vec::new()
}

/// A tests-tree folder's eval files: `eval.yaml` (or `eval.yml`), then Vally's names.
fn evals_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = ["eval.yaml", "eval.yml"]
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .take(1)
        .collect();
    found.extend(
        vally_named(dir)
            .into_iter()
            .map(|n| dir.join(n))
            .filter(|p| p.is_file()),
    );
    found
}

/// The Vally experiment files (`*.experiment.yaml` in a folder above the skill, or in its
/// `experiments/`) whose `evals` name one of `files`.
fn experiments_for(skill_dir: &Path, files: &[EvalFile], above: &AboveSkills) -> Vec<EvalFile> {
    if files.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for ancestor in skill_dir.ancestors().skip(1).take(MAX_LEVELS_UP) {
        let folder = above.folder(ancestor);
        for experiment in folder.experiments() {
            let base = experiment.path.parent().unwrap_or(ancestor);
            let names_one = files.iter().any(|f| {
                let rel = super::relative_path(base, &f.path);
                experiment.evals.iter().any(|g| experiment_glob(g, &rel))
            });
            if names_one {
                out.push(EvalFile::new(experiment.path.clone(), Role::Experiment));
            }
        }
        if folder.is_repo_root() {
            break;
        }
    }
    out
}

/// A Vally `evals` glob against a path relative to the experiment's folder: the globs of
/// [`crate::grading::glob`], plus extglob's `!(a|b)` for a whole segment (dotnet/skills
/// excludes `agent.*` folders so).
pub(crate) fn experiment_glob(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_start_matches("./");
    if !pattern.contains("!(") {
        return crate::grading::glob::matches(pattern, path);
    }
    let pats: Vec<&str> = pattern.split('/').collect();
    let segs: Vec<&str> = path.split('/').collect();
    if pats.len() != segs.len() || pats.contains(&"**") {
        return false;
    }
    pats.iter().zip(&segs).all(|(p, s)| {
        match p.strip_prefix("!(").and_then(|r| r.strip_suffix(')')) {
            Some(alts) => !alts.split('|').any(|a| crate::grading::glob::matches(a, s)),
            None => crate::grading::glob::matches(p, s),
        }
    })
}

/// A Vally experiment file and the globs of its `evals`.
pub(crate) struct Experiment {
    path: PathBuf,
    evals: Vec<String>,
}

impl Experiment {
    /// The experiment files of `dir` and of `dir/experiments`, sorted, with their globs (an
    /// experiment that does not read is kept with none: its check reports why).
    fn in_folder(dir: &Path) -> Vec<Experiment> {
        // `dir` is empty above a relative skill path's first folder: the current directory,
        // read as `.` but joined as nothing, so the paths stay as relative as the skill's.
        let mut paths: Vec<PathBuf> = [dir.to_path_buf(), dir.join("experiments")]
            .iter()
            .flat_map(|d| {
                let at = if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d.as_path()
                };
                let entries = fs::read_dir(at)
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok);
                entries.map(move |e| d.join(e.file_name()))
            })
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.ends_with(".experiment.yaml") || n.ends_with(".experiment.yml")
                }) && p.is_file()
            })
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let evals = super::read_eval_text(&path)
                    .ok()
                    .and_then(|t| crate::yaml::parse(&t, 0).ok())
                    .and_then(|root| {
                        let list = root.get("evals")?.value.as_sequence()?.to_vec();
                        Some(
                            list.iter()
                                .filter_map(|n| n.as_str().map(str::to_string))
                                .collect(),
                        )
                    })
                    .unwrap_or_default();
                Experiment { path, evals }
            })
            .collect()
    }
}

/// For `<root>/plugins/<plugin>/skills/<skill>`, the root and the plugin name.
fn plugin_layout(skill_dir: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    let skills = skill_dir.parent()?;
    let plugin = skills.parent()?;
    let plugins = plugin.parent()?;
    (skills.file_name()? == "skills" && plugins.file_name()? == "plugins")
        .then(|| Some((plugins.parent()?, plugin.file_name()?)))
        .flatten()
}

/// The skill folder an eval file belongs to, for an editor that opened the eval file:
/// `<skill>/tests/eval.yaml`, `<skill>/evals/evals.json`, or a tests tree
/// `<root>/tests/<plugin>/<skill>/eval.yaml` -> `<root>/plugins/<plugin>/skills/<skill>`
/// (else any skill named `<skill>` under `<root>`).
pub fn skill_dir_for_eval_file(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let grandparent = parent.parent()?;
    if matches!(parent.file_name()?.to_str()?, "tests" | "evals")
        && grandparent.join(SKILL_FILE).is_file()
    {
        return Some(grandparent.to_path_buf());
    }
    let skill = parent.file_name()?;
    for tests in path.ancestors().skip(2).take(3) {
        if tests.file_name()? != "tests" {
            continue;
        }
        let root = tests.parent()?;
        if let Ok(rel) = parent.strip_prefix(tests)
            && let Some(plugin) = rel.components().next()
            && rel.components().count() == 2
        {
            let dir = root
                .join("plugins")
                .join(plugin.as_os_str())
                .join("skills")
                .join(skill);
            if dir.join(SKILL_FILE).is_file() {
                return Some(dir);
            }
        }
        return crate::skill::discover(root)
            .into_iter()
            .find(|d| d.file_name() == Some(skill));
    }
    None
}

/// `sha256:<hex>` over the files beside `eval_path` and below (not `eval.yaml` itself): what
/// `copy_test_files` copies into the workspace.
pub(crate) fn sibling_files_hash(eval_path: &Path) -> String {
    let Some(dir) = eval_path.parent() else {
        return "none".into();
    };
    let mut hasher = Sha256::new();
    let mut entries: Vec<_> = WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| !(e.depth() == 1 && e.file_name() == "eval.yaml"))
        .map(|e| e.into_path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path.strip_prefix(dir).unwrap_or(&path);
        hasher.update(rel.to_string_lossy().as_bytes());
        hasher.update([0]);
        match fs::read(&path) {
            Ok(bytes) => {
                hasher.update((bytes.len() as u64).to_le_bytes());
                hasher.update(&bytes);
            }
            Err(_) => hasher.update(b"unreadable"),
        }
    }
    let digest = hasher.finalize();
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn finds_in_skill_and_plugin_tests_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let a = root.join("plugins/p/skills/a");
        touch(&a.join(SKILL_FILE), "---\nname: a\n---\n");
        touch(&root.join("tests/p/a/eval.yaml"), "scenarios: []\n");
        touch(&root.join("tests/q/a/eval.yaml"), "scenarios: []\n");
        touch(&a.join("evals/evals.json"), "[]");
        let files = find_eval_files(&a);
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, root.join("tests/p/a/eval.yaml"));
        assert_eq!(files[1].kind, crate::evalspec::FileKind::EvalsJson);
        assert_eq!(skill_dir_for_eval_file(&files[0].path), Some(a.clone()));
        assert_eq!(skill_dir_for_eval_file(&files[1].path), Some(a.clone()));

        // The skill's own tests/eval.yaml wins over a tests tree.
        touch(&a.join("tests/eval.yaml"), "scenarios: []\n");
        assert_eq!(find_eval_files(&a)[0].path, a.join("tests/eval.yaml"));
        assert_eq!(
            skill_dir_for_eval_file(&a.join("tests/eval.yaml")),
            Some(a.clone())
        );
    }

    #[test]
    fn a_run_that_remembers_finds_what_the_disk_says() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir(root.join(".git")).unwrap();
        let skills: Vec<PathBuf> = [
            "plugins/p/skills/a",
            "plugins/p/skills/b",
            "skills/c",
            "skills/d",
        ]
        .iter()
        .map(|s| root.join(s))
        .collect();
        for skill in &skills {
            touch(&skill.join(SKILL_FILE), "---\nname: x\n---\n");
        }
        touch(&root.join("tests/p/a/eval.yaml"), "scenarios: []\n");
        touch(&root.join("tests/q/b/eval.yaml"), "scenarios: []\n");
        touch(&root.join("tests/c/eval.yaml"), "scenarios: []\n");
        touch(&skills[3].join("evals/evals.json"), "[]");
        let above = AboveSkills::remembered();
        for skill in &skills {
            let remembered = find_eval_files_in(skill, |rel| skill.join(rel).is_file(), &above);
            let paths =
                |files: Vec<EvalFile>| files.into_iter().map(|f| f.path).collect::<Vec<_>>();
            assert_eq!(
                paths(remembered),
                paths(find_eval_files(skill)),
                "{}",
                skill.display()
            );
        }
        assert_eq!(
            find_eval_files(&skills[1])[0].path,
            root.join("tests/q/b/eval.yaml")
        );
        // The memo holds the folders above, not the answers per skill: a skill's own new eval
        // file is still seen by the same run.
        touch(&skills[2].join("tests/eval.yaml"), "scenarios: []\n");
        let own = find_eval_files_in(&skills[2], |rel| skills[2].join(rel).is_file(), &above);
        assert_eq!(own[0].path, skills[2].join("tests/eval.yaml"));
    }

    #[test]
    fn flat_tests_dir_and_no_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let b = root.join("skills/b");
        touch(&b.join(SKILL_FILE), "---\nname: b\n---\n");
        assert!(find_eval_files(&b).is_empty());
        touch(&root.join("tests/b/eval.yaml"), "scenarios: []\n");
        assert_eq!(find_eval_files(&b)[0].path, root.join("tests/b/eval.yaml"));
        assert_eq!(
            skill_dir_for_eval_file(&root.join("tests/b/eval.yaml")),
            Some(b)
        );
    }
}
