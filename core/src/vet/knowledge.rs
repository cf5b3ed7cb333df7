//! What names mean: credential paths, secret-named variables, a secret's own vendor, hosts
//! that are no trust boundary. One table each, read by every language analysis.

use super::facts::Taint;

/// Path pieces of credential stores. Matched on the lowercased path with `\` as `/`.
const SECRET_PATHS: &[&str] = &[
    ".ssh/id_",
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
    if upper.ends_with("_PATH") || upper.ends_with("_FILE") || upper.ends_with("_SOCK") {
        return false;
    }
    upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| SECRET_WORDS.contains(&w))
}

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
            || (w == "gh" && host.contains("github"))
            || (w == "hf" && host.contains("huggingface"))
            || (w == "aws" && host.contains("amazonaws"))
    })
}

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

/// The taint of a variable read by name (`$AWS_SECRET_ACCESS_KEY`, `os.getenv("X")`).
pub(crate) fn var_taint(name: &str) -> Taint {
    if is_secret_var(name) {
        Taint::SECRET_VAR
    } else {
        Taint::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
