//! Network faults for the tests: a toxiproxy server (Shopify's TCP fault proxy) the test starts
//! on a free loopback port, like redis-server, and stops afterwards; proxies in front of servers
//! the test started; toxics added and removed through its HTTP API.
//!
//! The binary is `$TOXIPROXY_SERVER`, else `target/tools/toxiproxy-server` (where `scripts/test`
//! installs it with `go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0`), else
//! `toxiproxy-server` on `PATH`. [`Toxiproxy::locate`] says why there is none.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The variable naming the toxiproxy server binary.
pub const BIN_VAR: &str = "TOXIPROXY_SERVER";
/// The toxiproxy release `scripts/test` installs.
pub const VERSION: &str = "v2.12.0";

/// A toxiproxy server this test started; killed on drop.
pub struct Toxiproxy {
    child: Child,
    api: SocketAddr,
    pub version: String,
}

impl Drop for Toxiproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Toxiproxy {
    /// The server binary, or why there is none.
    pub fn locate() -> Result<PathBuf, String> {
        if let Some(p) = std::env::var_os(BIN_VAR).filter(|v| !v.is_empty()) {
            let p = PathBuf::from(p);
            return if p.is_file() {
                Ok(p)
            } else {
                Err(format!("{BIN_VAR}={} is not a file", p.display()))
            };
        }
        let tools = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tools/toxiproxy-server");
        if tools.is_file() {
            return Ok(tools);
        }
        super::java::find_command("toxiproxy-server").ok_or_else(|| {
            format!(
                "no toxiproxy server: set {BIN_VAR}, or run scripts/test (it installs one with \
                 `GOBIN=target/tools go install github.com/Shopify/toxiproxy/v2/cmd/server@{VERSION}` \
                 and renames it toxiproxy-server)"
            )
        })
    }

    /// Starts a toxiproxy server on a free loopback port and waits until its API answers.
    pub async fn start() -> Result<Toxiproxy, String> {
        let bin = Self::locate()?;
        let mut last = String::new();
        for _ in 0..10 {
            let port = super::free_port();
            let child = Command::new(&bin)
                .args(["-host", "127.0.0.1", "-port", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
            let mut t = Toxiproxy {
                child,
                api: SocketAddr::from(([127, 0, 0, 1], port)),
                version: String::new(),
            };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(st)) = t.child.try_wait() {
                    last = format!("exited with {st} (port {port} taken?)");
                    break;
                }
                if let Ok((200, body)) = http(t.api, "GET", "/version", None).await {
                    // the API that answered must be this child's, not another test's toxiproxy
                    if super::listens_on(t.child.id(), port) == Some(false) {
                        last = format!("port {port} answered by another process");
                        let _ = t.child.kill();
                        let _ = t.child.wait();
                        break;
                    }
                    // `go install` builds say "git"
                    t.version = match serde_json::from_str::<Value>(&body)
                        .ok()
                        .and_then(|v| v["version"].as_str().map(str::to_owned))
                    {
                        Some(v) if v != "git" => v,
                        _ => format!("{VERSION} (go install)"),
                    };
                    return Ok(t);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            last = format!("{last}; the API on port {port} did not answer");
        }
        Err(format!("toxiproxy did not start: {last}"))
    }

    /// A proxy named `name` on a free loopback port in front of `127.0.0.1:upstream`.
    pub async fn proxy(&self, name: &str, upstream: u16) -> Result<Proxy, String> {
        let body = json!({
            "name": name,
            "listen": "127.0.0.1:0",
            "upstream": format!("127.0.0.1:{upstream}"),
            "enabled": true,
        });
        let (status, reply) = http(self.api, "POST", "/proxies", Some(&body)).await?;
        if status != 201 {
            return Err(format!("creating proxy {name}: HTTP {status}: {reply}"));
        }
        let v: Value = serde_json::from_str(&reply).map_err(|e| format!("{e}: {reply}"))?;
        let port = v["listen"]
            .as_str()
            .and_then(|l| l.rsplit(':').next())
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("no listen port in {reply}"))?;
        Ok(Proxy {
            api: self.api,
            name: name.to_owned(),
            port,
            upstream,
        })
    }
}

/// One proxy of a [`Toxiproxy`]: clients connect to `port`, it forwards to `upstream`.
#[derive(Clone, Debug)]
pub struct Proxy {
    api: SocketAddr,
    pub name: String,
    pub port: u16,
    pub upstream: u16,
}

/// Which way a toxic acts: on what clients send (`Up`) or on what they receive (`Down`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Up,
    Down,
}

impl Stream {
    fn as_str(self) -> &'static str {
        match self {
            Stream::Up => "upstream",
            Stream::Down => "downstream",
        }
    }
}

/// A toxic: a kind, the stream it acts on and its attributes (toxiproxy's names and units).
#[derive(Clone, Debug)]
pub struct Toxic {
    pub kind: &'static str,
    pub stream: Stream,
    pub attributes: Value,
}

