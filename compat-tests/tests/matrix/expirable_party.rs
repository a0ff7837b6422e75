//! Both languages' operations on a permit-expirable semaphore: [`Pes`] (a harness worker's
//! `expirable<Op>` calls or the Rust `PermitExpirableSemaphore`) and [`PesWaiting`], an
//! `acquire()` started in the background. The scenarios are in [`crate::expirable`] and
//! [`crate::expirable_lease`].

use std::time::Duration;

use redisson_lock::{PermitExpirableSemaphore, PermitId, PermitLease};
use redisson_lock_compat_tests::{now_ms, version_at_least, Harness, Pending, Response, Result};
use serde_json::Value;

use crate::env::Env;
use crate::party::{Lang, Party};
use crate::support::CMD;

/// A release that was refused: Java's exception (`class: message`) or Rust's error.
pub(crate) type Refused = String;

/// One side's handle on permit-expirable semaphore N: the harness' `expirable<Op> N …` on the
/// party's worker, or the Rust `client.permit_expirable_semaphore(N)`.
pub(crate) enum Pes<'a> {
    Java {
        h: &'a Harness,
        worker: String,
        name: String,
        version: String,
    },
    Rust(PermitExpirableSemaphore),
}

/// An `acquire()` started in the background: its id and the epoch ms of its return.
pub(crate) enum PesWaiting {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<Result<(String, f64)>>),
}

impl PesWaiting {
    pub(crate) fn is_done(&mut self) -> bool {
        match self {
            PesWaiting::Java(p) => p.is_done(),
            PesWaiting::Rust(j) => j.is_finished(),
        }
    }

    pub(crate) async fn finish(self, limit: Duration) -> Result<(String, f64)> {
        match self {
            PesWaiting::Java(p) => {
                let r = p.wait(limit).await?;
                let ts = r.ts_ms;
                Ok((id_of(r.into_ok()?)?, ts))
            }
            PesWaiting::Rust(j) => {
                let abort = j.abort_handle();
                tokio::time::timeout(limit, j)
                    .await
                    .map_err(|_| {
                        abort.abort();
                        format!("rust acquire() did not return within {limit:?}")
                    })?
                    .map_err(|e| format!("rust acquire task: {e}"))?
            }
        }
    }
}

/// A Java permit id (a JSON string).
fn id_of(v: Value) -> Result<String> {
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("expected a permit id, got {v}"))
}

fn ids_of(v: Value) -> Result<Vec<String>> {
    match v {
        Value::Array(items) => items.into_iter().map(id_of).collect(),
        Value::Null => Ok(Vec::new()),
        other => Err(format!("expected a list of permit ids, got {other}")),
    }
}

fn parse_id(id: &str) -> Result<PermitId> {
    id.parse::<PermitId>()
        .map_err(|e| format!("the id `{id}` does not parse as a PermitId: {e}"))
}

fn parse_ids(ids: &[String]) -> Result<Vec<PermitId>> {
    ids.iter().map(|i| parse_id(i)).collect()
}

impl<'a> Pes<'a> {
    pub(crate) fn of(env: &Env, party: &Party<'a>, name: &str) -> Result<Pes<'a>> {
        Ok(match &party.lang {
            Lang::Java { h, worker } => Pes::Java {
                h,
                worker: worker.clone(),
                name: name.to_owned(),
                version: env.version.clone(),
            },
            Lang::Rust { c, .. } => Pes::Rust(
                c.permit_expirable_semaphore(name)
                    .map_err(|e| format!("client.permit_expirable_semaphore({name}): {e}"))?,
            ),
        })
    }

    pub(crate) fn lang(&self) -> &'static str {
        match self {
            Pes::Java { .. } => "Java",
            Pes::Rust(_) => "Rust",
        }
    }

    /// Whether this side has the call that Redisson added in `since` (Rust has them all).
    pub(crate) fn has(&self, since: &str) -> bool {
        match self {
            Pes::Java { version, .. } => version_at_least(version, since),
            Pes::Rust(_) => true,
        }
    }

    /// A harness call `cmd N args…` on the worker.
    async fn java(&self, cmd: &str, args: &[&str]) -> Result<Response> {
        let Pes::Java { h, worker, name, .. } = self else {
            return Err("not a Java semaphore".into());
        };
        let mut all = vec![name.as_str()];
        all.extend_from_slice(args);
        h.call(worker, cmd, &all, CMD).await
    }

    pub(crate) async fn try_set_permits(&self, n: i64) -> Result<bool> {
        match self {
            Pes::Java { .. } => self
                .java("expirableTrySetPermits", &[n.to_string().as_str()])
                .await?
                .bool(),
            Pes::Rust(s) => s
                .try_set_permits(n)
                .await
                .map_err(|e| format!("rust try_set_permits({n}): {e}")),
        }
    }

    pub(crate) async fn add_permits(&self, delta: i64) -> Result<()> {
        match self {
            Pes::Java { .. } => self
                .java("expirableAddPermits", &[delta.to_string().as_str()])
                .await?
                .into_ok()
                .map(drop),
            Pes::Rust(s) => s
                .add_permits(delta)
                .await
                .map(drop)
                .map_err(|e| format!("rust add_permits({delta}): {e}")),
        }
    }

