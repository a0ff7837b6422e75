//! The redis-server under test ([`Target`]), admin connections to it and what `INFO` says.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::MultiplexedConnection;

use super::super::proxy::Proxy;
use super::super::RedisServer;

/// A redis-server under test, shared with the nemesis (which may restart it).
#[derive(Clone)]
pub struct Target {
    pub(super) server: Arc<Mutex<RedisServer>>,
    pub url: String,
    pub port: u16,
    /// The proxy the clients under test go through, for network faults (`None`: they connect
    /// to the server directly).
    pub proxy: Option<Proxy>,
}

impl Target {
    pub fn new(server: RedisServer) -> Target {
        Target {
            url: server.url(),
            port: server.port,
            server: Arc::new(Mutex::new(server)),
            proxy: None,
        }
    }

    /// The URL and port the clients under test use: the proxy's when there is one.
    pub fn client_url(&self) -> String {
        self.proxy.as_ref().map_or_else(|| self.url.clone(), Proxy::url)
    }

    pub fn client_port(&self) -> u16 {
        self.proxy.as_ref().map_or(self.port, |p| p.port)
    }

    /// A fresh connection (5 s reply timeout) for admin commands.
    pub async fn conn(&self) -> Result<MultiplexedConnection, String> {
        admin_conn(&self.url, Some(Duration::from_secs(5))).await
    }
}

/// A fresh multiplexed connection with the given reply timeout (`None`: wait for ever).
pub async fn admin_conn(url: &str, reply_timeout: Option<Duration>) -> Result<MultiplexedConnection, String> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let cfg = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(reply_timeout);
    client
        .get_multiplexed_async_connection_with_config(&cfg)
        .await
        .map_err(|e| format!("connect to {url}: {e}"))
}

pub(super) async fn query<T: redis::FromRedisValue>(
    c: &mut MultiplexedConnection,
    cmd: &redis::Cmd,
) -> Result<T, String> {
    cmd.query_async(c).await.map_err(|e| e.to_string())
}

/// The server's process id, from `INFO server` (`process_id:`).
pub async fn pid(url: &str) -> Result<i32, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let info: String = query(&mut c, redis::cmd("INFO").arg("server")).await?;
    info_field(&info, "process_id")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no process_id in INFO server: {info}"))
}

/// The value of `name:` in an `INFO` reply.
pub fn info_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines().find_map(|l| {
        l.strip_prefix(name)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
    })
}
