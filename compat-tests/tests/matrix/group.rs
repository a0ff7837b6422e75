//! Grouped multi-lock scenarios 65–66 (`getMultiLock(group, values)` / `Client::group_lock`,
//! feature `group-lock`; Redisson 3.38.0+, n/a before): 65 checks the hash a holder writes (the
//! value ids the crate computes are the fields Redisson writes) and that overlapping value sets
//! exclude each other with a wake-up across languages; 66 force-unlocks part of a hold from the
//! other language and lets a leased value lapse by its deadline while the group's key lives on.

use std::time::{Duration, Instant};

use redisson_lock::{Codec, EntryKey, RGroupLock};
use redisson_lock_compat_tests::Result;

use crate::env::Env;
use crate::kinds::{Dir, Needs, Outcome, Scenario, BOTH_WAYS};
use crate::support::until;

pub const NEEDS: Option<Needs> = Some(Needs {
    since: "3.38.0",
    what: "RedissonClient.getMultiLock(String, Collection)",
});

pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        no: 65,
        title: "Grouped lock across languages: A holds getMultiLock(g, [\"Jack_001\", \"Mary_002\"]) / group_lock(g, Kryo5 values) (each value id the crate computes is a field of the group's hash naming A's owner, with A's lock_count 1 and expire_time); B's try_lock of [\"Mary_002\", \"Tom_003\"] fails, B's disjoint [\"Tom_003\"] succeeds, B's lock() of the overlapping set waits and gets it ≤ 1000 ms after A's unlock",
        dirs: BOTH_WAYS,
        limit_s: 60,
        last: false,
        needs: NEEDS,
    },
    Scenario {
        no: 66,
        title: "Grouped lock force unlock and deadlines across languages: A holds [\"a\", \"b\"] with a 2 s lease while B holds [\"z\"] (the key lives on); B's forceUnlock of [\"b\"] frees b only (B takes b, not a); once A's lease deadline passes B takes a, the group's key never having expired",
        dirs: BOTH_WAYS,
        limit_s: 60,
        last: false,
        needs: NEEDS,
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        65 => s65(env, dir).await,
        66 => s66(env, dir).await,
        _ => Err(format!("no grouped-lock scenario {no}")),
    }
}

/// The harness' VALUES token: `x<hex>` per value, comma-separated.
fn spec(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("x{}", v.bytes().map(|b| format!("{b:02x}")).collect::<String>()))
        .collect::<Vec<_>>()
        .join(",")
}

fn id(value: &str) -> Result<String> {
    Ok(EntryKey::string(Codec::Kryo5, value)
        .map_err(|e| e.to_string())?
        .hash()
        .to_owned())
}

fn rust_group(env: &Env, group: &str, values: &[&str]) -> Result<RGroupLock> {
    let keys = values
        .iter()
        .map(|v| EntryKey::string(Codec::Kryo5, v))
        .collect::<redisson_lock::Result<Vec<_>>>()
        .map_err(|e| e.to_string())?;
    env.rust.group_lock(group, &keys).map_err(|e| e.to_string())
}

/// The holder's three fields for each of `values` in the group's hash.
async fn check_held(env: &Env, group: &str, values: &[&str], field: &str) -> Result<()> {
    let h = env.raw.hgetall(group).await?;
    for v in values {
        let v = id(v)?;
        ensure!(
            h.get(&v).map(String::as_str) == Some(field),
            "value id {v} is not held by {field}: the hash {group} is {h:?}"
        );
        ensure!(
            h.get(&format!("{v}:{field}:lock_count")).map(String::as_str) == Some("1"),
            "{v}: no lock_count 1 of {field} in {h:?}"
        );
        let deadline: i64 = h
            .get(&format!("{v}:{field}:expire_time"))
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| format!("{v}: no expire_time of {field} in {h:?}"))?;
        let now = redisson_lock_compat_tests::now_ms() as i64;
        ensure!(
            deadline > now,
            "{v}: expire_time {deadline} is not ahead of now {now}"
        );
    }
    Ok(())
}

