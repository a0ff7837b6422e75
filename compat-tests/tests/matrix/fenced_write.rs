//! Fenced lock scenario 58 (`getFencedLock` / `Client::fenced_lock`, Redisson 3.19.0+): the fenced
//! write across languages, both directions. One SQLite database file, one order; the Rust side
//! runs the statements of `examples/fenced_write/orders.rs` (rusqlite), the Java side the same
//! statements over JDBC (`FencedWriteCommands.java`, the `orders<Op>` harness commands).
//!
//! A (the holder's language) takes the lock with a 1 s lease and its token, claims the order with
//! it and finds it pending, then stalls for 1.5 s — a Java worker thread in `Thread.sleep`, a Rust
//! task in `tokio::time::sleep` — while its lease runs out in Redis. B (the other language) waits
//! in `lock_and_get_token`, gets in once the lease ran out with the next token of the same counter,
//! claims the order, finds it pending and charges it. A wakes and charges: the database refuses
//! it, since the order's fence is B's token. A learns it from its lock too: Java's
//! `isHeldByCurrentThread()` is false and its `unlock()` throws `IllegalMonitorStateException`;
//! the Rust guard's `lost()` fired with `LeaseExpired` and its `unlock()` is `Error::NotHeld`.
//! The invariant: the order is charged once, by B.
//!
//! Java takes the lease with `tryLockAndGetToken(0, LEASE, ms)`: Redisson's synchronous
//! `lockAndGetToken(LEASE, ms)` drops the lease (see README.md, "What real Redisson does").

use std::path::PathBuf;
use std::time::Duration;

use redisson_lock::{Error as LockError, FencedGuard, LostReason};
use redisson_lock_compat_tests::{now_ms, JavaUnlock, Pending, Result};
use serde_json::Value;

use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome};
use crate::orders::{Begin, Charge, Guard, Orders, Refusal};
use crate::party::{Lang, Party, FENCED};
use crate::support::{one_field, token_key, CMD};

const ORDER: i64 = 58;
const AMOUNT: i64 = 4_200;
/// A's lease.
const LEASE_MS: u64 = 1_000;
/// A's stall: longer than its lease.
const STALL_MS: u64 = 1_500;

/// The order database file of one run (removed on drop).
struct Db(PathBuf);

