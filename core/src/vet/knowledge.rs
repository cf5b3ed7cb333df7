//! What names mean: credential paths, secret-named variables, a secret's own vendor, hosts
//! that are no trust boundary. One table each, read by every language analysis.

use std::sync::LazyLock;

use regex::Regex;

use super::facts::Taint;

/// Path pieces of credential stores. Matched on the lowercased path with `\` as `/`.
const SECRET_PATHS: &[&str] = &[
    ".ssh/id_",
    "/proc/self/environ",
    "/environ",
    "cookies",
    "web data",
    "local storage/leveldb",
    "local extension settings",
    "exodus",
    "electrum",
    "metamask",
    ".ethereum/keystore",
    ".bitcoin",
    "solana/id.json",
    "keychains",
    "keychain-db",
    ".password-store",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".boto",
    ".s3cfg",
    ".config/rclone",
    ".terraform.d/credentials",
    ".oci/config",
    "accesstokens.json",
    "credentials.db",
    "access_tokens.db",
    ".cursor/mcp.json",
    ".claude.json",
    ".config/github-copilot",
    "gh/hosts.yml",
    ".config/hub",
    ".git-credentials",
    ".docker/config.json",
    ".ssh/identity",
    "/.ssh/",
    ".aws/credentials",
    ".aws/config",
    ".azure/",
    ".config/gcloud",
    "application_default_credentials",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts",
    ".npmrc",
    ".pypirc",
    ".gnupg",
    "login.keychain",
    "keychains/",
    "login data",
    "cookies.sqlite",
    "/cookies",
    "logins.json",
    "key4.db",
    "local state",
    "wallet.dat",
    "/etc/shadow",
    ".bash_history",
    ".zsh_history",
    ".claude/.credentials",
    ".codex/auth.json",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
];

/// Whether `path` names a credential store (a `.env` file counts; `.env.example` does not).
pub(crate) fn is_secret_path(path: &str) -> bool {
    let p = path
        .trim_matches(['"', '\'', '@'])
        .to_ascii_lowercase()
        .replace('\\', "/");
    if p.ends_with(".pub") || p.contains("example") || p.contains("template") {
        return false;
    }
    let base = p.rsplit('/').next().unwrap_or(&p);
    base == ".env"
        || base.starts_with(".env.") && !base.ends_with(".sample")
        || SECRET_PATHS.iter().any(|s| p.contains(s))
}

/// Path pieces of the user's own files outside any workspace: not credentials, but private.
const PERSONAL_PATHS: &[&str] = &[
    "~/documents",
    "~/desktop",
    "~/pictures",
    "~/downloads",
    "~/movies",
    "~/photos",
    "/documents/",
    "/desktop/",
    "/pictures/",
    "_history",
    "/library/messages",
    "/library/mail",
    "/library/notes",
    "thunderbird",
];

/// Where reading `path` takes data from: a credential store, or the user's private files.
pub(crate) fn path_taint(path: &str) -> Taint {
    if is_secret_path(path) {
        return Taint::SECRET_FILE;
    }
    let p = path
        .trim_matches(['"', '\'', '@'])
        .to_ascii_lowercase()
        .replace('\\', "/")
        .replace("$home", "~");
    if PERSONAL_PATHS
        .iter()
        .any(|s| p.contains(s) || p.starts_with(&s.replace('~', "/home/")))
    {
        Taint::PERSONAL
    } else {
        Taint::NONE
    }
}

/// SQL that drops or empties a database, described; None for what a test or a migration
/// does every day (a table dropped, a test or scratch database reset).
pub(crate) fn sql_destruction(sql: &str) -> Option<String> {
    static DROP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        crate::checks::pattern::compile(
            r#"(?i)\b(drop\s+(database|schema)(\s+if\s+exists)?\s+[`"\[]?([\w.-]+)|truncate\s+(table\s+)?[`"\[]?([\w.-]+)|flushall|flushdb|dropdatabase\(\))"#,
        )
    });
    let caps = DROP.captures(sql)?;
    let name = caps
        .get(4)
        .or_else(|| caps.get(6))
        .map(|m| m.as_str().to_ascii_lowercase())
        .unwrap_or_default();
    let scratch = [
        "test", "tmp", "temp", "dev", "local", "sandbox", "scratch", "demo", "ci", "example",
    ];
    if name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| scratch.contains(&w))
    {
        return None;
    }
    Some(format!(
        "runs `{}`: the data is gone",
        crate::checks::spec::truncate(caps.get(0).map_or("", |m| m.as_str()), 60)
    ))
}

