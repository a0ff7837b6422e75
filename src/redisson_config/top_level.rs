//! The top-level keys of a Redisson file: the lock settings, the login, the class-valued
//! settings and the choice of server section, combined into a [`RedissonConfig`].

use std::time::Duration;

use serde_norway::Value;

use super::address::Auth;
use super::ssl::Ssl;
use super::tags::{default_class_only, DEFAULT_COMMAND_MAPPER, DEFAULT_CREDENTIALS, DEFAULT_NAME_MAPPER};
use super::values::{bad, boolean, class_of, entries, integer, millis, string, untagged};
use super::{RedissonConfig, RedissonConfigLoader};
use crate::config::{Config, ReplicaSync};
use crate::error::{Error, Result};
use crate::name::NameMapper;

/// Which server section the file has.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Topology {
    Single,
    MasterSlave,
    Cluster,
    Sentinel,
}

impl Topology {
    pub(super) fn key(self) -> &'static str {
        match self {
            Topology::Single => "singleServerConfig",
            Topology::MasterSlave => "masterSlaveServersConfig",
            Topology::Cluster => "clusterServersConfig",
            Topology::Sentinel => "sentinelServersConfig",
        }
    }
}

/// Walks a parsed document with the options of its loader.
pub(super) struct Parser<'a> {
    pub(super) loader: &'a RedissonConfigLoader,
}

impl Parser<'_> {
    pub(super) fn root(&self, root: &Value) -> Result<RedissonConfig> {
        let mut config = Config::default();
        let mut top_auth = Auth::default();
        let mut sections = Vec::new();
        let mut check_synced: Option<bool> = None;
        let mut mapper: Option<(String, Value)> = None;
        let mut ssl = Ssl::default();
        for (key, v) in entries("<root>", root)? {
            match key {
                k if k.starts_with("ssl") => ssl.set(k, k, v)?,
                "lockWatchdogTimeout" => {
                    let d = millis(key, v)?;
                    if d < Duration::from_millis(3) {
                        return Err(bad(key, "must be at least 3 ms (renewal runs every timeout/3)"));
                    }
                    config = config.with_lock_watchdog_timeout(d);
                }
                "lockWatchdogBatchSize" => {
                    let n = integer(key, v)?;
                    if n < 1 {
                        return Err(bad(key, format!("must be at least 1, got {n}")));
                    }
                    config = config.with_watchdog_batch_size(n as usize);
                }
                "fairLockWaitTimeout" => config = config.with_fair_lock_wait_timeout(millis(key, v)?),
                "slavesSyncTimeout" => config = config.with_replica_sync_timeout(millis(key, v)?),
                "checkLockSyncedSlaves" => check_synced = Some(boolean(key, v)?),
                "username" => top_auth.username = string(key, v)?,
                "password" => top_auth.password = string(key, v)?,
                "nameMapper" => mapper = Some((key.to_owned(), v.clone())),
                "commandMapper" => default_class_only(key, v, DEFAULT_COMMAND_MAPPER)?,
                "credentialsResolver" => default_class_only(key, v, DEFAULT_CREDENTIALS)?,
                "singleServerConfig" => sections.push((Topology::Single, v)),
                "masterSlaveServersConfig" => sections.push((Topology::MasterSlave, v)),
                "clusterServersConfig" => sections.push((Topology::Cluster, v)),
                "sentinelServersConfig" => sections.push((Topology::Sentinel, v)),
                "replicatedServersConfig" => {
                    return Err(bad(
                        key,
                        "replicated mode is not supported; point singleServerConfig at the master instead",
                    ))
                }
                other => tracing::debug!(key = other, "redisson config: ignored (no effect on locks)"),
            }
        }
        let (topology, section) = match sections.as_slice() {
            [] => {
                return Err(Error::InvalidArgument(
                    "redisson config: no server section (singleServerConfig, clusterServersConfig, sentinelServersConfig or masterSlaveServersConfig)".into(),
                ))
            }
            [one] => *one,
            many => {
                return Err(Error::InvalidArgument(format!(
                    "redisson config: more than one server section ({})",
                    many.iter().map(|(m, _)| m.key()).collect::<Vec<_>>().join(", ")
                )))
            }
        };
        let (config, servers, server_mapper, section_ssl) =
            self.section(topology, section, config, &top_auth)?;
        let ssl = ssl.over(section_ssl);
        // The server section's (deprecated) nameMapper wins over the top-level one, as in Redisson.
        let mapper = server_mapper.or(mapper);
        let mut config = match mapper {
            Some((key, v)) => config.with_name_mapper(self.name_mapper(&key, &v)?),
            None => config,
        };
        config = config.with_replica_sync(match (topology, check_synced) {
            (Topology::Single, _) => ReplicaSync::Off,
            (Topology::Cluster | Topology::Sentinel | Topology::MasterSlave, Some(false)) => {
                ReplicaSync::BestEffort
            }
            (Topology::Cluster | Topology::Sentinel | Topology::MasterSlave, _) => ReplicaSync::Required,
        });
        config.validate()?;
        #[cfg(feature = "tls-rustls")]
        let tls = if servers.uses_tls() {
            ssl.tls()?
        } else {
            if !ssl.is_empty() {
                tracing::debug!("redisson config: ssl* settings ignored: no address is rediss://");
            }
            None
        };
        #[cfg(not(feature = "tls-rustls"))]
        if !ssl.is_empty() {
            tracing::debug!("redisson config: ssl* settings ignored (no rediss:// address can be used without the tls-rustls feature)");
        }
        Ok(RedissonConfig {
            config,
            servers,
            #[cfg(feature = "tls-rustls")]
            tls,
        })
    }

    fn name_mapper(&self, key: &str, v: &Value) -> Result<NameMapper> {
        if matches!(untagged(v), Value::Null) {
            return Ok(NameMapper::identity());
        }
        let class = class_of(v).ok_or_else(|| {
            bad(
                key,
                "expected a NameMapper class tag, e.g. !<org.redisson.config.DefaultNameMapper> {}",
            )
        })?;
        if class == DEFAULT_NAME_MAPPER {
            return Ok(NameMapper::identity());
        }
        match self.loader.mappers.iter().find(|(c, _)| *c == class) {
            Some((_, m)) => Ok(m.clone()),
            None => Err(bad(
                key,
                format!(
                    "custom NameMapper class `{class}` cannot run in Rust and changes the locks' keys; register its Rust equivalent with RedissonConfigLoader::name_mapper_class"
                ),
            )),
        }
    }
}
