//! Both languages' operations on a semaphore: [`Sem`] (a harness worker's `semaphore<Op>` calls
//! or the Rust `Semaphore`) and [`SemWaiting`], an `acquire` started in the background. The
//! scenarios are in [`crate::semaphore`].

use std::time::Duration;

use redisson_lock::Semaphore;
use redisson_lock_compat_tests::{now_ms, Harness, Pending, Response, Result};

use crate::party::{Lang, Party};
use crate::support::CMD;

/// One side's handle on semaphore N: the harness' `semaphore<Op> N …` on the party's worker, or
/// the Rust `client.semaphore(N)` (permits have no owner: the party's owner id plays no part).
pub(crate) enum Sem<'a> {
    Java {
        h: &'a Harness,
        worker: String,
        name: String,
    },
    Rust(Semaphore),
}

/// An `acquire` started in the background: the Java `semaphoreAcquire` on its worker, or a Rust
/// task that gives the epoch ms of its return.
pub(crate) enum SemWaiting {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<Result<f64>>),
}

impl SemWaiting {
    pub(crate) fn is_done(&mut self) -> bool {
        match self {
            SemWaiting::Java(p) => p.is_done(),
            SemWaiting::Rust(j) => j.is_finished(),
        }
    }

    /// The epoch ms of the acquisition's return (Java: the harness' `ts_ms`).
    pub(crate) async fn finish(self, limit: Duration) -> Result<f64> {
        match self {
            SemWaiting::Java(p) => {
                let r = p.wait(limit).await?;
                let ts = r.ts_ms;
                r.into_ok()?;
                Ok(ts)
            }
            SemWaiting::Rust(j) => {
                let abort = j.abort_handle();
                tokio::time::timeout(limit, j)
                    .await
                    .map_err(|_| {
                        abort.abort();
                        format!("rust semaphore acquire did not return within {limit:?}")
                    })?
                    .map_err(|e| format!("rust acquire task: {e}"))?
            }
        }
    }
}

impl<'a> Sem<'a> {
    pub(crate) fn of(party: &Party<'a>, name: &str) -> Result<Sem<'a>> {
        Ok(match &party.lang {
            Lang::Java { h, worker } => Sem::Java {
                h,
                worker: worker.clone(),
                name: name.to_owned(),
            },
            Lang::Rust { c, .. } => Sem::Rust(
                c.semaphore(name)
                    .map_err(|e| format!("client.semaphore({name}): {e}"))?,
            ),
        })
    }

    pub(crate) fn lang(&self) -> &'static str {
        match self {
            Sem::Java { .. } => "Java",
            Sem::Rust(_) => "Rust",
        }
    }

    /// A harness call `cmd N args…` on the worker.
    async fn java(&self, cmd: &str, args: &[String]) -> Result<Response> {
        let Sem::Java { h, worker, name } = self else {
            return Err("not a Java semaphore".into());
        };
        let mut all = vec![name.as_str()];
        all.extend(args.iter().map(String::as_str));
        h.call(worker, cmd, &all, CMD).await
    }

    /// `trySetPermits(n)` / `trySetPermits(n, ttl)`.
    pub(crate) async fn try_set_permits(&self, n: i64, ttl_ms: Option<u64>) -> Result<bool> {
        match self {
            Sem::Java { .. } => {
                let mut args = vec![n.to_string()];
                args.extend(ttl_ms.map(|t| t.to_string()));
                self.java("semaphoreTrySetPermits", &args).await?.bool()
            }
            Sem::Rust(s) => match ttl_ms {
                None => s.try_set_permits(n).await,
                Some(t) => s.try_set_permits_with_ttl(n, Duration::from_millis(t)).await,
            }
            .map_err(|e| format!("rust try_set_permits({n}, ttl {ttl_ms:?}): {e}")),
        }
    }

    /// One attempt to take `n` (`tryAcquire(n)`).
    pub(crate) async fn try_acquire(&self, n: u64) -> Result<bool> {
        match self {
            Sem::Java { .. } => self.java("semaphoreTryAcquire", &[n.to_string()]).await?.bool(),
            Sem::Rust(s) => s
                .try_acquire(n)
                .await
                .map(|g| g.map(|g| g.forget()).is_some())
                .map_err(|e| format!("rust try_acquire({n}): {e}")),
        }
    }

    /// `release(n)`; returns the epoch ms of its reply.
    pub(crate) async fn release(&self, n: u64) -> Result<f64> {
        match self {
            Sem::Java { .. } => {
                let r = self.java("semaphoreRelease", &[n.to_string()]).await?;
                let ts = r.ts_ms;
                r.into_ok()?;
                Ok(ts)
            }
            Sem::Rust(s) => {
                s.release(n)
                    .await
                    .map_err(|e| format!("rust release({n}): {e}"))?;
                Ok(now_ms())
            }
        }
    }

    pub(crate) async fn release_if_exists(&self, n: u64) -> Result<bool> {
        match self {
            Sem::Java { .. } => self
                .java("semaphoreReleaseIfExists", &[n.to_string()])
                .await?
                .bool(),
            Sem::Rust(s) => s
                .release_if_exists(n)
                .await
                .map_err(|e| format!("rust release_if_exists({n}): {e}")),
        }
    }

    pub(crate) async fn available(&self) -> Result<i64> {
        match self {
            Sem::Java { .. } => self.java("semaphoreAvailablePermits", &[]).await?.int(),
            Sem::Rust(s) => s
                .available_permits()
                .await
                .map_err(|e| format!("rust available_permits: {e}")),
        }
    }

    pub(crate) async fn drain(&self) -> Result<i64> {
        match self {
            Sem::Java { .. } => self.java("semaphoreDrainPermits", &[]).await?.int(),
            Sem::Rust(s) => s
                .drain_permits()
                .await
                .map_err(|e| format!("rust drain_permits: {e}")),
        }
    }

    pub(crate) async fn add_permits(&self, delta: i64) -> Result<()> {
        match self {
            Sem::Java { .. } => self
                .java("semaphoreAddPermits", &[delta.to_string()])
                .await?
                .into_ok()
                .map(drop),
            Sem::Rust(s) => s
                .add_permits(delta)
                .await
                .map(drop)
                .map_err(|e| format!("rust add_permits({delta}): {e}")),
        }
    }

    pub(crate) async fn delete(&self) -> Result<bool> {
        match self {
            Sem::Java { .. } => self.java("semaphoreDelete", &[]).await?.bool(),
            Sem::Rust(s) => s.delete().await.map_err(|e| format!("rust delete: {e}")),
        }
    }

    /// Starts `acquire(n)` in the background.
    pub(crate) async fn start_acquire(&self, n: u64) -> Result<SemWaiting> {
        match self {
            Sem::Java { h, worker, name } => Ok(SemWaiting::Java(Box::new(
                h.send(
                    worker,
                    "semaphoreAcquire",
                    &[name.as_str(), n.to_string().as_str()],
                )
                .await?,
            ))),
            Sem::Rust(s) => {
                let s = s.clone();
                Ok(SemWaiting::Rust(tokio::spawn(async move {
                    s.acquire(n)
                        .await
                        .map(|g| g.forget())
                        .map_err(|e| format!("rust acquire({n}): {e}"))?;
                    Ok(now_ms())
                })))
            }
        }
    }
}