/// Words whose presence in a variable name makes it a secret.
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "CREDENTIAL",
    "CREDENTIALS",
    "AUTH",
    "PAT",
    "COOKIE",
    "SESSION",
    "PRIVATE",
];

/// Whether a variable named `name` holds a secret (`OPENAI_API_KEY`, `GH_TOKEN`,
/// `AWS_SECRET_ACCESS_KEY`); `KEYBOARD`, `TOKENIZER_PATH` and `SSH_AUTH_SOCK` do not.
pub(crate) fn is_secret_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // what names or locates a secret is not one: `SESSION_ID`, `AWS_ACCESS_KEY_ID`,
    // `TOKEN_URL`, `SSH_AUTH_SOCK`, `KEY_FILE`
    if words.last().is_some_and(|w| NOT_SECRET_TAILS.contains(w)) {
        return false;
    }
    words.iter().any(|w| SECRET_WORDS.contains(w))
}

/// Last words of a variable's name that make it a name, an address or a setting of a secret
/// rather than the secret.
const NOT_SECRET_TAILS: &[&str] = &[
    "ID",
    "IDS",
    "NAME",
    "NAMES",
    "URL",
    "URI",
    "HOST",
    "HOSTNAME",
    "REGION",
    "USER",
    "USERNAME",
    "EMAIL",
    "PORT",
    "ENDPOINT",
    "DIR",
    "PATH",
    "FILE",
    "SOCK",
    "TYPE",
    "VERSION",
    "EXPIRY",
    "EXPIRES",
    "TTL",
    "LENGTH",
    "SIZE",
    "COUNT",
    "MODE",
    "FORMAT",
    "LIMIT",
    "ENABLED",
    "HEADER",
    "PREFIX",
    "SCOPE",
    "SCOPES",
    "ISSUER",
    "AUDIENCE",
    "ALGORITHM",
    "TIMEOUT",
];

/// Words of a secret's name that say nothing of its vendor.
const GENERIC_WORDS: &[&str] = &[
    "API", "KEY", "TOKEN", "SECRET", "ACCESS", "PASSWORD", "AUTH", "PAT", "ID", "CLIENT", "APP",
    "PERSONAL", "BOT", "USER", "PRIVATE", "SESSION", "THE", "MY", "ENV", "DEFAULT", "PASS",
];

/// Whether `host` belongs to the vendor the secret `name` is for: a word of the name
/// (`GOOGLE` of `GOOGLE_API_KEY`, `NGC` of `NGC_API_KEY`) in the host (`googleapis.com`,
/// `api.ngc.nvidia.com`). Sending a key to its own service is what keys are for.
pub(crate) fn is_own_vendor(name: &str, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 2 && !GENERIC_WORDS.contains(w))
        .collect();
    words.iter().any(|w| {
        let w = w.to_ascii_lowercase();
        host.contains(&w)
            || VENDOR_HOSTS
                .iter()
                .any(|(word, part)| *word == w && host.contains(part))
    })
}

/// Short names of vendors in secrets' names, and a piece of their API hosts.
const VENDOR_HOSTS: &[(&str, &str)] = &[
    ("gh", "github"),
    ("github", "githubusercontent"),
    ("hf", "huggingface"),
    ("aws", "amazonaws"),
    ("dd", "datadoghq"),
    ("datadog", "datadoghq"),
    ("cf", "cloudflare"),
    ("gcp", "googleapis"),
    ("google", "googleapis"),
    ("gemini", "googleapis"),
    ("firebase", "googleapis"),
    ("azure", "windows.net"),
    ("azure", "microsoft"),
    ("claude", "anthropic"),
    ("ngc", "nvidia"),
    ("nvidia", "nvidia"),
    ("jira", "atlassian"),
    ("confluence", "atlassian"),
    ("npm", "npmjs"),
    ("pypi", "pythonhosted"),
    ("docker", "docker.io"),
    ("ghcr", "ghcr.io"),
    ("gitlab", "gitlab"),
    ("ci", "gitlab"),
    ("langsmith", "langchain"),
    ("wandb", "wandb.ai"),
    ("xai", "x.ai"),
    ("pplx", "perplexity"),
    ("sonar", "sonarcloud"),
    ("pd", "pagerduty"),
];

