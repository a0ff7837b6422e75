//! The server section of a Redisson file (`singleServerConfig`, `clusterServersConfig`,
//! `sentinelServersConfig`, `masterSlaveServersConfig`): its keys, read into the [`Config`] and
//! the [`RedissonServers`] to connect to.

use serde_norway::Value;

use super::address::{url_with, Auth};
use super::ssl::Ssl;
use super::suggest::{nearest, SECTION_KEYS};
use super::tags::{default_class_only, DEFAULT_COMMAND_MAPPER, DEFAULT_CREDENTIALS, DEFAULT_NAT_MAPPER};
use super::top_level::{Parser, Topology};
use super::values::{bad, delay, entries, integer, millis, string, strings};
use super::RedissonServers;
use crate::config::{Config, PublishMode};
use crate::error::Result;

impl Parser<'_> {
    #[allow(clippy::type_complexity)]
    pub(super) fn section(
        &self,
        topology: Topology,
        section: &Value,
        mut config: Config,
        top: &Auth,
    ) -> Result<(Config, RedissonServers, Option<(String, Value)>, Ssl)> {
        let mut ssl = Ssl::default();
        let sk = topology.key();
        let mut auth = top.clone();
        let mut database = 0i64;
        let mut addresses: Vec<String> = Vec::new();
        let mut master_name = None;
        let mut sentinel_auth = Auth::default();
        let mut retry_delay = None;
        let mut misspelt: Vec<(String, &'static str)> = Vec::new();
        let mut mapper = None;
        for (key, v) in entries(sk, section)? {
            let full = format!("{sk}.{key}");
            let full = full.as_str();
            match (topology, key) {
                (_, k) if k.starts_with("ssl") => ssl.set(full, k, v)?,
                (_, "timeout") => config = config.with_command_timeout(millis(full, v)?),
                (_, "connectTimeout") => config = config.with_connect_timeout(millis(full, v)?),
                (_, "subscriptionTimeout") => config = config.with_subscription_timeout(millis(full, v)?),
                (_, "retryAttempts") => {
                    let n = integer(full, v)?;
                    if !(0..=1000).contains(&n) {
                        return Err(bad(full, format!("must be between 0 and 1000, got {n}")));
                    }
                    config = config.with_retry_attempts(n as u32);
                }
                (_, "retryInterval") => config = config.with_retry_interval(millis(full, v)?),
                (_, "retryDelay") => retry_delay = Some(delay(full, v)?),
                (_, "username") => {
                    if let Some(u) = string(full, v)? {
                        auth.username = Some(u)
                    }
                }
                (_, "password") => {
                    if let Some(p) = string(full, v)? {
                        auth.password = Some(p)
                    }
                }
                (_, "database") => database = integer(full, v)?,
                (_, "nameMapper") => mapper = Some((full.to_owned(), v.clone())),
                (_, "commandMapper") => default_class_only(full, v, DEFAULT_COMMAND_MAPPER)?,
                (_, "credentialsResolver") => default_class_only(full, v, DEFAULT_CREDENTIALS)?,
                (Topology::Cluster | Topology::Sentinel, "natMapper") => {
                    default_class_only(full, v, DEFAULT_NAT_MAPPER)?
                }
                (Topology::Single, "address") | (Topology::MasterSlave, "masterAddress") => {
                    addresses = string(full, v)?.into_iter().collect()
                }
                (Topology::Cluster, "nodeAddresses") | (Topology::Sentinel, "sentinelAddresses") => {
                    addresses = strings(full, v)?
                }
                (Topology::Cluster, "shardedSubscriptionMode") => {
                    let s = string(full, v)?.unwrap_or_default();
                    config = config.with_publish_mode(match s.to_ascii_uppercase().as_str() {
                        "AUTO" => PublishMode::Auto,
                        "ON" => PublishMode::Sharded,
                        "OFF" => PublishMode::Classic,
                        _ => return Err(bad(full, format!("expected AUTO, ON or OFF, got `{s}`"))),
                    });
                }
                (Topology::Sentinel, "masterName") => master_name = string(full, v)?,
                (Topology::Sentinel, "sentinelUsername") => sentinel_auth.username = string(full, v)?,
                (Topology::Sentinel, "sentinelPassword") => sentinel_auth.password = string(full, v)?,
                (Topology::Sentinel, "scanInterval") => {
                    config = config.with_sentinel_scan_interval(millis(full, v)?)
                }
                (_, other) => match nearest(other, SECTION_KEYS) {
                    Some(meant) => {
                        tracing::warn!(key = %format!("{sk}.{other}"), "redisson config: unknown key, ignored: did you mean `{meant}`?");
                        misspelt.push((other.to_owned(), meant));
                    }
                    None => {
                        tracing::debug!(key = %format!("{sk}.{other}"), "redisson config: ignored (no effect on locks)")
                    }
                },
            }
        }
        if let Some(d) = retry_delay {
            config = config.with_retry_interval(d);
        }
        if addresses.is_empty() {
            let which = match topology {
                Topology::Single => "address",
                Topology::MasterSlave => "masterAddress",
                Topology::Cluster => "nodeAddresses",
                Topology::Sentinel => "sentinelAddresses",
            };
            let hint = match misspelt.iter().find(|(_, meant)| *meant == which) {
                Some((found, _)) => format!(" (the file has `{found}`: did you mean `{which}`?)"),
                None => String::new(),
            };
            return Err(bad(
                &format!("{sk}.{which}"),
                format!("missing: no address to connect to{hint}"),
            ));
        }
        let servers = match topology {
            Topology::Single | Topology::MasterSlave => {
                let key = if topology == Topology::Single {
                    "address"
                } else {
                    "masterAddress"
                };
                RedissonServers::Single {
                    url: url_with(&format!("{sk}.{key}"), &addresses[0], &auth, Some(database))?,
                }
            }
            Topology::Cluster => {
                if database != 0 {
                    return Err(bad(
                        &format!("{sk}.database"),
                        format!("database {database}: Redis Cluster locks live in database 0"),
                    ));
                }
                RedissonServers::Cluster {
                    nodes: addresses
                        .iter()
                        .map(|a| url_with(&format!("{sk}.nodeAddresses"), a, &auth, None))
                        .collect::<Result<_>>()?,
                }
            }
            Topology::Sentinel => RedissonServers::Sentinel {
                sentinels: addresses
                    .iter()
                    .map(|a| url_with(&format!("{sk}.sentinelAddresses"), a, &sentinel_auth, None))
                    .collect::<Result<_>>()?,
                master_name: master_name
                    .filter(|m| !m.is_empty())
                    .ok_or_else(|| bad(&format!("{sk}.masterName"), "missing"))?,
                username: auth.username,
                password: auth.password,
                database,
            },
        };
        Ok((config, servers, mapper, ssl))
    }
}