impl Toxic {
    /// Each chunk delayed `ms` ± `jitter_ms`.
    pub fn latency(stream: Stream, ms: u64, jitter_ms: u64) -> Toxic {
        Toxic {
            kind: "latency",
            stream,
            attributes: json!({ "latency": ms, "jitter": jitter_ms }),
        }
    }

    /// No data passes; the connection is closed after `ms` (0: never).
    pub fn timeout(stream: Stream, ms: u64) -> Toxic {
        Toxic {
            kind: "timeout",
            stream,
            attributes: json!({ "timeout": ms }),
        }
    }

    /// A TCP reset (RST) `ms` after the data starts (0: at once).
    pub fn reset_peer(stream: Stream, ms: u64) -> Toxic {
        Toxic {
            kind: "reset_peer",
            stream,
            attributes: json!({ "timeout": ms }),
        }
    }

    /// The connection is closed once `bytes` have passed: a reply or request cut in the middle.
    pub fn limit_data(stream: Stream, bytes: u64) -> Toxic {
        Toxic {
            kind: "limit_data",
            stream,
            attributes: json!({ "bytes": bytes }),
        }
    }

    /// Data sliced into pieces of `average` ± `variation` bytes, `delay_us` apart.
    pub fn slicer(stream: Stream, average: u64, variation: u64, delay_us: u64) -> Toxic {
        Toxic {
            kind: "slicer",
            stream,
            attributes: json!({ "average_size": average, "size_variation": variation, "delay": delay_us }),
        }
    }

    /// At most `kb_per_s` KB/s.
    pub fn bandwidth(stream: Stream, kb_per_s: u64) -> Toxic {
        Toxic {
            kind: "bandwidth",
            stream,
            attributes: json!({ "rate": kb_per_s }),
        }
    }
}

impl Proxy {
    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Adds `toxic` (to every connection, open or new); returns its name.
    pub async fn add(&self, toxic: &Toxic) -> Result<String, String> {
        let name = format!(
            "{}_{}_{}",
            toxic.kind,
            toxic.stream.as_str(),
            super::history::now_ns()
        );
        let body = json!({
            "name": name,
            "type": toxic.kind,
            "stream": toxic.stream.as_str(),
            "toxicity": 1.0,
            "attributes": toxic.attributes,
        });
        let path = format!("/proxies/{}/toxics", self.name);
        match http(self.api, "POST", &path, Some(&body)).await? {
            (200, _) => Ok(name),
            (status, reply) => Err(format!("adding {toxic:?}: HTTP {status}: {reply}")),
        }
    }

    /// Removes the toxic `name`.
    pub async fn remove(&self, name: &str) -> Result<(), String> {
        let path = format!("/proxies/{}/toxics/{name}", self.name);
        match http(self.api, "DELETE", &path, None).await? {
            (204, _) => Ok(()),
            (status, reply) => Err(format!("removing toxic {name}: HTTP {status}: {reply}")),
        }
    }

    /// Enables or disables the proxy: disabled, it closes every connection and refuses new ones.
    pub async fn set_enabled(&self, enabled: bool) -> Result<(), String> {
        let path = format!("/proxies/{}", self.name);
        match http(self.api, "POST", &path, Some(&json!({ "enabled": enabled }))).await? {
            (200, _) => Ok(()),
            (status, reply) => Err(format!("enabled={enabled}: HTTP {status}: {reply}")),
        }
    }

    /// `toxics` for `d`, then removed (also when adding one failed).
    pub async fn with_toxics_for(&self, toxics: &[Toxic], d: Duration) -> Result<(), String> {
        let mut added = Vec::new();
        let mut result = Ok(());
        for t in toxics {
            match self.add(t).await {
                Ok(n) => added.push(n),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_ok() {
            tokio::time::sleep(d).await;
        }
        for n in added {
            if let Err(e) = self.remove(&n).await {
                result = result.and(Err(e));
            }
        }
        result
    }

    /// Down for `d` (connections closed, new ones refused), then up again.
    pub async fn down_for(&self, d: Duration) -> Result<(), String> {
        self.set_enabled(false).await?;
        tokio::time::sleep(d).await;
        self.set_enabled(true).await
    }
}

/// One HTTP/1.1 request to the toxiproxy API (`Connection: close`); the status and body.
async fn http(
    api: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<(u16, String), String> {
    let exchange = async {
        let mut s = tokio::net::TcpStream::connect(api)
            .await
            .map_err(|e| e.to_string())?;
        let body = body.map(Value::to_string).unwrap_or_default();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {api}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await.map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&raw).into_owned();
        let (head, rest) = text
            .split_once("\r\n\r\n")
            .ok_or_else(|| format!("no HTTP head in {text:?}"))?;
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("no status in {head:?}"))?;
        let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            dechunk(rest)
        } else {
            rest.to_owned()
        };
        Ok::<_, String>((status, body))
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .map_err(|_| format!("toxiproxy API {method} {path}: no answer within 5 s"))?
}

/// The body of a chunked transfer.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}