pub async fn s65(env: &Env, dir: Dir) -> Result<Outcome> {
    let group = format!("compat:{}:s65:{}:group", env.version, dir.tag());
    let held = ["Jack_001", "Mary_002"];
    let overlapping = ["Mary_002", "Tom_003"];
    let worker = format!("s65{}", dir.tag());
    let java_field = env.java.field_of(&worker).await?;
    let limit = Duration::from_secs(10);
    let wanted = rust_group(env, &group, &overlapping)?;
    let latency = match dir {
        Dir::JavaHolds => {
            env.java
                .call(&worker, "groupLock", &[&group, &spec(&held)], limit)
                .await?
                .into_ok()?;
            check_held(env, &group, &held, &java_field).await?;
            let got = wanted.try_lock().await.map_err(|e| e.to_string())?;
            ensure!(got.is_none(), "Rust's try_lock got a value Java holds");
            let disjoint = rust_group(env, &group, &["Tom_003"])?
                .try_lock()
                .await
                .map_err(|e| e.to_string())?
                .ok_or("Rust's try_lock of a value nobody holds failed")?;
            disjoint.unlock().await.map_err(|e| e.to_string())?;
            let l = wanted.clone();
            let waiter = tokio::spawn(async move {
                let g = l.lock().await;
                (Instant::now(), g)
            });
            env.wait_subscribers(&group, 1).await?;
            let sent = Instant::now();
            env.java
                .call(&worker, "groupUnlock", &[&group, &spec(&held)], limit)
                .await?
                .into_ok()?;
            let (at, g) = tokio::time::timeout(limit, waiter)
                .await
                .map_err(|_| "Rust's lock() not woken within 10 s".to_owned())?
                .map_err(|e| e.to_string())?;
            let g = g.map_err(|e| e.to_string())?;
            let ms = at.saturating_duration_since(sent).as_secs_f64() * 1000.0;
            let owner = g.field().split('#').next().unwrap_or_default().to_owned();
            check_held(env, &group, &overlapping, &owner).await?;
            g.unlock().await.map_err(|e| e.to_string())?;
            ms
        }
        _ => {
            let g = rust_group(env, &group, &held)?
                .lock()
                .await
                .map_err(|e| e.to_string())?;
            let owner = g.field().split('#').next().unwrap_or_default().to_owned();
            check_held(env, &group, &held, &owner).await?;
            let got = env
                .java
                .call(&worker, "groupTryLock", &[&group, &spec(&overlapping)], limit)
                .await?
                .bool()?;
            ensure!(!got, "Java's tryLock got a value Rust holds");
            let locked = env
                .java
                .call(&worker, "groupIsLocked", &[&group, &spec(&overlapping)], limit)
                .await?
                .bool()?;
            ensure!(locked, "Java's isLocked does not see Rust's hold");
            let disjoint = env
                .java
                .call(&worker, "groupTryLock", &[&group, &spec(&["Tom_003"])], limit)
                .await?
                .bool()?;
            ensure!(disjoint, "Java's tryLock of a value nobody holds failed");
            env.java
                .call(&worker, "groupUnlock", &[&group, &spec(&["Tom_003"])], limit)
                .await?
                .into_ok()?;
            let pending = env
                .java
                .send(&worker, "groupLock", &[&group, &spec(&overlapping)])
                .await?;
            env.wait_subscribers(&group, 1).await?;
            let sent = Instant::now();
            g.unlock().await.map_err(|e| e.to_string())?;
            let r = pending.wait(limit).await?;
            let done = r.ts_ms;
            r.into_ok()?;
            check_held(env, &group, &overlapping, &java_field).await?;
            ensure!(
                wanted.is_locked().await.map_err(|e| e.to_string())?,
                "Rust's is_locked does not see Java's hold"
            );
            env.java
                .call(&worker, "groupUnlock", &[&group, &spec(&overlapping)], limit)
                .await?
                .into_ok()?;
            // the response's completion time against the unlock's, both on this machine's clock
            let now_ms = redisson_lock_compat_tests::now_ms();
            let elapsed = sent.elapsed().as_secs_f64() * 1000.0;
            (done - (now_ms - elapsed)).max(0.0)
        }
    };
    until(limit, "the group's hash is gone", || async {
        Ok(env.raw.exists(&[group.as_str()]).await? == 0)
    })
    .await?;
    ensure!(
        latency <= 1000.0,
        "the waiter got the values {latency:.0} ms after the unlock"
    );
    Ok(Outcome {
        latency_ms: Some(latency),
        note: format!("group {group}; B woken {latency:.1} ms after A's unlock"),
    })
}

