//! `skillwatch index check URL|DIR`: seed 002's six steps on a site, or on a built folder
//! before it is published.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use skillwatch_core::index::check::{self, Options};
use skillwatch_core::index::steps::Status;
use skillwatch_core::index::urls;

use super::report;
use super::site::{Bounds, Folder, FolderSite, Http, HttpSite, Stager};
use crate::report::{Color, Format};

/// The origin a folder is read as when no `--base-url` says: `.invalid` never resolves, so
/// nothing of the folder's own is ever fetched from the network by mistake.
const FOLDER_ORIGIN: &str = "https://site.invalid";

/// Arguments of `skillwatch index check`.
#[derive(clap::Args)]
#[command(after_help = "Exit status: 0 pass or warn, 1 fail, 2 bad usage.")]
pub struct Args {
    /// The site (`https://example.com`: its origin is checked) or a folder `index build`
    /// wrote (checked as the site it will be).
    target: String,

    /// For a folder: the origin it will be served at (URLs of that origin read the folder)
    /// [default: https://site.invalid].
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,

    /// Output format: `human`, `json` or `sarif`.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// Shorthand for `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,

    /// Seconds one request may take, body included.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,

    /// Bytes one response may hold (index or artifact).
    #[arg(long, value_name = "BYTES", default_value_t = 32 * 1024 * 1024)]
    max_bytes: u64,

    /// Redirects followed per request.
    #[arg(long, value_name = "N", default_value_t = 5)]
    max_redirects: usize,

    /// Color in human output: auto, always, never.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

/// Run the check and print the report.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    if format == Format::Github {
        bail!("index check has no --format github yet: use --format sarif for code scanning");
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!("--timeout must be a positive number of seconds");
    }
    let bounds = Bounds {
        timeout: Duration::from_secs_f64(args.timeout),
        max_bytes: args.max_bytes,
        max_redirects: args.max_redirects,
    };
    let http = Http::new(bounds).context("starting the HTTP client")?;
    let stager = Stager::new().context("creating a temporary folder")?;
    let options = Options {
        max_artifacts: 100,
        archive: Default::default(),
    };
    let target = args.target.as_str();
    let report = if target.starts_with("http://") || target.starts_with("https://") {
        if args.base_url.is_some() {
            bail!("--base-url is for a folder; a URL is checked at its own origin");
        }
        let origin = origin_of(target)?;
        check::run(&origin, &mut HttpSite { http, stager }, &options)
    } else {
        let dir = PathBuf::from(target);
        if !dir.is_dir() {
            bail!("{target}: neither an http(s) URL nor a folder");
        }
        let origin = origin_of(args.base_url.as_deref().unwrap_or(FOLDER_ORIGIN))?;
        let folder = Folder::new(&dir, &origin, http, bounds.max_bytes)
            .with_context(|| format!("{target}: cannot be read"))?;
        check::run(&origin, &mut FolderSite { folder, stager }, &options)
    };
    let written = report::render(&report, format, args.color.enabled());
    if let Err(error) = written
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(error).context("writing the report");
    }
    Ok(match report.status {
        Status::Fail => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// `scheme://host[:port]` of a URL, normalized as resolved artifact URLs are (so the two
/// compare), refusing anything but http(s) and URLs with credentials.
fn origin_of(url: &str) -> anyhow::Result<String> {
    urls::check_reference(url)?;
    let root =
        urls::resolve(url, "/").with_context(|| format!("`{url}` is not a usable http(s) URL"))?;
    Ok(root.trim_end_matches('/').to_string())
}
