//! What the language analyses tell the behaviour rules: values with their provenance
//! ([`Val`], [`Taint`]) and the acts that matter to security ([`Act`]), each at a span of
//! the file. The analyses (shell, Python, JavaScript, PowerShell) differ; the rules see only
//! these, so one rule covers every language.

use crate::text::Span;

/// Where a value came from, as a set of bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Taint(u16);

impl Taint {
    pub const NONE: Taint = Taint(0);
    /// The whole environment (`env`, `os.environ`, `process.env`).
    pub const ENV_ALL: Taint = Taint(1);
    /// The content of a credential store (`~/.ssh/id_*`, `~/.aws/credentials`, `.env`,
    /// keychains, browser profiles).
    pub const SECRET_FILE: Taint = Taint(2);
    /// One secret-named variable (`$OPENAI_API_KEY`); normal in a request to its own vendor.
    pub const SECRET_VAR: Taint = Taint(4);
    /// Downloaded from the network.
    pub const FETCHED: Taint = Taint(8);
    /// Decoded or de-obfuscated (base64, hex, rot13, reversed, char codes, decompressed).
    pub const DECODED: Taint = Taint(16);
    /// The user's own files outside the workspace (documents, pictures, shell history): not
    /// credentials, but private; sending them off is for a person to review.
    pub const PERSONAL: Taint = Taint(32);
    /// Hidden from a reviewer or a scanner on the way: a password-protected archive, a
    /// quarantine flag removed.
    pub const HIDDEN: Taint = Taint(64);

    pub fn has(self, other: Taint) -> bool {
        self.0 & other.0 != 0
    }

    /// The bits of `self` that are also in `mask`.
    pub fn within(self, mask: Taint) -> Taint {
        Taint(self.0 & mask.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The environment or a credential store: never sent anywhere by an honest skill.
    pub fn is_stolen(self) -> bool {
        self.has(Taint(Self::ENV_ALL.0 | Self::SECRET_FILE.0))
    }
}

impl std::ops::BitOr for Taint {
    type Output = Taint;
    fn bitor(self, rhs: Taint) -> Taint {
        Taint(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Taint {
    fn bitor_assign(&mut self, rhs: Taint) {
        self.0 |= rhs.0;
    }
}

/// A value as far as the analysis can tell: its text when it is a constant (after variables
/// are substituted and concatenations folded), and where its parts came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Val {
    pub text: Option<String>,
    pub taint: Taint,
    /// The secret-named variables in it ([`Taint::SECRET_VAR`]), to match against the host.
    pub secrets: Vec<String>,
    /// The URLs it was downloaded from ([`Taint::FETCHED`]), to judge where code comes from.
    pub urls: Vec<String>,
}

impl Val {
    pub fn text(text: impl Into<String>) -> Val {
        Val {
            text: Some(text.into()),
            ..Val::default()
        }
    }

    pub fn tainted(taint: Taint) -> Val {
        Val {
            taint,
            ..Val::default()
        }
    }

    /// Code downloaded from `url` (None when the URL is not known).
    pub fn fetched(url: Option<&str>) -> Val {
        Val {
            taint: Taint::FETCHED,
            urls: url.map(|u| vec![u.to_string()]).unwrap_or_default(),
            ..Val::default()
        }
    }

    /// The text, or a placeholder for an unknown part (kept visible in resolved statements).
    pub fn shown(&self) -> &str {
        self.text.as_deref().unwrap_or("…")
    }

    /// `self` followed by `other` (string concatenation).
    pub fn concat(mut self, other: &Val) -> Val {
        self.text = match (self.text.take(), &other.text) {
            (Some(a), Some(b)) => Some(a + b),
            // an unknown tail keeps the known head (a URL's host stays known)
            (Some(a), None) => Some(a + "…"),
            _ => None,
        };
        self.merge(other);
        self
    }

    /// Take `other`'s provenance (not its text).
    pub fn merge(&mut self, other: &Val) {
        self.taint |= other.taint;
        for s in &other.secrets {
            if !self.secrets.contains(s) {
                self.secrets.push(s.clone());
            }
        }
        for u in &other.urls {
            if !self.urls.contains(u) {
                self.urls.push(u.clone());
            }
        }
    }

    /// A value derived from `parts` whose text is unknown.
    pub fn derived<'v>(parts: impl IntoIterator<Item = &'v Val>) -> Val {
        let mut out = Val::default();
        for p in parts {
            out.merge(p);
        }
        out
    }
}

/// An act of the analysed code that a behaviour rule judges, or that the capability card lists.
#[derive(Debug, Clone)]
pub(crate) enum Act {
    /// Data leaves over the network (request body, URL, upload, socket, copy to a remote).
    Send { data: Val, host: Option<String> },
    /// A DNS lookup of a host name built from data.
    Lookup { host: Val },
    /// Text is run as code (`eval`, `exec`, `sh -c`, a pipe into an interpreter, a script file).
    Exec { code: Val, how: String },
    /// A file is written (created, appended, copied to).
    Write { path: String, content: Val },
    /// A package install: the manager (`pip`, `npm`, ...), the names, and the index options.
    Install {
        manager: String,
        names: Vec<String>,
        index: Option<String>,
        extra_index: Option<String>,
        /// Archives or repositories installed by address (`pip install https://...`).
        urls: Vec<String>,
    },
    /// A network connection whose streams are handed to a shell (a reverse or bind shell).
    ShellOverSocket { how: String },
    /// Something is fetched from the network (a download, an API call): the card's hosts.
    Fetch { url: String },
    /// A file is read: the card's reads and secrets.
    Read { path: String },
    /// Environment variables are read: one by name, or all of them (`None`).
    Env { name: Option<String> },
    /// A program is run: the card's commands.
    Run { program: String },
    /// Files are deleted (`rm -r`, `rmtree`, `find -delete`, `Remove-Item -Recurse`).
    Delete { path: String, recursive: bool },
    /// Something is destroyed beyond files: a disk, a database, a branch's history, a
    /// cluster, a bucket. `what` says which, `severe` whether it cannot be the user's intent
    /// in a skill (a raw disk formatted, the home folder shredded).
    Destroy { what: String, severe: bool },
}

/// One act at its place in a file of the skill (`file` indexes the files given to `scan`).
#[derive(Debug, Clone)]
pub(crate) struct Fact {
    pub file: usize,
    pub span: Span,
    pub act: Act,
}

/// A statement with its variables substituted and its strings folded, at its place in the
/// file: what the pattern rules (miners, privilege escalation, tampering) read.
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    pub file: usize,
    pub span: Span,
    pub text: String,
}

/// What the analysis found, in one file or several (an inlined function reports in its own
/// file).
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The file acts are recorded in unless said otherwise.
    pub file: usize,
    pub facts: Vec<Fact>,
    pub stmts: Vec<Stmt>,
}

impl Found {
    pub fn in_file(file: usize) -> Found {
        Found {
            file,
            ..Found::default()
        }
    }

    pub fn act(&mut self, span: Span, act: Act) {
        self.facts.push(Fact {
            file: self.file,
            span,
            act,
        });
    }

    pub fn stmt(&mut self, span: Span, text: String) {
        self.stmts.push(Stmt {
            file: self.file,
            span,
            text,
        });
    }

    pub fn extend(&mut self, other: Found) {
        self.facts.extend(other.facts);
        self.stmts.extend(other.stmts);
    }
}
