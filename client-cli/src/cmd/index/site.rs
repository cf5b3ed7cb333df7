//! The two sites `index check` reads: a real origin over HTTP, and a built folder read as a
//! static server would serve it. Both stage artifacts in one temporary folder, removed when
//! the check ends.
//!
//! HTTP is reqwest's, bounded: a deadline per request (headers and body), a size limit per
//! response read chunk by chunk (an endless body stops at the limit), a redirect limit, only
//! http and https (a redirect elsewhere is refused), no cookies and no credentials (URLs with
//! user information are refused before any request; the client keeps no cookie store and
//! sets no Authorization header).

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use skillwatch_core::index::archive::ArchiveFile;
use skillwatch_core::index::check::{Fetched, Site};

/// Bounds of every request.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Deadline of one request, from sending it to the body's last byte.
    pub timeout: Duration,
    /// Bytes one response body may hold.
    pub max_bytes: u64,
    /// Redirects followed per request.
    pub max_redirects: usize,
}

/// An origin over HTTP.
pub struct Http {
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
    bounds: Bounds,
}

impl Http {
    /// A client with the bounds.
    pub fn new(bounds: Bounds) -> anyhow::Result<Http> {
        let max = bounds.max_redirects;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if !matches!(attempt.url().scheme(), "http" | "https") {
                let scheme = attempt.url().scheme().to_string();
                attempt.error(format!(
                    "a redirect to the scheme `{scheme}` (only http and https are followed)"
                ))
            } else if attempt.previous().len() > max {
                attempt.error(format!("more than {max} redirects"))
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .redirect(policy)
            .connect_timeout(bounds.timeout)
            .user_agent(concat!(
                "skillwatch/",
                env!("CARGO_PKG_VERSION"),
                " (agent-skills index check)"
            ))
            .build()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Http {
            client,
            runtime,
            bounds,
        })
    }

    /// GET `url` within the bounds.
    pub fn get(&self, url: &str) -> Fetched {
        let mut fetched = Fetched {
            url: url.to_string(),
            final_url: url.to_string(),
            ..Fetched::default()
        };
        let parsed = match reqwest::Url::parse(url) {
            Ok(u) => u,
            Err(e) => {
                fetched.error = Some(format!("is not a URL: {e}"));
                return fetched;
            }
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            fetched.error = Some(format!(
                "uses `{}`: only http and https are fetched",
                parsed.scheme()
            ));
            return fetched;
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            fetched.error = Some("carries credentials; they are never sent".to_string());
            return fetched;
        }
        let timeout = self.bounds.timeout;
        let result = self.runtime.block_on(async {
            tokio::time::timeout(timeout, self.read(parsed, &mut fetched)).await
        });
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                fetched.body.clear();
                fetched.error = Some(e);
            }
            Err(_) => {
                fetched.body.clear();
                fetched.error = Some(format!("timed out after {}", seconds(timeout)));
            }
        }
        fetched
    }

    async fn read(&self, url: reqwest::Url, fetched: &mut Fetched) -> Result<(), String> {
        let mut response = self.client.get(url).send().await.map_err(describe)?;
        fetched.final_url = response.url().to_string();
        fetched.status = Some(response.status().as_u16());
        fetched.content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let max = self.bounds.max_bytes;
        if response.content_length().is_some_and(|n| n > max) {
            return Err(format!("announces a body over the limit of {max} bytes"));
        }
        while let Some(chunk) = response.chunk().await.map_err(describe)? {
            if fetched.body.len() as u64 + chunk.len() as u64 > max {
                return Err(format!("sent more than the limit of {max} bytes"));
            }
            fetched.body.extend_from_slice(&chunk);
        }
        Ok(())
    }
}

fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// A request error in a sentence (reqwest's own chain, which names no header values).
fn describe(e: reqwest::Error) -> String {
    use std::error::Error;
    let mut text = if e.is_redirect() {
        "stopped following redirects".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else if e.is_timeout() {
        "timed out".to_string()
    } else {
        "failed".to_string()
    };
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// A built site in a folder, served as if at `origin`: URLs of that origin read files of the
/// folder (never through a link out of it), any other URL goes over HTTP.
pub struct Folder {
    root: PathBuf,
    origin: String,
    http: Http,
    max_bytes: u64,
}

impl Folder {
    /// The folder `root`, read as the site at `origin` (no trailing slash).
    pub fn new(root: &Path, origin: &str, http: Http, max_bytes: u64) -> anyhow::Result<Folder> {
        Ok(Folder {
            root: root.canonicalize()?,
            origin: origin.trim_end_matches('/').to_string(),
            http,
            max_bytes,
        })
    }

    fn read(&self, url: &str, path: &str) -> Fetched {
        let mut fetched = Fetched {
            url: url.to_string(),
            final_url: url.to_string(),
            ..Fetched::default()
        };
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let Some(file) = self.file_of(path) else {
            fetched.status = Some(404);
            return fetched;
        };
        match std::fs::metadata(&file) {
            Ok(m) if m.is_file() && m.len() > self.max_bytes => {
                fetched.error = Some(format!("is over the limit of {} bytes", self.max_bytes));
            }
            Ok(m) if m.is_file() => match std::fs::read(&file) {
                Ok(bytes) => {
                    fetched.status = Some(200);
                    fetched.content_type = Some(media_type_of(path).to_string());
                    fetched.body = bytes;
                }
                Err(e) => fetched.error = Some(format!("cannot be read: {e}")),
            },
            _ => fetched.status = Some(404),
        }
        fetched
    }

    /// The file a URL path names: percent-decoded, only normal components, and (through
    /// any link) inside the folder.
    fn file_of(&self, path: &str) -> Option<PathBuf> {
        let decoded = percent_decode(path)?;
        let mut file = self.root.clone();
        for part in Path::new(decoded.trim_start_matches('/')).components() {
            match part {
                Component::Normal(p) => file.push(p),
                _ => return None,
            }
        }
        let real = file.canonicalize().ok()?;
        real.starts_with(&self.root).then_some(real)
    }
}

/// What a static server sends for a file of a built site.
fn media_type_of(path: &str) -> &'static str {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".json") {
        "application/json"
    } else if lower.ends_with(".md") {
        "text/markdown; charset=utf-8"
    } else if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
        "application/gzip"
    } else if lower.ends_with(".zip") {
        "application/zip"
    } else if lower.ends_with(".tar") {
        "application/x-tar"
    } else {
        "application/octet-stream"
    }
}

fn percent_decode(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The temporary folder artifacts are staged in; removed when dropped.
pub struct Stager {
    tmp: tempfile::TempDir,
    count: usize,
}

impl Stager {
    /// A new temporary folder.
    pub fn new() -> anyhow::Result<Stager> {
        Ok(Stager {
            tmp: tempfile::Builder::new()
                .prefix("skillwatch-index-")
                .tempdir()?,
            count: 0,
        })
    }

    /// `files` into `<tmp>/<n>/<name>/`. The paths come from archive inspection (plain
    /// relative paths); they are checked again here, so nothing lands outside the folder.
    pub fn stage(&mut self, name: &str, files: &[ArchiveFile]) -> std::io::Result<PathBuf> {
        self.count += 1;
        let invalid =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
        if Path::new(name).components().count() != 1
            || !matches!(
                Path::new(name).components().next(),
                Some(Component::Normal(_))
            )
        {
            return Err(invalid("the skill name is not a folder name"));
        }
        let dir = self.tmp.path().join(self.count.to_string()).join(name);
        std::fs::create_dir_all(&dir)?;
        for file in files {
            let rel = Path::new(&file.path);
            if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
                return Err(invalid("an archive path is not plain"));
            }
            let target = dir.join(rel);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&target, &file.bytes)?;
        }
        Ok(dir)
    }
}

/// A site over HTTP.
pub struct HttpSite {
    /// The client.
    pub http: Http,
    /// Where artifacts are staged.
    pub stager: Stager,
}

impl Site for HttpSite {
    fn fetch(&mut self, url: &str) -> Fetched {
        self.http.get(url)
    }

    fn stage(&mut self, name: &str, files: &[ArchiveFile]) -> std::io::Result<PathBuf> {
        self.stager.stage(name, files)
    }
}

/// A built folder.
pub struct FolderSite {
    /// The folder and its origin.
    pub folder: Folder,
    /// Where artifacts are staged.
    pub stager: Stager,
}

impl Site for FolderSite {
    fn fetch(&mut self, url: &str) -> Fetched {
        match url.strip_prefix(&self.folder.origin) {
            Some(path) if path.starts_with('/') => self.folder.read(url, path),
            _ => self.folder.http.get(url),
        }
    }

    fn stage(&mut self, name: &str, files: &[ArchiveFile]) -> std::io::Result<PathBuf> {
        self.stager.stage(name, files)
    }
}