/// The host of a URL-ish text (`https://user@host:8080/x` -> `host`), or of `user@host:path`
/// (scp), or of a bare `host:port`.
pub(crate) fn host_of(text: &str) -> Option<String> {
    let t = text.trim_matches(['"', '\'']);
    let rest = match t.find("://") {
        Some(i) => &t[i + 3..],
        None if t.contains('@') && t.contains(':') => t,
        None => return None,
    };
    let rest = rest.split(['/', '?', '#']).next().unwrap_or("");
    let rest = rest.rsplit('@').next().unwrap_or(rest);
    let host = rest
        .split(':')
        .next()
        .unwrap_or(rest)
        .trim_matches(['[', ']']);
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Hosts that are no trust boundary: this machine and the reserved example domains.
pub(crate) fn is_local_host(host: &str) -> bool {
    let h = host.trim_end_matches('.');
    matches!(h, "localhost" | "127.0.0.1" | "0.0.0.0" | "::1")
        || h.ends_with(".localhost")
        || h.ends_with(".local")
        || h.starts_with("${")
}

/// Whether a host is a bare IP address, a tunnel or paste service, or a throwaway domain:
/// where an honest installer does not live.
pub(crate) fn is_shady_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    let ip = h.split('.').count() == 4 && h.split('.').all(|p| p.parse::<u8>().is_ok());
    const SHADY: &[&str] = &[
        "pastebin.com",
        "paste.ee",
        "hastebin",
        "ghostbin",
        "transfer.sh",
        "ngrok",
        "trycloudflare",
        "serveo",
        "localtunnel",
        "loca.lt",
        "requestbin",
        "pipedream",
        "webhook.site",
        "burpcollaborator",
        "oast.",
        "interact.sh",
        "duckdns",
        "no-ip",
        "bit.ly",
        "tinyurl",
        "is.gd",
        "temp.sh",
        "0x0.st",
        "file.io",
        "anonfiles",
        "discord.com/api/webhooks",
        "discordapp",
        ".tk",
        ".xyz",
        ".top",
        ".ru",
    ];
    ip && !is_local_host(&h) || SHADY.iter().any(|s| h.contains(s))
}

/// Addresses of well-known installers (`curl ... | sh` from these is what their vendors
/// document). A host is known when it is one of these or below one.
const KNOWN_INSTALLERS: &[&str] = &[
    "astral.sh",
    "sh.rustup.rs",
    "rustup.rs",
    "get.docker.com",
    "download.docker.com",
    "dot.net",
    "dotnet.microsoft.com",
    "aka.ms",
    "packages.microsoft.com",
    "deno.land",
    "bun.sh",
    "brew.sh",
    "raw.githubusercontent.com",
    "github.com",
    "objects.githubusercontent.com",
    "deb.nodesource.com",
    "rpm.nodesource.com",
    "install.python-poetry.org",
    "python-poetry.org",
    "pyenv.run",
    "get.helm.sh",
    "cli.github.com",
    "fnm.vercel.app",
    "get.volta.sh",
    "sdkman.io",
    "get.sdkman.io",
    "starship.rs",
    "micro.mamba.pm",
    "repo.anaconda.com",
    "conda.io",
    "ollama.com",
    "get.k3s.io",
    "tailscale.com",
    "sdk.cloud.google.com",
    "awscli.amazonaws.com",
    "apt.llvm.org",
    "nvidia.com",
    "pypa.io",
    "get.pnpm.io",
    "yarnpkg.com",
    "nodejs.org",
    "go.dev",
    "golang.org",
    "opentofu.org",
    "releases.hashicorp.com",
    "get.jetify.com",
    "nixos.org",
    "install.determinate.systems",
    "mise.run",
    "pixi.sh",
    "claude.ai",
    "anthropic.com",
    "openai.com",
    "huggingface.co",
    "gitlab.com",
    "kubernetes.io",
    "dl.k8s.io",
    "get.rvm.io",
    "opencode.ai",
    "codeload.github.com",
    "community.chocolatey.org",
];

