//! Fenced lock scenarios 16–19 (`getFencedLock` / `Client::fenced_lock`, Redisson 3.19.0+),
//! both directions: fencing tokens across languages, refused attempts, the wake-up over the RLock
//! channel, and mutual exclusion with token order; and the table entry of scenario 58, the
//! fenced write against a database (`fenced_write.rs`).
//!
//! The token counter `redisson_lock_token:{N}` is shared: every grant (re-entries and the plain
//! `lock()`/`try_lock()` too) increments it, a refused attempt does not. Java's `getToken()`
//! answers 0 before any grant, Rust's `get_token()` `None`.

use std::time::Duration;

use redisson_lock_compat_tests::{now_ms, Pending, Result};

use crate::counter::mixed_counter;
use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{Lang, Party, FENCED};
use crate::support::{channel_of, one_field, token_key, Watch, WAKE_BOUND_MS};

/// Scenario 19: tasks per language and rounds per task.
const COUNTER: (usize, usize, usize) = (3, 3, 150);

const fn sc(no: usize, title: &'static str) -> Scenario {
    Scenario {
        no,
        title,
        dirs: BOTH_WAYS,
        limit_s: 60,
        last: false,
        needs: None,
    }
}

pub const SCENARIOS: &[Scenario] = &[
    sc(16, "Fenced: tokens +1 per grant across languages (A, A re-entry, B, B plain lock, A try+lease, B try+wait, A, B); both sides' get_token equal the counter (Java 0 / Rust None before any)"),
    sc(17, "Fenced: while A holds, B's refused attempts (try_lock_and_get_token 0 / 200 ms / with lease, try_lock, try_lock_for) take no token on either side; after A's unlock B gets the next one"),
    sc(18, "Fenced: B blocked in lock_and_get_token is woken by A's unlock (message 0 on redisson_lock__channel) within 200 ms and gets A's token + 1"),
    Scenario {
        limit_s: 120,
        ..sc(19, "Fenced: mutual exclusion: 3 Java + 3 Rust tasks x 150 rounds; counter = 900, no overlap, ≥ 10 hand-overs each way, tokens 1..=900 increasing in section order")
    },
    sc(58, "Fenced write: A (1 s lease) claims an order in SQLite and stalls 1.5 s; B gets the lock with A's token + 1 once the lease ran out and charges; A's late charge is refused by the database (fence B's token > A's), A's lock says it is gone (Java unlock IllegalMonitorStateException, Rust lost() LeaseExpired); one payment, by B"),
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        16 => s16(env, dir).await,
        17 => s17(env, dir).await,
        18 => s18(env, dir).await,
        19 => s19(env, dir).await,
        58 => crate::fenced_write::s58(env, dir).await,
        _ => Err(format!("no fenced lock scenario {no}")),
    }
}

/// How a party asks for the lock.
#[derive(Clone, Copy, Debug)]
enum Take {
    /// `lockAndGetToken()` / `lock_and_get_token()`.
    LockAndGet,
    /// The plain `lock()` (Java: the token is read back with `getToken()`; Rust: the guard's).
    Lock,
    /// `tryLockAndGetToken(WAIT[, LEASE])` / `try_lock_and_get_token()`,
    /// `try_lock_for_and_get_token(wait)`, `try_lock_with_lease_and_get_token(wait, lease)`.
    TryAndGet { wait_ms: u64, lease_ms: Option<u64> },
    /// The plain `tryLock()` / `try_lock()` (the token as for `Lock`).
    Try,
    /// `tryLock(WAIT)` / `try_lock_for(wait)`.
    TryFor { wait_ms: u64 },
}

