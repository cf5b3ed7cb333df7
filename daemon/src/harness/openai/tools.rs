//! The tools of the built-in agent loop: list, read and write files, run commands, load a skill.
//!
//! File tools are confined to the workspace (relative paths, no `..` or symlink escapes): they
//! guard against a confused model, not a hostile one, since `run_command` runs a shell. Every
//! failure is returned to the model as text so it can recover, as real harnesses do.

use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::super::process::{Exit, Invocation, read_capped, run_process};

/// A skill the model can load: its name, description and staged folder.
#[derive(Debug, Clone)]
pub(super) struct SkillEntry {
    /// The skill's name.
    pub name: String,
    /// Its description, shown in the system prompt.
    pub description: String,
    /// The staged folder inside the workspace.
    pub dir: PathBuf,
}

/// Everything a tool call may touch.
pub(super) struct ToolBox {
    /// The workspace, canonical.
    pub workspace: PathBuf,
    /// Loadable skills.
    pub skills: Vec<SkillEntry>,
    /// The environment commands run with.
    pub env: Vec<(String, String)>,
    /// Where command output files go.
    pub scratch: PathBuf,
    /// The longest a single command may run.
    pub command_timeout: Duration,
    /// Tool results are cut to this many bytes.
    pub max_output: usize,
    /// Commands run so far (names their output files).
    pub commands_run: usize,
}