/// Whether `host` is a well-known installer's address.
pub(crate) fn is_known_installer(host: &str) -> bool {
    let h = host.trim_end_matches('.');
    KNOWN_INSTALLERS
        .iter()
        .any(|k| h == *k || h.ends_with(&format!(".{k}")))
}

/// Commands whose output is the whole environment.
pub(crate) fn env_dump_command(argv: &[String]) -> bool {
    match argv.first().map(String::as_str) {
        Some("env" | "printenv") => argv.len() == 1 || argv[1..].iter().all(|a| a.starts_with('-')),
        Some("set") => argv.len() == 1,
        Some("export") => argv.get(1).is_some_and(|a| a == "-p"),
        Some("declare") => argv.get(1).is_some_and(|a| a == "-x" || a == "-p"),
        _ => false,
    }
}

/// Commands whose output is a credential: CLIs print the tokens they hold when asked
/// (`gh auth token`, `gcloud auth print-access-token`, `security find-generic-password -w`).
/// Their output sent out is a stolen credential as surely as `cat ~/.aws/credentials`.
pub(crate) fn credential_command(argv: &[String]) -> bool {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let has = |w: &str| words.contains(&w);
    match words.first().copied().unwrap_or("") {
        "gh" => has("auth") && (has("token") || has("--show-token")),
        "aws" => {
            has("configure") && (has("get") || has("export-credentials"))
                || has("get-session-token")
                || has("get-login-password")
        }
        "gcloud" => words
            .iter()
            .any(|w| w.starts_with("print-access-token") || w.starts_with("print-identity-token")),
        "az" => has("get-access-token"),
        "security" => words.iter().any(|w| {
            matches!(
                *w,
                "find-generic-password" | "find-internet-password" | "dump-keychain"
            )
        }),
        "op" => has("read") || has("item") && has("get"),
        "vault" => has("read") || has("kv") && has("get"),
        "kubectl" => has("config") && has("view") && has("--raw"),
        "heroku" => has("auth:token"),
        "git" => has("credential") && has("fill"),
        first => first.starts_with("docker-credential-") && has("get"),
    }
}

/// The taint of a variable read by name (`$AWS_SECRET_ACCESS_KEY`, `os.getenv("X")`).
pub(crate) fn var_taint(name: &str) -> Taint {
    if is_secret_var(name) {
        Taint::SECRET_VAR
    } else {
        Taint::NONE
    }
}

/// Hosts that receive data for whoever set them up: chat webhooks and bot APIs, paste and
/// file-drop sites, request catchers, tunnels, bare IPs. A secret sent there is gone.
pub(crate) fn is_exfil_channel(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    is_shady_host(&h)
        || [
            "hooks.slack.com",
            "discord.com",
            "discordapp.com",
            "api.telegram.org",
            "hooks.zapier.com",
            "maker.ifttt.com",
            "requestcatcher",
            "beeceptor",
            "mockbin",
            "hookbin",
            "ntfy.sh",
        ]
        .iter()
        .any(|s| h.contains(s))
}

/// A host that stands for "your own" in an example: a placeholder word or a private address.
pub(crate) fn is_placeholder_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    is_private_ip(&h)
        || [
            "attacker",
            "your-",
            "your_",
            "yourserver",
            "collaborator",
            "lhost",
            "evil.com",
            "<",
            "{",
            "$",
        ]
        .iter()
        .any(|w| h.contains(w))
        || is_example_host(&h)
}

/// The reserved example domains.
pub(crate) fn is_example_host(h: &str) -> bool {
    ["example.com", "example.org", "example.net"]
        .iter()
        .any(|d| h == *d || h.ends_with(&format!(".{d}")))
        || h.ends_with(".example")
        || h.ends_with(".test")
        || h.ends_with(".invalid")
}

/// RFC 1918 and loopback addresses: a lab or this machine, not an attacker's server.
pub(crate) fn is_private_ip(h: &str) -> bool {
    let parts: Vec<u8> = h.split('.').filter_map(|p| p.parse().ok()).collect();
    if parts.len() != 4 || h.split('.').count() != 4 {
        return false;
    }
    matches!(parts[..], [10, ..] | [127, ..] | [192, 168, ..])
        || parts[0] == 172 && (16..=31).contains(&parts[1])
}