    /// `setPermits(n)` (Java 3.23.4+).
    pub(crate) async fn set_permits(&self, n: i64) -> Result<()> {
        match self {
            Pes::Java { .. } => self
                .java("expirableSetPermits", &[n.to_string().as_str()])
                .await?
                .into_ok()
                .map(drop),
            Pes::Rust(s) => s
                .set_permits(n)
                .await
                .map_err(|e| format!("rust set_permits({n}): {e}")),
        }
    }

    /// `acquire()` / `acquire(lease)`: the id.
    pub(crate) async fn acquire(&self, lease_ms: Option<u64>) -> Result<String> {
        match self {
            Pes::Java { .. } => {
                let lease = lease_ms.map(|l| l.to_string());
                let args: Vec<&str> = lease.iter().map(String::as_str).collect();
                id_of(self.java("expirableAcquire", &args).await?.into_ok()?)
            }
            Pes::Rust(s) => match lease_ms {
                None => s.acquire().await.map(|g| g.forget()[0]),
                Some(l) => s
                    .acquire_with_lease(Duration::from_millis(l))
                    .await
                    .map(|g| g.forget()[0]),
            }
            .map(|id| id.to_string())
            .map_err(|e| format!("rust acquire(lease {lease_ms:?}): {e}")),
        }
    }

    /// `acquire(n, lease)`: the ids.
    pub(crate) async fn acquire_many(&self, n: u64, lease_ms: u64) -> Result<Vec<String>> {
        match self {
            Pes::Java { .. } => ids_of(
                self.java(
                    "expirableAcquireMany",
                    &[n.to_string().as_str(), lease_ms.to_string().as_str()],
                )
                .await?
                .into_ok()?,
            ),
            Pes::Rust(s) => s
                .acquire_many(n, Some(Duration::from_millis(lease_ms)))
                .await
                .map(|g| g.forget())
                .map(|ids| ids.iter().map(PermitId::to_string).collect())
                .map_err(|e| format!("rust acquire_many({n}): {e}")),
        }
    }

    /// One attempt at one permit without a lease (`tryAcquire()`).
    pub(crate) async fn try_acquire(&self) -> Result<Option<String>> {
        match self {
            Pes::Java { .. } => match self.java("expirableTryAcquire", &[]).await?.into_ok()? {
                Value::Null => Ok(None),
                v => id_of(v).map(Some),
            },
            Pes::Rust(s) => s
                .try_acquire()
                .await
                .map(|g| g.map(|g| g.forget()[0]))
                .map(|id| id.map(|i| i.to_string()))
                .map_err(|e| format!("rust try_acquire: {e}")),
        }
    }

    /// `tryAcquire(n, wait 0, no lease)`: the ids (none when refused).
    pub(crate) async fn try_acquire_many(&self, n: u64) -> Result<Vec<String>> {
        match self {
            Pes::Java { .. } => ids_of(
                self.java("expirableTryAcquireMany", &[n.to_string().as_str(), "0", "-1"])
                    .await?
                    .into_ok()?,
            ),
            Pes::Rust(s) => s
                .try_acquire_many(n, Duration::ZERO, None)
                .await
                .map(|g| g.map(|g| g.forget()).unwrap_or_default())
                .map(|ids| ids.iter().map(PermitId::to_string).collect())
                .map_err(|e| format!("rust try_acquire_many({n}): {e}")),
        }
    }

    /// `release(id)`: `Ok(Ok(reply epoch ms))` when given back, `Ok(Err(..))` when refused.
    pub(crate) async fn release(&self, id: &str) -> Result<std::result::Result<f64, Refused>> {
        match self {
            Pes::Java { .. } => {
                let r = self.java("expirableRelease", &[id]).await?;
                Ok(if r.ok {
                    Ok(r.ts_ms)
                } else {
                    Err(format!(
                        "{}: {}",
                        r.error_class.unwrap_or_default(),
                        r.error.unwrap_or_default()
                    ))
                })
            }
            Pes::Rust(s) => match s.release(parse_id(id)?).await {
                Ok(()) => Ok(Ok(now_ms())),
                Err(e @ redisson_lock::Error::NotHeld { .. }) => Ok(Err(format!("Error::NotHeld: {e}"))),
                Err(e) => Err(format!("rust release({id}): {e}")),
            },
        }
    }

    pub(crate) async fn try_release(&self, id: &str) -> Result<bool> {
        match self {
            Pes::Java { .. } => self.java("expirableTryRelease", &[id]).await?.bool(),
            Pes::Rust(s) => s
                .try_release(parse_id(id)?)
                .await
                .map_err(|e| format!("rust try_release({id}): {e}")),
        }
    }

    /// `tryRelease(ids)`: how many came back.
    pub(crate) async fn try_release_many(&self, ids: &[String]) -> Result<u64> {
        match self {
            Pes::Java { .. } => {
                let n = self
                    .java("expirableTryReleaseMany", &[ids.join(",").as_str()])
                    .await?
                    .int()?;
                u64::try_from(n).map_err(|_| format!("java tryRelease(list) = {n}"))
            }
            Pes::Rust(s) => s
                .try_release_many(&parse_ids(ids)?)
                .await
                .map_err(|e| format!("rust try_release_many: {e}")),
        }
    }