/// Acquires (kind fenced) as `how`; the token of the grant, `None` when refused. Rust guards stay
/// in the party.
async fn take(p: &mut Party<'_>, name: &str, how: Take) -> Result<Option<u64>> {
    let who = p.desc();
    let tok = |t: i64| u64::try_from(t).map_err(|_| format!("{who}: negative token {t}"));
    if let Some(j) = p.java_lock(FENCED, name) {
        return match how {
            Take::LockAndGet => tok(j.lock_and_get_token(None).await?.value).map(Some),
            Take::TryAndGet { wait_ms, lease_ms } => j
                .try_lock_and_get_token(Some(wait_ms), lease_ms)
                .await?
                .value
                .map(tok)
                .transpose(),
            Take::Lock => {
                j.lock(None).await?;
                tok(j.get_token().await?).map(Some)
            }
            Take::Try | Take::TryFor { .. } => {
                let wait = match how {
                    Take::TryFor { wait_ms } => Some(wait_ms),
                    _ => None,
                };
                if j.try_lock(wait, None).await?.value {
                    tok(j.get_token().await?).map(Some)
                } else {
                    Ok(None)
                }
            }
        };
    }
    let Lang::Rust { c, owner } = &p.lang else {
        return Err("unreachable: neither Java nor Rust".into());
    };
    let l = c
        .fenced_lock(name)
        .map_err(|e| format!("client.fenced_lock({name}): {e}"))?
        .with_owner(*owner);
    let e = |e: redisson_lock::Error| format!("{who}: fenced {how:?}({name}): {e}");
    let got = match how {
        Take::LockAndGet => {
            let (t, g) = l.lock_and_get_token().await.map_err(e)?;
            ensure!(
                t == g.token(),
                "lock_and_get_token gave {t}, its guard {}",
                g.token()
            );
            Some(g)
        }
        Take::Lock => Some(l.lock().await.map_err(e)?),
        Take::TryAndGet { wait_ms, lease_ms } => match (wait_ms, lease_ms) {
            (0, None) => l.try_lock_and_get_token().await,
            (w, None) => l.try_lock_for_and_get_token(Duration::from_millis(w)).await,
            (w, Some(lease)) => {
                l.try_lock_with_lease_and_get_token(Duration::from_millis(w), Duration::from_millis(lease))
                    .await
            }
        }
        .map_err(e)?
        .map(|(t, g)| (t == g.token()).then_some(g).ok_or(t))
        .transpose()
        .map_err(|t| format!("try_lock_and_get_token gave {t}, its guard another token"))?,
        Take::Try => l.try_lock().await.map_err(e)?,
        Take::TryFor { wait_ms } => l.try_lock_for(Duration::from_millis(wait_ms)).await.map_err(e)?,
    };
    Ok(got.map(|g| {
        let t = g.token();
        p.push_guard(name, FENCED, Box::new(g));
        t
    }))
}

/// The token as the party's language reads it: Java `getToken()` (0 = none yet), Rust
/// `get_token()` (`None` = none yet).
async fn read_token(p: &Party<'_>, name: &str) -> Result<String> {
    if let Some(j) = p.java_lock(FENCED, name) {
        return Ok(format!("java {}", j.get_token().await?));
    }
    let Lang::Rust { c, .. } = &p.lang else {
        return Err("unreachable".into());
    };
    let t = c
        .fenced_lock(name)
        .map_err(|e| e.to_string())?
        .get_token()
        .await
        .map_err(|e| format!("rust get_token: {e}"))?;
    Ok(format!("rust {t:?}"))
}

/// Both parties and Redis agree that the last token handed out is `want` (`None`: no grant
/// yet): Java `getToken()` = `want` or 0, Rust `get_token()` = `want`, `GET
/// redisson_lock_token:{N}` = `want`, and the counter has no TTL.
async fn expect_token(
    env: &Env,
    a: &Party<'_>,
    b: &Party<'_>,
    name: &str,
    want: Option<u64>,
    when: &str,
) -> Result<()> {
    for p in [a, b] {
        let seen = read_token(p, name).await?;
        let expected = match (&p.lang, want) {
            (Lang::Java { .. }, w) => format!("java {}", w.unwrap_or(0)),
            (Lang::Rust { .. }, w) => format!("rust {w:?}"),
        };
        ensure!(
            seen == expected,
            "{when}: {} reads the token as `{seen}`, expected `{expected}`",
            p.desc()
        );
    }
    let key = token_key(name);
    let raw = env.raw.get(&key).await?;
    ensure!(
        raw == want.map(|w| w.to_string()),
        "{when}: GET {key} = {raw:?}, expected {want:?}"
    );
    if want.is_some() {
        let ttl = env.raw.pttl(&key).await?;
        ensure!(ttl == -1, "{when}: PTTL {key} = {ttl}, expected -1 (no TTL)");
    }
    Ok(())
}