/// Whether every network peer a piece of code names is a placeholder or a private address
/// (and it names at least one): a cheat sheet's `LHOST`, a lab's `10.10.14.5`.
pub(crate) fn peers_are_placeholders(code: &str) -> bool {
    static DOMAIN: LazyLock<Regex> = LazyLock::new(|| {
        crate::checks::pattern::compile(
            r"(?i)\b[a-z0-9][a-z0-9-]*(\.[a-z0-9-]+)*\.(com|net|org|io|dev|xyz|ru|cn|app|co|me|sh|cc|top|info|biz|tk|site|online|live|pw|su|ws|link|cloud|tech|host|space|fun|stream|ca|zone)\b",
        )
    });
    static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
        crate::checks::pattern::compile(
            r"(?i)\b(lhost|rhost|attacker_?ip|attacker|your_?ip|your-ip|my_?ip|listener_?ip|ip_?address|target_?ip|kali)\b|<\s*(ip|lhost|host|attacker[^>]*|your[^>]*)\s*>|\{\s*(ip|lhost|host)\s*\}|\$\{?(lhost|ip|host|attacker_ip)\}?\b|x\.x\.x\.x",
        )
    });
    let mut placeholder = PLACEHOLDER.is_match(code);
    for m in IPV4.find_iter(code) {
        if is_private_ip(m.as_str()) || m.as_str() == "0.0.0.0" {
            placeholder = true;
        } else {
            return false;
        }
    }
    for m in DOMAIN.find_iter(code) {
        let d = m.as_str().to_ascii_lowercase();
        if is_placeholder_host(&d) {
            placeholder = true;
        } else {
            return false;
        }
    }
    placeholder
}

/// Stores of other people's or other apps' secrets an honest skill does not open: browser
/// cookie and login databases, keychains, wallets, private keys, another process's
/// environment, agent and CLI tokens.
pub(crate) fn is_harvest_store(path: &str) -> bool {
    let p = path.to_ascii_lowercase().replace('\\', "/");
    [
        "login data",
        "cookies",
        "logins.json",
        "key4.db",
        "web data",
        "local state",
        "keychain",
        "wallet",
        "exodus",
        "electrum",
        "metamask",
        ".ethereum/keystore",
        "local storage/leveldb",
        ".ssh/id_",
        "/environ",
        ".git-credentials",
        ".netrc",
        ".claude/.credentials",
        ".codex/auth.json",
        "gh/hosts.yml",
        ".config/github-copilot",
        ".password-store",
        ".gnupg/private",
    ]
    .iter()
    .any(|s| p.contains(s))
        && !p.ends_with(".pub")
}

/// The kinds of agent configuration a write can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentConfig {
    /// Settings: permissions, hooks, MCP servers, approval and sandbox modes.
    Settings,
    /// Instructions the agent reads every session (CLAUDE.md, AGENTS.md, rules files);
    /// `global`: the user's own, for every project.
    Instructions { global: bool },
    /// The folders agents load skills from.
    Skills,
}

/// What a (lowercased, `/`-separated) path is to an agent, if anything.
pub(crate) fn agent_config(lower: &str) -> Option<AgentConfig> {
    const SETTINGS: &[&str] = &[
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude.json",
        ".mcp.json",
        ".claude/hooks",
        ".codex/config.toml",
        ".codex/config.json",
        ".gemini/settings.json",
        ".cursor/mcp.json",
        ".cursor/settings.json",
        ".vscode/settings.json",
        ".vscode/mcp.json",
        ".windsurf/",
        ".codeium/windsurf/mcp_config.json",
        ".continue/config",
        "opencode.json",
        ".config/opencode/",
        "claude_desktop_config.json",
        ".amp/settings.json",
    ];
    const INSTRUCTIONS: &[&str] = &[
        "claude.md",
        "agents.md",
        "gemini.md",
        ".cursorrules",
        ".clinerules",
        ".windsurfrules",
        "copilot-instructions.md",
        ".cursor/rules/",
        ".claude/commands/",
        ".claude/agents/",
    ];
    if [
        ".claude/skills/",
        ".codex/skills/",
        ".agents/skills/",
        ".gemini/skills/",
        ".cursor/skills/",
        ".config/opencode/skill",
    ]
    .iter()
    .any(|s| lower.contains(s))
    {
        return Some(AgentConfig::Skills);
    }
    if SETTINGS.iter().any(|s| {
        lower.ends_with(s)
            || lower.contains(&format!("{s}/"))
            || s.ends_with('/') && lower.contains(s)
    }) {
        return Some(AgentConfig::Settings);
    }
    if INSTRUCTIONS
        .iter()
        .any(|s| lower.ends_with(s) || s.ends_with('/') && lower.contains(s))
    {
        // the user's own (for every project), not a project's (`…/.claude/commands/x.md`
        // below a folder the code was given)
        let global = lower.starts_with('~')
            || lower.starts_with("$home")
            || lower.starts_with("/home/")
            || lower.starts_with("/users/")
            || lower.starts_with("/root/");
        return Some(AgentConfig::Instructions { global });
    }
    None
}