    /// `release(ids)`: `Ok(Ok(()))` when all came back, `Ok(Err(..))` when refused.
    pub(crate) async fn release_many(&self, ids: &[String]) -> Result<std::result::Result<(), Refused>> {
        match self {
            Pes::Java { .. } => {
                let r = self
                    .java("expirableReleaseMany", &[ids.join(",").as_str()])
                    .await?;
                Ok(if r.ok {
                    Ok(())
                } else {
                    Err(format!(
                        "{}: {}",
                        r.error_class.unwrap_or_default(),
                        r.error.unwrap_or_default()
                    ))
                })
            }
            Pes::Rust(s) => match s.release_many(&parse_ids(ids)?).await {
                Ok(()) => Ok(Ok(())),
                Err(e @ redisson_lock::Error::NotHeld { .. }) => Ok(Err(format!("Error::NotHeld: {e}"))),
                Err(e) => Err(format!("rust release_many: {e}")),
            },
        }
    }

    /// `updateLeaseTime(id, lease)` (`None`: no lease; Java −1).
    pub(crate) async fn update_lease(&self, id: &str, lease_ms: Option<u64>) -> Result<bool> {
        match self {
            Pes::Java { .. } => {
                let lease = lease_ms.map_or("-1".to_owned(), |l| l.to_string());
                self.java("expirableUpdateLeaseTime", &[id, lease.as_str()])
                    .await?
                    .bool()
            }
            Pes::Rust(s) => s
                .update_lease_time(parse_id(id)?, lease_ms.map(Duration::from_millis))
                .await
                .map_err(|e| format!("rust update_lease_time({id}, {lease_ms:?}): {e}")),
        }
    }

    /// The lease left on the held permit `id` in ms, −1 = no lease (Java `getLeaseTime`, Rust
    /// `lease_time`); `None` when Java has no `getLeaseTime` (before 3.41.0).
    pub(crate) async fn lease_ms(&self, id: &str) -> Result<Option<i64>> {
        if !self.has("3.41.0") {
            return Ok(None);
        }
        match self {
            Pes::Java { .. } => self.java("expirableGetLeaseTime", &[id]).await?.int().map(Some),
            Pes::Rust(s) => match s
                .lease_time(parse_id(id)?)
                .await
                .map_err(|e| format!("rust lease_time({id}): {e}"))?
            {
                None => Err(format!("rust lease_time({id}): not held")),
                Some(PermitLease::Unlimited) => Ok(Some(-1)),
                Some(PermitLease::Remaining(d)) => Ok(Some(d.as_millis() as i64)),
                Some(other) => Err(format!("rust lease_time({id}) = {other:?}")),
            },
        }
    }

    pub(crate) async fn available(&self) -> Result<i64> {
        match self {
            Pes::Java { .. } => self.java("expirableAvailablePermits", &[]).await?.int(),
            Pes::Rust(s) => s
                .available_permits()
                .await
                .map_err(|e| format!("rust available_permits: {e}")),
        }
    }

    /// (`acquiredPermits`, `getPermits`); `None` when Java has neither (before 3.19.1).
    pub(crate) async fn held_and_total(&self) -> Result<Option<(i64, i64)>> {
        if !self.has("3.19.1") {
            return Ok(None);
        }
        match self {
            Pes::Java { .. } => {
                let held = self.java("expirableAcquiredPermits", &[]).await?.int()?;
                let total = self.java("expirableGetPermits", &[]).await?.int()?;
                Ok(Some((held, total)))
            }
            Pes::Rust(s) => {
                let held = s
                    .acquired_permits()
                    .await
                    .map_err(|e| format!("rust acquired_permits: {e}"))?;
                let total = s.permits().await.map_err(|e| format!("rust permits: {e}"))?;
                Ok(Some((held as i64, total)))
            }
        }
    }

    pub(crate) async fn delete(&self) -> Result<bool> {
        match self {
            Pes::Java { .. } => self.java("expirableDelete", &[]).await?.bool(),
            Pes::Rust(s) => s.delete().await.map_err(|e| format!("rust delete: {e}")),
        }
    }

    /// Starts `acquire()` (no lease) in the background.
    pub(crate) async fn start_acquire(&self) -> Result<PesWaiting> {
        match self {
            Pes::Java { h, worker, name, .. } => Ok(PesWaiting::Java(Box::new(
                h.send(worker, "expirableAcquire", &[name.as_str()]).await?,
            ))),
            Pes::Rust(s) => {
                let s = s.clone();
                Ok(PesWaiting::Rust(tokio::spawn(async move {
                    let id = s
                        .acquire()
                        .await
                        .map(|g| g.forget()[0])
                        .map_err(|e| format!("rust acquire(): {e}"))?;
                    Ok((id.to_string(), now_ms()))
                })))
            }
        }
    }
}