async fn s16(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(16, dir);
    let (mut a, mut b) = env.pair(16, dir, Speed::Normal);
    let (fa, fb) = (a.field(FENCED, &name).await?, b.field(FENCED, &name).await?);
    expect_token(env, &a, &b, &name, None, "before any grant").await?;
    // (A holds?, how, expected hold count of the taker afterwards, unlocks after this step)
    let steps: [(bool, Take, i64, usize); 8] = [
        (true, Take::LockAndGet, 1, 0),
        (true, Take::LockAndGet, 2, 2),
        (false, Take::LockAndGet, 1, 0),
        (false, Take::Lock, 2, 2),
        (
            true,
            Take::TryAndGet {
                wait_ms: 0,
                lease_ms: Some(10_000),
            },
            1,
            1,
        ),
        (
            false,
            Take::TryAndGet {
                wait_ms: 1000,
                lease_ms: None,
            },
            1,
            1,
        ),
        (true, Take::LockAndGet, 1, 1),
        (false, Take::LockAndGet, 1, 1),
    ];
    let mut last = 0u64;
    let mut seq = Vec::new();
    for (i, (by_a, how, count, unlocks)) in steps.into_iter().enumerate() {
        let (p, other, field) = if by_a {
            (&mut a, &b, &fa)
        } else {
            (&mut b, &a, &fb)
        };
        let who = p.desc();
        let t = take(p, &name, how)
            .await?
            .ok_or_else(|| format!("step {i}: {who}'s {how:?} was refused on a free lock"))?;
        ensure!(
            t == last + 1,
            "step {i}: {who}'s {how:?} got token {t} after {last} (tokens so far {seq:?})"
        );
        seq.push(format!("{}{t}", if by_a { "A" } else { "B" }));
        last = t;
        let h = env.raw.hgetall(&name).await?;
        ensure!(
            h == one_field(field, &count.to_string()),
            "step {i}: after {who}'s {how:?} the hash is {h:?}, expected {{{field}: {count}}}"
        );
        let hc = p.hold_count(FENCED, &name).await?;
        ensure!(
            hc == count,
            "step {i}: {who}'s hold count is {hc}, expected {count}"
        );
        if let Take::TryAndGet {
            lease_ms: Some(l), ..
        } = how
        {
            let ttl = env.raw.pttl(&name).await?;
            ensure!(
                ttl > 0 && ttl <= l as i64,
                "step {i}: PTTL {ttl} after a grant with lease {l} ms"
            );
        }
        let (a_ref, b_ref) = if by_a { (&*p, other) } else { (other, &*p) };
        expect_token(
            env,
            a_ref,
            b_ref,
            &name,
            Some(t),
            &format!("step {i} ({who} {how:?})"),
        )
        .await?;
        for _ in 0..unlocks {
            p.unlock_ok(FENCED, &name).await?;
        }
    }
    let h = env.raw.hgetall(&name).await?;
    ensure!(h.is_empty(), "the hash is {h:?} after the last unlock");
    expect_token(env, &a, &b, &name, Some(last), "after the last unlock").await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "tokens {} (+1 each, across languages, re-entry and plain lock included); getToken 0 / get_token None before; counter kept after the unlocks, no TTL",
            seq.join(" ")
        ),
    })
}

async fn s17(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(17, dir);
    let (mut a, mut b) = env.pair(17, dir, Speed::Normal);
    let fa = a.field(FENCED, &name).await?;
    let t = take(&mut a, &name, Take::LockAndGet)
        .await?
        .ok_or("A's lock_and_get_token was refused")?;
    let attempts = [
        Take::TryAndGet {
            wait_ms: 0,
            lease_ms: None,
        },
        Take::TryAndGet {
            wait_ms: 200,
            lease_ms: None,
        },
        Take::TryAndGet {
            wait_ms: 100,
            lease_ms: Some(5000),
        },
        Take::Try,
        Take::TryFor { wait_ms: 200 },
    ];
    for how in attempts {
        let got = take(&mut b, &name, how).await?;
        ensure!(got.is_none(), "B's {how:?} acquired ({got:?}) while A holds");
        expect_token(env, &a, &b, &name, Some(t), &format!("after B's refused {how:?}")).await?;
        let h = env.raw.hgetall(&name).await?;
        ensure!(
            h == one_field(&fa, "1"),
            "after B's refused {how:?} the hash is {h:?}"
        );
    }
    a.unlock_ok(FENCED, &name).await?;
    let next = take(
        &mut b,
        &name,
        Take::TryAndGet {
            wait_ms: 0,
            lease_ms: None,
        },
    )
    .await?
    .ok_or("B's try_lock_and_get_token was refused after A's unlock")?;
    ensure!(
        next == t + 1,
        "B's token after A's unlock is {next}, expected {} (A had {t})",
        t + 1
    );
    expect_token(env, &a, &b, &name, Some(next), "after B's grant").await?;
    b.unlock_ok(FENCED, &name).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!("A token {t}; 5 refused attempts left it at {t} on both sides; B then got {next}"),
    })
}

