//! Artifact URLs: references resolved against the index URL by RFC 3986 (section 5), as the
//! seed says, and each resolved URL placed relative to the index's origin.
//!
//! Resolution uses `fluent-uri`, an RFC 3986 implementation: the `url` crate the HTTP client
//! uses follows the WHATWG URL standard, which accepts references RFC 3986 refuses (a
//! backslash, a space) and would resolve them where a strict client would not.

use fluent_uri::{Uri, UriRef};
use serde::Serialize;

/// Where an artifact lives relative to the index that advertises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Same scheme, host and port as the index.
    SameOrigin,
    /// Another origin of the same site: same scheme and registrable domain (eTLD+1 by the
    /// Public Suffix List; for an IP address or a single-label host, the same host).
    SameSite,
    /// Another site: a separate trust boundary.
    External,
}

impl Placement {
    /// Whether fetching it crosses the index's origin (a trust boundary the seed records).
    pub fn crosses_origin(self) -> bool {
        self != Placement::SameOrigin
    }
}

/// Why a reference cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not an RFC 3986 URI reference.
    #[error("`{reference}` is not a URI reference (RFC 3986): {reason}")]
    Syntax { reference: String, reason: String },
    /// Resolves to a scheme other than http(s).
    #[error("`{url}` uses the scheme `{scheme}`; artifacts are fetched over http or https only")]
    Scheme { url: String, scheme: String },
    /// Carries a user name or password, which a client would send.
    #[error("`{reference}` carries credentials (user information before `@`); they are never sent")]
    Credentials { reference: String },
    /// The base itself is unusable (a bug of the caller: bases come from the checked target).
    #[error("cannot resolve `{reference}` against `{base}`")]
    Resolve { reference: String, base: String },
}

/// Check a reference's syntax on its own (what the entries step can say before any fetch).
pub fn check_reference(reference: &str) -> Result<(), UrlError> {
    let parsed = UriRef::parse(reference).map_err(|e| UrlError::Syntax {
        reference: reference.to_string(),
        reason: e.to_string(),
    })?;
    if let Some(scheme) = parsed.scheme() {
        let scheme = scheme.as_str().to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(UrlError::Scheme {
                url: reference.to_string(),
                scheme,
            });
        }
    }
    if parsed.authority().is_some_and(|a| a.userinfo().is_some()) {
        return Err(UrlError::Credentials {
            reference: reference.to_string(),
        });
    }
    Ok(())
}

/// Resolve `reference` against `base` (the URL the index was served from), RFC 3986 section
/// 5.2, with the result normalized (section 6.2.2: case, dot segments, default port).
pub fn resolve(base: &str, reference: &str) -> Result<String, UrlError> {
    check_reference(reference)?;
    let unusable = || UrlError::Resolve {
        reference: reference.to_string(),
        base: base.to_string(),
    };
    let base_uri = Uri::parse(base).map_err(|_| unusable())?;
    let parsed = UriRef::parse(reference).map_err(|_| unusable())?;
    let resolved = parsed.resolve_against(&base_uri).map_err(|_| unusable())?;
    let mut text = resolved.normalize().as_str().to_string();
    // the fragment is the client's, never sent
    if let Some(hash) = text.find('#') {
        text.truncate(hash);
    }
    Ok(text)
}

/// Scheme, host and port of an absolute URL (the port defaulted by the scheme).
fn origin(url: &str) -> Option<(String, String, Option<u16>)> {
    let uri = Uri::parse(url).ok()?;
    let scheme = uri.scheme().as_str().to_ascii_lowercase();
    let authority = uri.authority()?;
    let host = authority.host().to_ascii_lowercase();
    let port = authority
        .port_to_u16()
        .ok()
        .flatten()
        .or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        });
    Some((scheme, host, port))
}

/// Where `artifact` lives relative to `index` (both absolute URLs).
pub fn placement(index: &str, artifact: &str) -> Placement {
    let (Some(a), Some(b)) = (origin(index), origin(artifact)) else {
        return Placement::External;
    };
    if a == b {
        return Placement::SameOrigin;
    }
    if a.0 == b.0 && site(&a.1) == site(&b.1) {
        return Placement::SameSite;
    }
    Placement::External
}

/// The registrable domain of a host; the host itself when it has none (an IP address,
/// `localhost`, a name under an unknown suffix).
fn site(host: &str) -> String {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<std::net::IpAddr>().is_ok() {
        return bare.to_string();
    }
    let host = host.trim_end_matches('.');
    match psl::domain(host.as_bytes()) {
        Some(domain) if domain.suffix().is_known() => {
            String::from_utf8_lossy(domain.as_bytes()).into_owned()
        }
        _ => host.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_as_rfc_3986_says() {
        let base = "https://example.com/.well-known/agent-skills/index.json";
        let cases = [
            (
                "pdf/SKILL.md",
                "https://example.com/.well-known/agent-skills/pdf/SKILL.md",
            ),
            (
                "../skills/x.tar.gz",
                "https://example.com/.well-known/skills/x.tar.gz",
            ),
            ("/a/b.zip", "https://example.com/a/b.zip"),
            ("//cdn.example.net/x.zip", "https://cdn.example.net/x.zip"),
            (
                "HTTPS://Example.COM:443/a/./b/../c",
                "https://example.com/a/c",
            ),
            (
                "x.md#part",
                "https://example.com/.well-known/agent-skills/x.md",
            ),
            // RFC 3986 5.4.2: more `..` than segments stop at the root
            ("../../../../etc/passwd", "https://example.com/etc/passwd"),
        ];
        for (reference, expected) in cases {
            assert_eq!(resolve(base, reference).unwrap(), expected, "{reference}");
        }
    }

    #[test]
    fn unusable_references_are_refused_with_the_reason() {
        for bad in ["a b/SKILL.md", "a\\b", "http://[::1", "%zz"] {
            assert!(
                matches!(check_reference(bad), Err(UrlError::Syntax { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            check_reference("file:///etc/passwd"),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(
            check_reference(&format!("https://user:secret{}example.com/x", '@')),
            Err(UrlError::Credentials { .. })
        ));
    }

    #[test]
    fn placements_follow_origin_and_registrable_domain() {
        let index = "https://docs.example.com/.well-known/agent-skills/index.json";
        let at = |url| placement(index, url);
        assert_eq!(at("https://docs.example.com:443/x"), Placement::SameOrigin);
        assert_eq!(at("https://cdn.example.com/x"), Placement::SameSite);
        assert_eq!(at("http://docs.example.com/x"), Placement::External);
        assert_eq!(at("https://example.org/x"), Placement::External);
        // github.io is a public suffix: two users' pages are two sites
        assert_eq!(
            placement("https://a.github.io/i.json", "https://b.github.io/x"),
            Placement::External
        );
        let local = "http://127.0.0.1:8000/.well-known/agent-skills/index.json";
        assert_eq!(
            placement(local, "http://127.0.0.1:9000/x"),
            Placement::SameSite
        );
        assert_eq!(
            placement(local, "http://localhost:8000/x"),
            Placement::External
        );
    }
}