/// Names under these resolve only inside a company's or a home's network.
pub(crate) const PRIVATE_SUFFIXES: &[&str] = &[
    ".internal",
    ".corp",
    ".lan",
    ".intranet",
    ".local",
    ".private",
];

/// An IPv4 address's shape (the numbers are not checked).
pub(crate) static IPV4: LazyLock<Regex> =
    LazyLock::new(|| crate::checks::pattern::compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b"));

/// Whether a package index address looks private (a company's own): what dependency
/// confusion abuses when it is only `--extra-index-url`.
pub(crate) fn is_private_index(url: &str) -> bool {
    let host = host_of(url).unwrap_or_default();
    is_private_ip(&host)
        || PRIVATE_SUFFIXES.iter().any(|s| host.ends_with(s))
        || [
            "artifactory",
            "nexus",
            "jfrog",
            "pkgs.dev.azure.com",
            "codeartifact",
            "intranet",
            "internal",
        ]
        .iter()
        .any(|s| url.to_ascii_lowercase().contains(s))
        || url.contains("/api/v4/projects/")
}

/// Public package indexes and mirrors that vendors document.
pub(crate) fn is_known_index(host: &str) -> bool {
    [
        "pypi.org",
        "files.pythonhosted.org",
        "registry.npmjs.org",
        "registry.yarnpkg.com",
        "download.pytorch.org",
        "pypi.nvidia.com",
        "pypi.ngc.nvidia.com",
        "nvidia.com",
        "anaconda.org",
        "conda.anaconda.org",
        "data.pyg.org",
        "pkg.dev",
        "storage.googleapis.com",
        "huggingface.co",
        "github.com",
        "codeload.github.com",
        "gitlab.com",
        "npm.pkg.github.com",
        "crates.io",
        "proxy.golang.org",
        "rubygems.org",
        "repo.maven.apache.org",
        "wheels.myst.rocks",
        "astral.sh",
    ]
    .iter()
    .any(|k| host == *k || host.ends_with(&format!(".{k}")))
}

/// What deleting `path` would destroy, when a skill has no business deleting it: the home
/// folder or the user's data in it, the system, every repository below home.
pub(crate) fn precious(path: &str, recursive: bool) -> Option<&'static str> {
    let p = path
        .trim_matches(['"', '\''])
        .replace('\\', "/")
        .replace("${HOME}", "~")
        .replace("$HOME", "~")
        .replace("$env:USERPROFILE", "~")
        .replace("%USERPROFILE%", "~");
    let p = p.trim_end_matches(['*', '/']).trim_end_matches("/.");
    let lower = p.to_ascii_lowercase();
    let home_root = matches!(
        lower.as_str(),
        "~" | "" | "/home" | "/users" | "c:/users" | "c:"
    ) || (lower.starts_with("/home/") || lower.starts_with("/users/"))
        && lower.matches('/').count() == 2;
    if home_root && (recursive || path.contains('*')) {
        return Some(
            if lower.is_empty() && path.trim_matches(['"', '\'']).starts_with('/') {
                "the whole file system"
            } else {
                "the home folder"
            },
        );
    }
    const SYSTEM: &[&str] = &[
        "/etc",
        "/usr",
        "/bin",
        "/sbin",
        "/boot",
        "/lib",
        "/lib64",
        "/var",
        "/opt",
        "/system",
        "/library",
        "/private",
        "c:/windows",
    ];
    if recursive && SYSTEM.contains(&lower.as_str()) {
        return Some("a system folder");
    }
    let below_home = lower.strip_prefix("~/")?;
    if let Some(name) = below_home.strip_prefix("**/") {
        const JUNK: &[&str] = &[
            ".ds_store",
            "__pycache__",
            "*.pyc",
            "*.pyo",
            "*.tmp",
            "*~",
            "thumbs.db",
            "node_modules",
            ".cache",
            "*.log",
            "*.swp",
        ];
        return (!JUNK.contains(&name)).then_some(if name == ".git" {
            "every git repository below the home folder"
        } else {
            "matching files everywhere below the home folder"
        });
    }
    const DATA: &[&str] = &[
        "documents",
        "desktop",
        "pictures",
        "downloads",
        "movies",
        "music",
        "photos",
        "library",
        ".ssh",
        ".gnupg",
        ".aws",
        ".config",
        ".local",
        "projects",
        "code",
        "src",
        "work",
        "dev",
        "repos",
        "workspace",
        "onedrive",
        "dropbox",
        "google drive",
        "icloud drive",
    ];
    let first = below_home.split('/').next().unwrap_or("");
    let whole = !below_home.contains('/')
        || below_home.split('/').nth(1).is_some_and(|r| {
            r.starts_with('*') || r.starts_with("id_") || r.starts_with("private-keys")
        });
    (DATA.contains(&first) && whole).then_some(if first.starts_with('.') {
        "the user's keys or settings"
    } else {
        "the user's files"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        crate::checks::pattern::force_every_static!(include_str!("knowledge.rs"), IPV4);
    }

    #[test]
    fn secret_paths_and_names() {
        for p in [
            "~/.aws/credentials",
            "$HOME/.ssh/id_rsa",
            "@~/.ssh/id_ed25519",
            ".env",
            "/home/u/.netrc",
        ] {
            assert!(is_secret_path(p), "{p}");
        }
        for p in [
            "~/.ssh/id_rsa.pub",
            ".env.example",
            "README.md",
            "config.yaml",
        ] {
            assert!(!is_secret_path(p), "{p}");
        }
        assert!(is_secret_var("OPENAI_API_KEY") && is_secret_var("GH_TOKEN"));
        assert!(
            !is_secret_var("KEYBOARD") && !is_secret_var("SSH_AUTH_SOCK") && !is_secret_var("HOME")
        );
        assert!(is_own_vendor(
            "GOOGLE_API_KEY",
            "generativelanguage.googleapis.com"
        ));
        assert!(is_own_vendor("GH_TOKEN", "api.github.com"));
        assert!(!is_own_vendor("OPENAI_API_KEY", "collect.evil.io"));
        assert_eq!(host_of("https://u@x.io:8080/a?b").as_deref(), Some("x.io"));
        assert_eq!(host_of("user@10.0.0.5:/tmp").as_deref(), Some("10.0.0.5"));
        assert!(
            is_shady_host("45.77.10.2")
                && !is_shady_host("127.0.0.1")
                && !is_shady_host("pypi.org")
        );
    }
}

#[cfg(test)]
mod destruction_tests {
    use super::*;

    #[test]
    fn credential_printing_commands() {
        let argv = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        for yes in [
            "gh auth token",
            "gcloud auth print-access-token",
            "aws configure get aws_secret_access_key",
            "security find-generic-password -s github -w",
            "kubectl config view --raw",
            "docker-credential-desktop get",
        ] {
            assert!(credential_command(&argv(yes)), "{yes}");
        }
        for no in [
            "gh issue list",
            "aws s3 ls",
            "kubectl config view",
            "git status",
        ] {
            assert!(!credential_command(&argv(no)), "{no}");
        }
    }

    #[test]
    fn sql_that_destroys() {
        assert!(sql_destruction("DROP DATABASE production;").is_some());
        assert!(sql_destruction("drop schema public cascade").is_some());
        assert!(sql_destruction("DROP DATABASE IF EXISTS app_test;").is_none());
        assert!(sql_destruction("DROP TABLE IF EXISTS flags;").is_none());
    }
}