async fn s18(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(18, dir);
    let (mut a, mut b) = env.pair(18, dir, Speed::Normal);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let t = take(&mut a, &name, Take::LockAndGet)
        .await?
        .ok_or("A's lock_and_get_token was refused")?;
    // B waits in lockAndGetToken / lock_and_get_token.
    enum W {
        Java(Box<Pending>),
        Rust(tokio::task::JoinHandle<Result<(u64, redisson_lock::FencedGuard, f64)>>),
    }
    let waiting = if let Some(j) = b.java_lock(FENCED, &name) {
        W::Java(Box::new(j.send("lockAndGetToken", &[]).await?))
    } else {
        let Lang::Rust { c, owner } = &b.lang else {
            return Err("a Java party has no Rust handle".into());
        };
        let l = c
            .fenced_lock(&name)
            .map_err(|e| format!("client.fenced_lock({name}): {e}"))?
            .with_owner(*owner);
        W::Rust(tokio::spawn(async move {
            let (t, g) = l
                .lock_and_get_token()
                .await
                .map_err(|e| format!("rust lock_and_get_token: {e}"))?;
            Ok((t, g, now_ms()))
        }))
    };
    env.wait_subscribers(&name, 1).await?;
    ensure!(
        watch.seen().is_empty(),
        "messages before A's unlock: {:?}",
        watch.seen()
    );
    let (u_start, t_unlock) = a.unlock_ok(FENCED, &name).await?;
    let (bt, t_acq) = match waiting {
        W::Java(p) => {
            let r = p.wait(Duration::from_secs(10)).await?;
            let (ts, start) = (r.ts_ms, r.start_ms);
            ensure!(start <= u_start, "B's lockAndGetToken started after A's unlock");
            let v = r.token()?.ok_or("lockAndGetToken returned null")?;
            (u64::try_from(v).map_err(|_| format!("token {v}"))?, ts)
        }
        W::Rust(j) => {
            let (bt, g, at) = tokio::time::timeout(Duration::from_secs(10), j)
                .await
                .map_err(|_| "rust lock_and_get_token not woken within 10 s".to_string())?
                .map_err(|e| format!("rust task: {e}"))??;
            b.push_guard(&name, FENCED, Box::new(g));
            (bt, at)
        }
    };
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= WAKE_BOUND_MS,
        "B acquired {lat:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms)"
    );
    ensure!(bt == t + 1, "B's token is {bt}, A's was {t}");
    expect_token(env, &a, &b, &name, Some(bt), "after B's grant").await?;
    let ch = channel_of(&name);
    let seen = watch.wait_for(1, Duration::from_secs(2)).await?;
    ensure!(
        seen.len() == 1 && seen[0].1 == ch && seen[0].2 == "0",
        "after A's unlock the lock's channels carried {seen:?}, expected one `0` on {ch}"
    );
    b.unlock_ok(FENCED, &name).await?;
    let seen = watch.wait_for(2, Duration::from_secs(2)).await?;
    ensure!(
        seen.len() == 2 && seen[1].1 == ch && seen[1].2 == "0",
        "after B's unlock the lock's channels carried {seen:?}, expected a second `0` on {ch}"
    );
    drop(watch);
    Ok(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "message `0` on {ch} from each unlock; B's token {bt} = A's + 1; B in {:.1} ms after the unlock call started",
            t_acq - u_start
        ),
    })
}

async fn s19(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(19, dir);
    let before = env.raw.get(&token_key(&name)).await?;
    ensure!(
        before.is_none(),
        "token counter exists before the run: {before:?}"
    );
    let run = mixed_counter(env, 19, dir, FENCED, &name, COUNTER, 0).await?;
    let n = run.intervals.len() as u64;
    let mut prev = 0u64;
    for i in &run.intervals {
        let t = i
            .fence_token()
            .ok_or_else(|| format!("record without a token: {i:?}"))?;
        ensure!(
            t > prev,
            "token {t} of {} follows token {prev} in section order",
            i.who
        );
        prev = t;
    }
    let mut tokens: Vec<u64> = run.intervals.iter().filter_map(|i| i.fence_token()).collect();
    tokens.sort_unstable();
    ensure!(
        tokens == (1..=n).collect::<Vec<_>>(),
        "the tokens are not exactly 1..={n} (first {:?}, last {:?}): a grant skipped or repeated a token",
        tokens.first(),
        tokens.last()
    );
    let counter = env.raw.get(&token_key(&name)).await?;
    ensure!(
        counter == Some(n.to_string()),
        "the token counter is {counter:?} after {n} grants"
    );
    Ok(Outcome {
        latency_ms: None,
        note: format!("{}; tokens 1..={n} in section order", run.summary()),
    })
}