impl Db {
    fn new(env: &Env, dir: Dir) -> Result<Db> {
        let path = std::env::temp_dir().join(format!(
            "redisson-lock-compat-s58-{}-{}-{}.sqlite",
            env.version,
            dir.tag(),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        let db = Db(path);
        db.open()?
            .add_order(ORDER, AMOUNT)
            .map_err(|e| format!("add the order: {e}"))?;
        Ok(db)
    }

    fn open(&self) -> Result<Orders> {
        Orders::open(&self.0).map_err(|e| format!("open {}: {e}", self.0.display()))
    }

    fn path(&self) -> Result<&str> {
        self.0
            .to_str()
            .ok_or_else(|| format!("not UTF-8: {}", self.0.display()))
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The worker name a party's payments carry.
fn payer(p: &Party<'_>, role: &str) -> String {
    match p.lang {
        Lang::Java { .. } => format!("java-{role}"),
        Lang::Rust { .. } => format!("rust-{role}"),
    }
}

/// A Java `orders<Op>` result as the Rust types.
fn java_begin(v: &Value) -> Result<Begin> {
    let n = |k: &str| {
        v[k].as_i64()
            .ok_or_else(|| format!("ordersBegin: no `{k}` in {v}"))
    };
    match v["begin"].as_str() {
        Some("pending") => Ok(Begin::Pending {
            amount_cents: n("amount")?,
        }),
        Some("paid") => Ok(Begin::Paid),
        Some("stale") => Ok(Begin::Stale {
            fence: n("fence")? as u64,
        }),
        _ => Err(format!("ordersBegin answered {v}")),
    }
}

fn java_charge(v: &Value, token: u64) -> Result<Charge> {
    match v["charge"].as_str() {
        Some("written") => Ok(Charge::Written),
        Some("stale-token") => Ok(Charge::Refused(Refusal::StaleToken {
            token,
            fence: v["fence"].as_u64().ok_or_else(|| format!("no fence in {v}"))?,
        })),
        Some("duplicate-request") => Ok(Charge::Refused(Refusal::DuplicateRequest {
            request_id: v["requestId"].as_str().unwrap_or_default().to_owned(),
        })),
        _ => Err(format!("ordersCharge answered {v}")),
    }
}

/// Claims and reads the order as the holder of `token` (guard: the fence).
async fn begin(p: &Party<'_>, db: &Db, token: u64) -> Result<Begin> {
    match &p.lang {
        Lang::Java { h, worker } => {
            let (order, token) = (ORDER.to_string(), token.to_string());
            let args = [db.path()?, order.as_str(), token.as_str(), "fence"];
            java_begin(&h.call(worker, "ordersBegin", &args, CMD).await?.into_ok()?)
        }
        Lang::Rust { .. } => db
            .open()?
            .begin(ORDER, token, Guard::Fence)
            .map_err(|e| format!("rust begin: {e}")),
    }
}

/// Charges the order as the holder of `token` (guard: the fence).
async fn charge(p: &Party<'_>, db: &Db, token: u64, worker: &str) -> Result<Charge> {
    match &p.lang {
        Lang::Java { h, worker: w } => {
            let (order, amount, t) = (ORDER.to_string(), AMOUNT.to_string(), token.to_string());
            let args = [
                db.path()?,
                order.as_str(),
                amount.as_str(),
                t.as_str(),
                worker,
                "fence",
            ];
            java_charge(&h.call(w, "ordersCharge", &args, CMD).await?.into_ok()?, token)
        }
        Lang::Rust { .. } => db
            .open()?
            .charge(ORDER, AMOUNT, token, worker, Guard::Fence)
            .map_err(|e| format!("rust charge: {e}")),
    }
}

/// A Rust party's pinned fenced lock.
fn rust_lock(p: &Party<'_>, name: &str) -> Result<redisson_lock::RFencedLock> {
    let Lang::Rust { c, owner } = &p.lang else {
        return Err("a Java party has no Rust handle".into());
    };
    Ok(c.fenced_lock(name)
        .map_err(|e| format!("client.fenced_lock({name}): {e}"))?
        .with_owner(*owner))
}

/// A's stall: a Java worker's `sleep`, or a Rust task's.
enum Stall {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<()>),
}

impl Stall {
    async fn start(p: &Party<'_>) -> Result<Stall> {
        Ok(match &p.lang {
            Lang::Java { h, worker } => {
                Stall::Java(Box::new(h.send(worker, "sleep", &[&STALL_MS.to_string()]).await?))
            }
            Lang::Rust { .. } => {
                Stall::Rust(tokio::spawn(tokio::time::sleep(Duration::from_millis(STALL_MS))))
            }
        })
    }

    async fn end(self) -> Result<()> {
        match self {
            Stall::Java(p) => p
                .wait(Duration::from_millis(STALL_MS) + CMD)
                .await?
                .into_ok()
                .map(drop),
            Stall::Rust(j) => j.await.map_err(|e| format!("the stall task: {e}")),
        }
    }
}

pub async fn s58(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(58, dir);
    let (a, b) = env.pair(58, dir, Speed::Normal);
    let (fa, fb) = (a.field(FENCED, &name).await?, b.field(FENCED, &name).await?);
    let (wa, wb) = (payer(&a, "A"), payer(&b, "B"));
    let db = Db::new(env, dir)?;

    // A: the lock with a lease, and its token
    let (ta, a_at, ga): (u64, f64, Option<FencedGuard>) = match a.java_lock(FENCED, &name) {
        Some(j) => {
            let got = j.try_lock_and_get_token(Some(0), Some(LEASE_MS)).await?;
            let t = got
                .value
                .ok_or("A's tryLockAndGetToken(0, lease) was refused on a free lock")?;
            (
                u64::try_from(t).map_err(|_| format!("token {t}"))?,
                got.ts_ms,
                None,
            )
        }
        None => {
            let (t, g) = rust_lock(&a, &name)?
                .lock_with_lease_and_get_token(Duration::from_millis(LEASE_MS))
                .await
                .map_err(|e| format!("rust lock_with_lease_and_get_token: {e}"))?;
            (t, now_ms(), Some(g))
        }
    };
    let h = env.raw.hgetall(&name).await?;
    ensure!(h == one_field(&fa, "1"), "after A's grant the hash is {h:?}");
    // the lock's expiry is at least `t0 + ttl`: B can get in no earlier (one host, one clock)
    let t0 = now_ms();
    let ttl = env.raw.pttl(&name).await?;
    ensure!(
        ttl > 0 && ttl <= LEASE_MS as i64,
        "A's lock has PTTL {ttl}, expected its {LEASE_MS} ms lease"
    );
    let found = begin(&a, &db, ta).await?;
    ensure!(
        found == Begin::Pending { amount_cents: AMOUNT },
        "A found {found:?}"
    );

    // A stalls past its lease; B waits for the lock meanwhile and gets it once the lease ran out
    let stall = Stall::start(&a).await?;
    let (tb, b_at, gb): (u64, f64, Option<FencedGuard>) = match b.java_lock(FENCED, &name) {
        Some(j) => {
            let got = j.lock_and_get_token(None).await?;
            let t = got.value;
            (
                u64::try_from(t).map_err(|_| format!("token {t}"))?,
                got.ts_ms,
                None,
            )
        }
        None => {
            let (t, g) = rust_lock(&b, &name)?
                .lock_and_get_token()
                .await
                .map_err(|e| format!("rust lock_and_get_token: {e}"))?;
            (t, now_ms(), Some(g))
        }
    };
    let waited = b_at - a_at;
    ensure!(
        tb == ta + 1,
        "B's token is {tb}, A's {ta}: one counter for both languages"
    );
    ensure!(
        b_at >= t0 + ttl as f64 - 5.0,
        "B got the lock {waited:.0} ms after A's grant, before A's lease (PTTL {ttl} ms then) ran out"
    );
    let h = env.raw.hgetall(&name).await?;
    ensure!(h == one_field(&fb, "1"), "after B's grant the hash is {h:?}");
    let found = begin(&b, &db, tb).await?;
    ensure!(
        found == Begin::Pending { amount_cents: AMOUNT },
        "B found {found:?}"
    );
    let written = charge(&b, &db, tb, &wb).await?;
    ensure!(written == Charge::Written, "B's charge: {written:?}");

    // A wakes up and charges: the database refuses it
    stall.end().await?;
    let late = charge(&a, &db, ta, &wa).await?;
    ensure!(
        late == Charge::Refused(Refusal::StaleToken { token: ta, fence: tb }),
        "A's late charge: {late:?}, expected the fence {tb} to refuse token {ta}"
    );
    // ... and its lock says it is gone
    let a_learns = match (a.java_lock(FENCED, &name), ga) {
        (Some(j), _) => {
            ensure!(
                !j.is_held_by_thread().await?,
                "Java A still holds after its lease"
            );
            match j.unlock().await? {
                JavaUnlock::NotHeld(e) => format!("isHeldByCurrentThread false, unlock {}", e.simple_class()),
                JavaUnlock::Released { .. } => return Err("Java A's late unlock released".into()),
            }
        }
        (None, Some(g)) => {
            let why = tokio::time::timeout(Duration::from_secs(5), g.lost())
                .await
                .map_err(|_| "Rust A's guard did not report the end of its lease".to_string())?;
            ensure!(why == LostReason::LeaseExpired, "Rust A lost its hold: {why}");
            match g.unlock().await {
                Err(LockError::NotHeld { .. }) => "lost() LeaseExpired, unlock NotHeld".to_owned(),
                other => return Err(format!("Rust A's late unlock: {other:?}")),
            }
        }
        (None, None) => return Err("Rust A without its guard".into()),
    };

    // the database: charged once, by B, fenced with B's token
    let orders = db.open()?;
    let paid = orders.payments(ORDER).map_err(|e| e.to_string())?;
    ensure!(
        paid.len() == 1 && paid[0].worker == wb && paid[0].token == tb,
        "the order's payments: {paid:?}, expected one by {wb} with token {tb}"
    );
    let fence = orders.fence(ORDER).map_err(|e| e.to_string())?;
    ensure!(
        fence == tb,
        "the order's fence is {fence}, expected B's token {tb}"
    );
    match (b.java_lock(FENCED, &name), gb) {
        (Some(j), _) => {
            if let JavaUnlock::NotHeld(e) = j.unlock().await? {
                return Err(format!("Java B's unlock: {e}"));
            }
        }
        (None, Some(g)) => {
            g.unlock().await.map_err(|e| format!("Rust B's unlock: {e}"))?;
        }
        (None, None) => return Err("Rust B without its guard".into()),
    }
    let h = env.raw.hgetall(&name).await?;
    ensure!(h.is_empty(), "after B's unlock the hash is {h:?}");
    let counter = env.raw.get(&token_key(&name)).await?;
    ensure!(
        counter == Some(tb.to_string()),
        "the token counter is {counter:?}"
    );
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "A token {ta}, lease {LEASE_MS} ms, stalled {STALL_MS} ms; B token {tb} after {waited:.0} ms, charged; A's late charge refused (fence {tb} > token {ta}); A: {a_learns}; one payment, by {wb}"
        ),
    })
}
