//! Agent Skills discovery indexes (seed 002, the "agent-skills" check specification 1.0.0):
//! what a site publishes at `/.well-known/agent-skills/index.json` so agents can find its
//! skills, and the six weighted steps that judge such a site.
//!
//! - [`document`]: the index itself (Discovery v0.2.0), parsed with spans and validated
//!   against the derived schema `schemas/agent-skills-discovery-0.2.0.schema.json`, the one
//!   table of its fields; the LSP's diagnostics on an `index.json` come from here too.
//! - [`steps`]: the seed's six steps and weights, statuses and the score.
//! - [`urls`]: RFC 3986 resolution of artifact references and the origin classification.
//! - [`archive`]: bounded inspection of zip and tar(.gz) artifacts in memory, and the
//!   reproducible tar.gz `index build` writes.
//! - [`check`]: the six steps in order over a [`check::Site`] the caller provides (HTTP for a
//!   URL, a folder for a built site): this crate fetches nothing itself.
//!
//! The SKILL.md content and security steps are `check`'s own rules, run on the artifact's
//! files staged in a temporary folder ([`check::Site::stage`]).

pub mod archive;
pub mod check;
pub mod document;
pub mod steps;
pub mod urls;

/// The check this module implements, as the seed names it.
pub const CHECK_ID: &str = "agent-skills";
/// The seed's version of the check.
pub const CHECK_VERSION: &str = "1.0.0";
/// The only `$schema` Discovery v0.2.0 accepts.
pub const SCHEMA_URI: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Where a site publishes its index.
pub const CANONICAL_PATH: &str = "/.well-known/agent-skills/index.json";
/// The older path, recognized as compatibility evidence (a warning).
pub const LEGACY_PATH: &str = "/.well-known/skills/index.json";
/// The derived JSON Schema of the index (JSON Schema 2020-12), as shipped.
pub const DISCOVERY_SCHEMA: &str =
    include_str!("../../../schemas/agent-skills-discovery-0.2.0.schema.json");

/// `sha256:` and the lowercase hex SHA-256 of `bytes`: the digest form v0.2.0 defines,
/// always of the raw bytes as served.
pub fn digest_of(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("sha256:{:x}", Sha256::digest(bytes))
}