/// The OpenAI function schemas of the tools.
pub(super) fn definitions() -> Vec<Value> {
    let tool = |name: &str, description: &str, properties: Value, required: &[&str]| {
        json!({"type": "function", "function": {
            "name": name, "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required}}})
    };
    vec![
        tool(
            "list_files",
            "List the entries of a directory of the workspace (directories end with '/').",
            json!({"path": {"type": "string", "description": "Directory relative to the workspace; default '.'"}}),
            &[],
        ),
        tool(
            "read_file",
            "Read a text file of the workspace.",
            json!({"path": {"type": "string", "description": "File path relative to the workspace"}}),
            &["path"],
        ),
        tool(
            "write_file",
            "Create or overwrite a file of the workspace (parent directories are created).",
            json!({"path": {"type": "string"}, "content": {"type": "string"}}),
            &["path", "content"],
        ),
        tool(
            "run_command",
            "Run a bash command in the workspace; returns its exit status and combined output.",
            json!({"command": {"type": "string"},
                   "timeout_seconds": {"type": "integer", "description": "Optional limit"}}),
            &["command"],
        ),
        tool(
            "load_skill",
            "Load a skill's instructions (its SKILL.md) by name before doing a task it covers.",
            json!({"name": {"type": "string", "description": "The skill's name"}}),
            &["name"],
        ),
    ]
}

impl ToolBox {
    /// Run tool `name` with JSON `arguments`; `deadline` is the end of the trial.
    pub(super) async fn call(&mut self, name: &str, arguments: &str, deadline: Instant) -> String {
        let args: Value = match arguments.trim() {
            "" => json!({}),
            text => match serde_json::from_str(text) {
                Ok(v) => v,
                Err(e) => {
                    return format!("error: expected JSON object arguments, found {text:?}: {e}");
                }
            },
        };
        let result = match name {
            "list_files" => self.list_files(str_arg(&args, "path").unwrap_or(".")),
            "read_file" => self.read_file(&args),
            "write_file" => self.write_file(&args),
            "run_command" => self.run_command(&args, deadline).await,
            "load_skill" => self.load_skill(&args),
            other => Err(format!(
                "unknown tool {other:?}; available: list_files, read_file, write_file, run_command, load_skill"
            )),
        };
        let text = result.unwrap_or_else(|e| format!("error: {e}"));
        cut(text, self.max_output)
    }

    fn list_files(&self, path: &str) -> Result<String, String> {
        let dir = self.resolve(path)?;
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| format!("listing {path}: {e}"))?
            .filter_map(Result::ok)
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    format!("{name}/")
                } else {
                    name
                }
            })
            .collect();
        names.sort();
        Ok(if names.is_empty() {
            "(empty directory)".into()
        } else {
            names.join("\n")
        })
    }

    fn read_file(&self, args: &Value) -> Result<String, String> {
        let path = str_arg(args, "path").ok_or("read_file: expected a \"path\" argument")?;
        let file = self.resolve(path)?;
        let (text, truncated) = read_capped(&file, self.max_output as u64)
            .map_err(|e| format!("reading {path}: {e}"))?;
        if !file.is_file() {
            return Err(format!("reading {path}: no such file"));
        }
        Ok(if truncated {
            format!("{text}\n[file truncated at {} bytes]", self.max_output)
        } else {
            text
        })
    }

    fn write_file(&self, args: &Value) -> Result<String, String> {
        let path = str_arg(args, "path").ok_or("write_file: expected a \"path\" argument")?;
        let content =
            str_arg(args, "content").ok_or("write_file: expected a \"content\" argument")?;
        let file = self.resolve(path)?;
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("creating {}: {e}", parent.display()))?;
        }
        std::fs::write(&file, content).map_err(|e| format!("writing {path}: {e}"))?;
        Ok(format!("wrote {} bytes to {path}", content.len()))
    }

    async fn run_command(&mut self, args: &Value, deadline: Instant) -> Result<String, String> {
        let command =
            str_arg(args, "command").ok_or("run_command: expected a \"command\" argument")?;
        let asked = args
            .get("timeout_seconds")
            .and_then(Value::as_u64)
            .map(Duration::from_secs)
            .unwrap_or(self.command_timeout);
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = asked.min(self.command_timeout).min(left);
        self.commands_run += 1;
        let out = self
            .scratch
            .join(format!("command-{}.out", self.commands_run));
        let inv = Invocation {
            program: "bash".into(),
            args: vec!["-c".into(), command.into()],
            env: self.env.clone(),
            cwd: self.workspace.clone(),
        };
        let r = run_process(&inv, &out, &out, timeout)
            .await
            .map_err(|e| format!("could not start bash: {e}"))?;
        let (text, _) = read_capped(&out, self.max_output as u64 + 1).map_err(|e| e.to_string())?;
        let status = match r.exit {
            Exit::Code(c) => format!("exit status: {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::TimedOut => format!("timed out after {} s and was killed", timeout.as_secs()),
            Exit::Stopped => "stopped".to_string(),
        };
        Ok(format!("{status}\n{text}"))
    }

    fn load_skill(&self, args: &Value) -> Result<String, String> {
        let name = str_arg(args, "name")
            .or_else(|| str_arg(args, "skill"))
            .ok_or("load_skill: expected a \"name\" argument")?;
        let Some(skill) = self.skills.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            return Err(format!("no skill named {name:?}; installed: {known:?}"));
        };
        let text = std::fs::read_to_string(skill.dir.join("SKILL.md"))
            .map_err(|e| format!("reading {name}/SKILL.md: {e}"))?;
        Ok(format!(
            "Base directory for this skill: {}\n\n{text}",
            skill.dir.display()
        ))
    }

    /// A workspace path for `path`: relative paths are joined to the workspace, absolute ones
    /// must lie inside it; `..` may not climb out, nor may a symlink.
    fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let p = Path::new(path);
        let rel = if p.is_absolute() {
            p.strip_prefix(&self.workspace)
                .map_err(|_| format!("{path}: expected a path inside the workspace"))?
                .to_path_buf()
        } else {
            p.to_path_buf()
        };
        let mut joined = self.workspace.clone();
        for c in rel.components() {
            match c {
                Component::Normal(part) => joined.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !joined.pop() || !joined.starts_with(&self.workspace) {
                        return Err(format!("{path}: expected a path inside the workspace"));
                    }
                }
                _ => return Err(format!("{path}: expected a relative path")),
            }
        }
        let existing = joined
            .ancestors()
            .find(|a| a.exists())
            .unwrap_or(&self.workspace);
        let real = existing
            .canonicalize()
            .map_err(|e| format!("{path}: {e}"))?;
        if !real.starts_with(&self.workspace) {
            return Err(format!(
                "{path}: expected a path inside the workspace, found a link out of it"
            ));
        }
        Ok(joined)
    }
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// `text` cut to `max` bytes (at a character boundary) with a note of what was left out.
fn cut(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[{} bytes omitted]", &text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolbox(ws: &Path) -> ToolBox {
        let skill_dir = ws.join(".agents/skills/pdf");
        std::fs::create_dir_all(&skill_dir).unwrap();
        std::fs::write(
            skill_dir.join("SKILL.md"),
            "---\nname: pdf\n---\nUse pdftk.",
        )
        .unwrap();
        ToolBox {
            workspace: ws.canonicalize().unwrap(),
            skills: vec![SkillEntry {
                name: "pdf".into(),
                description: "PDFs".into(),
                dir: skill_dir,
            }],
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            scratch: ws.to_path_buf(),
            command_timeout: Duration::from_secs(5),
            max_output: 64,
            commands_run: 0,
        }
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[tokio::test]
    async fn file_tools_work_inside_and_refuse_outside() {
        let tmp = tempfile::tempdir().unwrap();
        let mut tb = toolbox(tmp.path());
        tb.max_output = 4096;
        let w = tb
            .call(
                "write_file",
                r#"{"path":"a/b.txt","content":"hello"}"#,
                far(),
            )
            .await;
        assert_eq!(w, "wrote 5 bytes to a/b.txt");
        assert_eq!(
            tb.call("read_file", r#"{"path":"a/b.txt"}"#, far()).await,
            "hello"
        );
        assert_eq!(
            tb.call("list_files", r#"{"path":"a"}"#, far()).await,
            "b.txt"
        );
        let out = tb
            .call("read_file", r#"{"path":"../../etc/passwd"}"#, far())
            .await;
        assert!(
            out.starts_with("error:") && out.contains("inside the workspace"),
            "{out}"
        );
        let out = tb
            .call("read_file", r#"{"path":"/etc/passwd"}"#, far())
            .await;
        assert!(out.starts_with("error:"), "{out}");
        std::os::unix::fs::symlink("/etc", tmp.path().join("link")).unwrap();
        let out = tb
            .call("read_file", r#"{"path":"link/passwd"}"#, far())
            .await;
        assert!(out.contains("link out of it"), "{out}");
        let out = tb.call("read_file", "{not json", far()).await;
        assert!(
            out.starts_with("error: expected JSON object arguments"),
            "{out}"
        );
        let out = tb.call("teleport", "{}", far()).await;
        assert!(out.contains("unknown tool"), "{out}");
    }

    #[tokio::test]
    async fn commands_report_status_and_are_cut() {
        let tmp = tempfile::tempdir().unwrap();
        let mut tb = toolbox(tmp.path());
        let out = tb
            .call("run_command", r#"{"command":"echo hi; exit 4"}"#, far())
            .await;
        assert_eq!(out, "exit status: 4\nhi\n");
        let out = tb
            .call(
                "run_command",
                r#"{"command":"head -c 500 /dev/zero | tr '\\0' x"}"#,
                far(),
            )
            .await;
        assert!(out.contains("bytes omitted"), "{out}");
        let out = tb
            .call(
                "run_command",
                r#"{"command":"sleep 30","timeout_seconds":1}"#,
                far(),
            )
            .await;
        assert!(out.starts_with("timed out after 1 s"), "{out}");
    }

    #[tokio::test]
    async fn load_skill_returns_the_body_or_lists_the_installed() {
        let tmp = tempfile::tempdir().unwrap();
        let mut tb = toolbox(tmp.path());
        tb.max_output = 4096;
        let out = tb.call("load_skill", r#"{"name":"pdf"}"#, far()).await;
        assert!(out.starts_with("Base directory for this skill: ") && out.ends_with("Use pdftk."));
        let out = tb.call("load_skill", r#"{"name":"xlsx"}"#, far()).await;
        assert!(out.contains("installed: [\"pdf\"]"), "{out}");
    }
}
