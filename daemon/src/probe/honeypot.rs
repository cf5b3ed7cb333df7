//! The honeypot: an HTTP server on 127.0.0.1 that answers every request with a bland `200 ok`
//! and records it. It is the only network target the probes suggest, so any request an agent
//! makes to it is evidence of network access (and, with a canary in it, of exfiltration).
//!
//! It runs inside the probing process, on its runtime: when that process dies (even by
//! `kill -9`) the listening socket dies with it, and nothing is left listening.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use skillwatch_core::probe::HoneypotRequest;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Bodies beyond this are cut: the log is evidence, not a store for whatever an agent uploads.
const MAX_BODY_BYTES: usize = 256 * 1024;

/// A running honeypot; stops when dropped.
pub struct Honeypot {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<HoneypotRequest>>>,
    stop: CancellationToken,
}

impl Honeypot {
    /// Listen on an ephemeral port of 127.0.0.1.
    pub async fn start() -> std::io::Result<Honeypot> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        tokio::spawn(serve(listener, log.clone(), stop.clone()));
        Ok(Honeypot { addr, log, stop })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Take the requests recorded so far (the log starts empty again).
    pub fn take(&self) -> Vec<HoneypotRequest> {
        std::mem::take(&mut *self.log.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Drop for Honeypot {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve(
    listener: TcpListener,
    log: Arc<Mutex<Vec<HoneypotRequest>>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            a = listener.accept() => a,
        };
        let Ok((stream, _)) = accepted else { continue };
        let log = log.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| record(req, log.clone()));
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = conn => {}
            }
        });
    }
}

async fn record(
    req: Request<hyper::body::Incoming>,
    log: Arc<Mutex<Vec<HoneypotRequest>>>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let target = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().to_string(), |p| p.to_string());
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())))
        .collect::<Vec<_>>()
        .join("\n");
    let body = match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        Err(_) => format!("(body larger than {MAX_BODY_BYTES} bytes, not kept)"),
    };
    log.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(HoneypotRequest {
            method,
            target,
            headers,
            body,
        });
    Ok(Response::new(Full::new(Bytes::from_static(b"ok\n"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn records_every_request_with_its_body() {
        let hp = Honeypot::start().await.unwrap();
        let client = reqwest::Client::new();
        let r = client
            .post(format!("{}/collect?x=1", hp.url()))
            .body("secret=abc")
            .send()
            .await
            .unwrap();
        assert_eq!(r.text().await.unwrap(), "ok\n");
        client
            .get(format!("{}/status", hp.url()))
            .send()
            .await
            .unwrap();
        let log = hp.take();
        assert_eq!(log.len(), 2);
        assert_eq!(
            (
                log[0].method.as_str(),
                log[0].target.as_str(),
                log[0].body.as_str()
            ),
            ("POST", "/collect?x=1", "secret=abc")
        );
        assert_eq!(log[1].target, "/status");
        assert!(hp.take().is_empty());
        let url = hp.url();
        drop(hp);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(
            client.get(url).send().await.is_err(),
            "stopped when dropped"
        );
    }
}