async fn s66(env: &Env, dir: Dir) -> Result<Outcome> {
    let group = format!("compat:{}:s66:{}:group", env.version, dir.tag());
    let worker = format!("s66{}", dir.tag());
    let java_field = env.java.field_of(&worker).await?;
    let limit = Duration::from_secs(10);
    let lease_ms: u64 = 2000;
    let ab = spec(&["a", "b"]);
    let started = Instant::now();
    // B (the other language) holds z, which keeps the key alive past A's lease
    let (z_rust, a_rust) = match dir {
        Dir::JavaHolds => {
            env.java
                .call(&worker, "groupLock", &[&group, &ab, &lease_ms.to_string()], limit)
                .await?
                .into_ok()?;
            check_held(env, &group, &["a", "b"], &java_field).await?;
            let z = rust_group(env, &group, &["z"])?
                .lock()
                .await
                .map_err(|e| e.to_string())?;
            (Some(z), None)
        }
        _ => {
            let a = rust_group(env, &group, &["a", "b"])?
                .lock_with_lease(Duration::from_millis(lease_ms))
                .await
                .map_err(|e| e.to_string())?;
            env.java
                .call(&worker, "groupLock", &[&group, &spec(&["z"])], limit)
                .await?
                .into_ok()?;
            (None, Some(a))
        }
    };
    // B force-unlocks b, then takes b but not a
    let b_only = rust_group(env, &group, &["b"])?;
    let a_only = rust_group(env, &group, &["a"])?;
    let (took_b, took_a) = match dir {
        Dir::JavaHolds => {
            ensure!(
                b_only.force_unlock().await.map_err(|e| e.to_string())?,
                "Rust's force unlock of b found nothing to free"
            );
            let b = b_only.try_lock().await.map_err(|e| e.to_string())?;
            let a = a_only.try_lock().await.map_err(|e| e.to_string())?;
            let took = (b.is_some(), a.is_some());
            if let Some(b) = b {
                b.unlock().await.map_err(|e| e.to_string())?;
            }
            took
        }
        _ => {
            let freed = env
                .java
                .call(&worker, "groupForceUnlock", &[&group, &spec(&["b"])], limit)
                .await?
                .bool()?;
            ensure!(freed, "Java's force unlock of b found nothing to free");
            let b = env
                .java
                .call(&worker, "groupTryLock", &[&group, &spec(&["b"])], limit)
                .await?
                .bool()?;
            let a = env
                .java
                .call(&worker, "groupTryLock", &[&group, &spec(&["a"])], limit)
                .await?
                .bool()?;
            if b {
                env.java
                    .call(&worker, "groupUnlock", &[&group, &spec(&["b"])], limit)
                    .await?
                    .into_ok()?;
            }
            (b, a)
        }
    };
    ensure!(took_b, "b was not free after the force unlock");
    ensure!(!took_a, "a was free before A's lease ran out");
    if let Some(a) = &a_rust {
        // told by Redis' tracking of the key, before the lease could end the hold
        let gone = redisson_lock::LeaseState::Lost(redisson_lock::LostReason::OwnerGone);
        until(
            Duration::from_millis(1500),
            "Rust's hold of [a, b] learns b was force-unlocked",
            || async { Ok(a.state() == gone) },
        )
        .await?;
    }
    // after A's deadline, a is free although the key lives on (B's z)
    let wait_ms = (lease_ms + 3000).saturating_sub(started.elapsed().as_millis() as u64);
    let got_a = match dir {
        Dir::JavaHolds => {
            let g = a_only
                .try_lock_for(Duration::from_millis(wait_ms))
                .await
                .map_err(|e| e.to_string())?;
            let at = started.elapsed();
            let Some(g) = g else {
                return Err("a never became free after A's lease".into());
            };
            g.unlock().await.map_err(|e| e.to_string())?;
            at
        }
        _ => {
            let got = env
                .java
                .call(
                    &worker,
                    "groupTryLock",
                    &[&group, &spec(&["a"]), &wait_ms.to_string()],
                    limit,
                )
                .await?
                .bool()?;
            let at = started.elapsed();
            ensure!(got, "a never became free after A's lease");
            env.java
                .call(&worker, "groupUnlock", &[&group, &spec(&["a"])], limit)
                .await?
                .into_ok()?;
            at
        }
    };
    ensure!(
        got_a >= Duration::from_millis(lease_ms - 100),
        "a was taken {got_a:?} after A's hold began, before its {lease_ms} ms lease"
    );
    ensure!(
        env.raw.exists(&[group.as_str()]).await? == 1,
        "the group's key expired with A's lease: B's z should keep it"
    );
    match z_rust {
        Some(z) => z.unlock().await.map_err(|e| e.to_string())?,
        None => {
            env.java
                .call(&worker, "groupUnlock", &[&group, &spec(&["z"])], limit)
                .await?
                .into_ok()?;
            redisson_lock::Unlocked::Released
        }
    };
    match a_rust {
        // Java's acquisition of a lapsed value leaves the old holder's fields behind (Redisson
        // does not delete them): only Rust's lapsed fields of a may remain, under a TTL
        Some(a) => {
            let owner = a.field().split('#').next().unwrap_or_default().to_owned();
            drop(a);
            let h = env.raw.hgetall(&group).await?;
            let a_id = id("a")?;
            let lapsed = [
                format!("{a_id}:{owner}:expire_time"),
                format!("{a_id}:{owner}:lock_count"),
            ];
            ensure!(
                h.keys().all(|k| lapsed.contains(k)),
                "after every release the hash {group} is {h:?}"
            );
            ensure!(
                h.is_empty() || env.raw.pttl(&group).await? > 0,
                "Rust's lapsed fields are left without a TTL"
            );
            env.raw.del(&[group.as_str()]).await?;
        }
        // Rust's acquisition of Java's lapsed value deleted Java's fields: nothing is left
        None => {
            until(limit, "the group's hash is gone", || async {
                Ok(env.raw.exists(&[group.as_str()]).await? == 0)
            })
            .await?
        }
    }
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "group {group}; a taken {:.0} ms after A's {lease_ms} ms hold began",
            got_a.as_secs_f64() * 1000.0
        ),
    })
}
