//! A static web site on 127.0.0.1 for `skillwatch index check`: each path answers with a
//! fixed status, content type and body, or misbehaves on purpose (a slow answer, an endless
//! body, a redirect). It records the headers of every request, so a test can see what the
//! checker sent.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::sync::oneshot;

/// What a path answers.
#[derive(Debug, Clone)]
pub enum Page {
    /// A status, a content type (or none) and a body.
    Fixed {
        status: u16,
        content_type: Option<String>,
        body: Vec<u8>,
    },
    /// 200 after a delay.
    Slow(Duration),
    /// 200 with a body that never ends.
    Endless,
    /// 302 to a location.
    Redirect(String),
}

impl Page {
    /// 200 with a content type.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Page {
        Page::Fixed {
            status: 200,
            content_type: Some(content_type.to_string()),
            body: body.into(),
        }
    }
}

/// A running site; stops when dropped.
pub struct Site {
    addr: SocketAddr,
    pages: Arc<Mutex<HashMap<String, Page>>>,
    headers: Arc<Mutex<Vec<Vec<String>>>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Site {
    /// Serve nothing yet (every path 404) on a free port of 127.0.0.1.
    pub fn start() -> Site {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("local addr");
        let pages = Arc::new(Mutex::new(HashMap::new()));
        let headers = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = oneshot::channel();
        let (p, h) = (pages.clone(), headers.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("site runtime");
            rt.block_on(serve(listener, p, h, rx));
        });
        Site {
            addr,
            pages,
            headers,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serve `page` at `path`.
    pub fn put(&self, path: &str, page: Page) {
        self.pages.lock().unwrap().insert(path.to_string(), page);
    }

    /// Serve every file under `root` at its path, with the type a static server would send.
    pub fn put_folder(&self, root: &Path) {
        for entry in walkdir_files(root) {
            let rel = entry
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let body = std::fs::read(&entry).unwrap();
            let ct = if rel.ends_with(".json") {
                "application/json"
            } else if rel.ends_with(".md") {
                "text/markdown; charset=utf-8"
            } else if rel.ends_with(".tar.gz") {
                "application/gzip"
            } else {
                "application/octet-stream"
            };
            self.put(&format!("/{rel}"), Page::ok(ct, body));
        }
    }

    /// The header lines (`name: value`) of every request so far.
    pub fn request_headers(&self) -> Vec<Vec<String>> {
        self.headers.lock().unwrap().clone()
    }
}

fn walkdir_files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

impl Drop for Site {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

type Body = BoxBody<Bytes, Infallible>;

async fn serve(
    listener: std::net::TcpListener,
    pages: Arc<Mutex<HashMap<String, Page>>>,
    headers: Arc<Mutex<Vec<Vec<String>>>>,
    mut shutdown: oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    let mut connections = Vec::new();
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
        };
        let (pages, headers) = (pages.clone(), headers.clone());
        connections.push(tokio::spawn(async move {
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let (pages, headers) = (pages.clone(), headers.clone());
                async move { Ok::<_, Infallible>(answer(req, &pages, &headers).await) }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }));
    }
    // endless bodies never finish by themselves
    for c in connections {
        c.abort();
    }
}

async fn answer(
    req: Request<hyper::body::Incoming>,
    pages: &Mutex<HashMap<String, Page>>,
    headers: &Mutex<Vec<Vec<String>>>,
) -> Response<Body> {
    let lines = req
        .headers()
        .iter()
        .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap_or("")))
        .collect();
    headers.lock().unwrap().push(lines);
    let page = pages.lock().unwrap().get(req.uri().path()).cloned();
    let full = |status: u16, ct: Option<&str>, body: Vec<u8>| {
        let mut r = Response::builder().status(status);
        if let Some(ct) = ct {
            r = r.header("content-type", ct);
        }
        r.body(Full::new(Bytes::from(body)).boxed()).unwrap()
    };
    match page {
        None => full(404, Some("text/plain"), b"not found".to_vec()),
        Some(Page::Fixed {
            status,
            content_type,
            body,
        }) => full(status, content_type.as_deref(), body),
        Some(Page::Slow(delay)) => {
            tokio::time::sleep(delay).await;
            full(200, Some("text/markdown"), b"late".to_vec())
        }
        Some(Page::Redirect(location)) => Response::builder()
            .status(302)
            .header("location", location)
            .body(Full::new(Bytes::new()).boxed())
            .unwrap(),
        Some(Page::Endless) => {
            let chunk = Bytes::from(vec![b'a'; 64 * 1024]);
            let stream = futures::stream::repeat_with(move || Ok(Frame::data(chunk.clone())));
            Response::builder()
                .status(200)
                .header("content-type", "text/markdown")
                .body(BodyExt::boxed(StreamBody::new(stream)))
                .unwrap()
        }
    }
}
