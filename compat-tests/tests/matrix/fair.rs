//! Fair lock scenarios 27–30 (`getFairLock` / `Client::fair_lock`, every Redisson version of the
//! matrix), both directions: FIFO order across languages, waiters that leave the queue (a
//! timed-out Java `tryLock(wait)`, a cancelled Rust `lock()`), the head-only wake-up on the head's
//! own channel, mutual exclusion. The queue helpers and the FIFO and wake-up scenarios are shared
//! with the non-reentrant fair lock (`non_reentrant_fair.rs`, 31–34).
//!
//! Redis state besides the RLock hash `N`: the queue `redisson_lock_queue:{N}` (a list of waiting
//! owner fields, head first) and the deadlines `redisson_lock_timeout:{N}` (a zset: field → epoch
//! ms). The first waiter's deadline is "now + PTTL N + its wait", every later one's exactly "the
//! previous waiter's deadline + its wait"; `lock()` waits with the default 300 000 ms in both
//! libraries. When the head takes the lock, or a waiter leaves, everyone behind it gets that
//! waiter's wait back (`ZINCRBY -wait`). Only the head is woken, on
//! `redisson_lock__channel:{N}:<its field>`.

use std::time::{Duration, Instant};

use redisson_lock_compat_tests::{now_micros, now_ms, Interval, JavaKind, Pending, Result};

use crate::counter::mixed_counter;
use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS};
use crate::party::{word, Lang, Party, Waiting, FAIR};
use crate::support::{
    channel_of, fair_channel, fair_deadlines, fair_queue, one_field, short, until, Watch, WAKE_BOUND_MS,
};

/// The wait of a fair `lock()` (Redisson's `threadWaitTime` default since 3.13.3, configurable as
/// `fairLockWaitTimeout` since 3.46.0; the Rust `Config::with_fair_lock_wait_timeout` default): the
/// distance between two `lock()` waiters' deadlines.
pub const FAIR_WAIT_MS: f64 = 300_000.0;
/// How long each waiter of the FIFO scenarios holds the lock.
const HOLD_MS: u64 = 20;
/// Scenario 28: the wait of the Java `tryLock(wait)` that times out in the queue.
const JAVA_TRY_WAIT_MS: u64 = 2000;
/// Scenario 30: tasks per language and rounds per task.
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
    sc(27, "Fair: FIFO across languages: while A holds, 4 waiters of alternating languages (B's first) queue up; after each joins, LRANGE redisson_lock_queue:{N} is exactly their fields in arrival order and their deadlines in redisson_lock_timeout:{N} are exactly 300 000 ms apart; after A's unlock they are served in exactly that order (a list written inside each hold); queue and zset gone; A's late unlock: Java ok, Rust NotHeld"),
    sc(28, "Fair: a timed-out Java tryLock(2 s) and a cancelled Rust lock() (task aborted) leave the queue and the zset at once, and everyone behind gets the leaver's wait back (−300 000 / −2000 ms, exactly); after A's unlock the two waiters behind them get in at once (≤ 200 ms), in order. Then a crashed waiter (a field at the head, deadline 60 s ahead): the free lock refuses A's and B's try_lock() and nothing queues; once its deadline has passed B's try_lock() purges it and gets in"),
    sc(29, "Fair: only the head is woken, on its own channel: A's unlock publishes one `0` on redisson_lock__channel:{N}:<B's field> (nothing on the base channel nor C's) and B gets in ≤ 200 ms (Rust poll_interval 10 s); B's unlock wakes C (A's language) the same way; C's unlock, nobody queued, publishes nothing"),
    Scenario {
        limit_s: 120,
        ..sc(30, "Fair: mutual exclusion: 3 Java + 3 Rust tasks x 150 rounds, counter = 900, no overlap, ≥ 10 hand-overs each way; queue and zset gone")
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        27 => fifo(env, 27, dir, FAIR).await,
        28 => s28(env, dir).await,
        29 => head_wake(env, 29, dir, FAIR).await,
        30 => counter(env, 30, dir, FAIR, COUNTER).await,
        _ => Err(format!("no fair lock scenario {no}")),
    }
}

/// The queue (fields, head first) and the deadlines (field, epoch ms; lowest first) of `name`.
pub async fn queue_state(env: &Env, name: &str) -> Result<(Vec<String>, Vec<(String, f64)>)> {
    Ok((
        env.raw.lrange(&fair_queue(name)).await?,
        env.raw.zrange_scores(&fair_deadlines(name)).await?,
    ))
}

/// Waits up to 5 s until the queue is exactly `want` (head first) and the deadlines have exactly
/// those members; returns their deadlines in queue order.
pub async fn wait_queue(env: &Env, name: &str, want: &[String], what: &str) -> Result<Vec<f64>> {
    let matches = |(q, z): &(Vec<String>, Vec<(String, f64)>)| {
        q == want && z.len() == want.len() && want.iter().all(|f| z.iter().any(|(m, _)| m == f))
    };
    let r = until(Duration::from_secs(5), what, || async {
        Ok(matches(&queue_state(env, name).await?))
    })
    .await;
    let (q, z) = queue_state(env, name).await?;
    if let Err(e) = r {
        return Err(format!(
            "{e}: queue {q:?}, deadlines {z:?}, expected the queue {want:?}"
        ));
    }
    want.iter()
        .map(|f| {
            z.iter()
                .find(|(m, _)| m == f)
                .map(|(_, s)| *s)
                .ok_or_else(|| format!("{what}: no deadline for {f}"))
        })
        .collect()
}

/// Fails when the queue or the deadlines of `name` exist (nobody waits: both must be gone).
pub async fn expect_no_queue(env: &Env, name: &str, when: &str) -> Result<()> {
    let (q, d) = (fair_queue(name), fair_deadlines(name));
    if env.raw.exists(&[&q, &d]).await? != 0 {
        let (queue, deadlines) = queue_state(env, name).await?;
        return Err(format!(
            "{when}: nobody waits, but {q} = {queue:?} and {d} = {deadlines:?}"
        ));
    }
    Ok(())
}

/// Checks the deadlines after `leaver` left (or took the lock): every waiter behind it got
/// `wait_ms` back, the ones ahead kept theirs, exactly (`before` aligned with `fields`, `after`
/// with `fields` minus the leaver).
fn check_give_back(
    fields: &[String],
    before: &[f64],
    after: &[f64],
    leaver: &str,
    wait_ms: f64,
    who: &str,
) -> Result<()> {
    let at = fields
        .iter()
        .position(|f| f == leaver)
        .ok_or_else(|| format!("{leaver} was not queued"))?;
    let rest: Vec<(usize, &String)> = fields.iter().enumerate().filter(|(_, f)| *f != leaver).collect();
    ensure!(
        rest.len() == after.len(),
        "{} deadlines after {who} left, expected {}",
        after.len(),
        rest.len()
    );
    for ((i, f), got) in rest.into_iter().zip(after) {
        let want = before[i] - if i > at { wait_ms } else { 0.0 };
        ensure!(
            *got == want,
            "after {who} left, waiter {i} ({}) has the deadline {got}, expected {want} ({}; it was {})",
            short(f, 60),
            if i > at {
                format!("{wait_ms} ms less: it was behind")
            } else {
                "unchanged: it was ahead".to_owned()
            },
            before[i]
        );
    }
    Ok(())
}

/// Checks the deadlines of the queued waiters (`scores`, head first) against their waits (ms):
/// each is exactly the previous one + its own wait, and the head's is "now + the lock's PTTL
/// (≤ 30 s) + its wait" (both clocks are this host's). Returns the head's distance from now (ms).
fn check_deadlines(scores: &[f64], waits: &[f64], now: f64, what: &str) -> Result<f64> {
    for (j, w) in scores.windows(2).enumerate() {
        ensure!(
            w[1] - w[0] == waits[j + 1],
            "{what}: waiter {}'s deadline is {} ms after waiter {j}'s, expected exactly its wait {} (deadlines {scores:?})",
            j + 1,
            w[1] - w[0],
            waits[j + 1]
        );
    }
    let head = scores.first().map_or(0.0, |s| s - now);
    ensure!(
        head > waits[0] - 1000.0 && head <= waits[0] + 31_000.0,
        "{what}: the head's deadline is now + {head} ms, expected now + PTTL (≤ 30 s) + {}",
        waits[0]
    );
    Ok(head)
}

/// A waiter that, once it holds the lock, bumps `KEY`, holds it [`HOLD_MS`] ms, appends its
/// record to `KEY:intervals` (inside the hold) and unlocks: Java `<kind>Counter NAME KEY 1 20`
/// (record `java:<worker>:…`), Rust a task doing the same (record `rust:<owner>:…`). The list's
/// order is the order of the holds.
pub struct Recorder {
    /// The record's prefix (`java:<worker>` / `rust:<owner>`).
    pub who: String,
    /// The waiter's owner field (its queue entry).
    pub field: String,
    wait: RecWait,
}

enum RecWait {
    Java(Box<Pending>),
    Rust(tokio::task::JoinHandle<Result<()>>),
}

impl Recorder {
    /// Starts party `p`'s recorder on lock (kind, name).
    pub async fn start(env: &Env, p: &Party<'_>, kind: JavaKind, name: &str, key: &str) -> Result<Recorder> {
        let field = p.field(kind, name).await?;
        match &p.lang {
            Lang::Java { h, worker } => {
                let pending = h.counter(kind, worker, name, key, 1, HOLD_MS).await?;
                Ok(Recorder {
                    who: format!("java:{worker}"),
                    field,
                    wait: RecWait::Java(Box::new(pending)),
                })
            }
            Lang::Rust { owner, .. } => {
                let lock = p.rust_lock(kind, name)?;
                let who = format!("rust:{owner}");
                let (raw, key, ikey, w, tag) = (
                    env.raw.clone(),
                    key.to_owned(),
                    format!("{key}:intervals"),
                    word(kind),
                    who.clone(),
                );
                let task = tokio::spawn(async move {
                    let g = lock.lock(None).await.map_err(|e| format!("rust {w}lock: {e}"))?;
                    let start = now_micros();
                    let n: i64 = raw
                        .get(&key)
                        .await?
                        .map(|v| v.parse::<i64>().map_err(|e| format!("`{v}`: {e}")))
                        .transpose()?
                        .unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(HOLD_MS)).await;
                    raw.q::<()>(redis::cmd("SET").arg(&key).arg(n + 1)).await?;
                    let end = now_micros();
                    raw.q::<i64>(redis::cmd("RPUSH").arg(&ikey).arg(format!("{tag}:{start}:{end}")))
                        .await?;
                    g.unlock().await.map_err(|e| format!("rust {w}unlock: {e}"))?;
                    Ok(())
                });
                Ok(Recorder {
                    who,
                    field,
                    wait: RecWait::Rust(task),
                })
            }
        }
    }

    pub fn is_done(&mut self) -> bool {
        match &mut self.wait {
            RecWait::Java(p) => p.is_done(),
            RecWait::Rust(j) => j.is_finished(),
        }
    }

    /// Waits until it has held and released the lock.
    pub async fn finish(self, limit: Duration) -> Result<()> {
        match self.wait {
            RecWait::Java(p) => {
                let done = p.wait(limit).await?.int()?;
                ensure!(done == 1, "{}: {done} rounds", self.who);
                Ok(())
            }
            RecWait::Rust(j) => {
                let abort = j.abort_handle();
                tokio::time::timeout(limit, j)
                    .await
                    .map_err(|_| {
                        abort.abort();
                        format!("{} did not get the lock within {limit:?}", self.who)
                    })?
                    .map_err(|e| format!("{}: {e}", self.who))?
            }
        }
    }
}

/// Waits for every recorder and reads their records (`KEY:intervals`, in hold order); checks that
/// the holders are exactly `recs` in order, that the holds do not overlap and that `KEY` counts
/// them. Returns the records.
async fn served_in_order(env: &Env, key: &str, recs: Vec<Recorder>) -> Result<Vec<Interval>> {
    let whos: Vec<String> = recs.iter().map(|r| r.who.clone()).collect();
    for r in recs {
        r.finish(Duration::from_secs(20)).await?;
    }
    let ikey = format!("{key}:intervals");
    let records = env.raw.lrange(&ikey).await?;
    let total = env.raw.get(key).await?;
    env.raw.del(&[key, &ikey]).await?;
    let intervals: Vec<Interval> = records
        .iter()
        .map(|r| Interval::parse(r))
        .collect::<Result<_>>()?;
    let order: Vec<&str> = intervals.iter().map(|i| i.who.as_str()).collect();
    ensure!(
        order == whos,
        "served in the order {order:?}, expected the queue order {whos:?}"
    );
    for w in intervals.windows(2) {
        ensure!(
            w[0].end <= w[1].start,
            "holds overlap or are out of order: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    ensure!(
        total == Some(whos.len().to_string()),
        "the turn counter is {total:?}, expected {}",
        whos.len()
    );
    Ok(intervals)
}

/// A's second unlock after the lock is free: Redisson's fair unlock counts a missing lock as a
/// success (no exception; every version), ours reports `Error::NotHeld`. Returns what happened.
async fn late_unlock(p: &mut Party<'_>, kind: JavaKind, name: &str) -> Result<String> {
    let java = matches!(p.lang, Lang::Java { .. });
    let who = p.desc();
    match (java, p.unlock(kind, name).await?) {
        (true, Ok(_)) => Ok("Java: no exception (Redisson's fair unlock of a free lock succeeds)".into()),
        (false, Err(m)) if m.starts_with("Error::NotHeld") => Ok("Rust: Error::NotHeld".into()),
        (_, r) => Err(format!(
            "{who}'s unlock of the free lock gave {r:?}, expected {}",
            if java {
                "no exception (Redisson's fair unlock treats a missing lock as released)"
            } else {
                "Error::NotHeld"
            }
        )),
    }
}

/// Scenarios 27 and 32: FIFO order across languages.
pub async fn fifo(env: &Env, no: usize, dir: Dir, kind: JavaKind) -> Result<Outcome> {
    let name = env.name(no, dir);
    let key = format!("{name}:turns");
    env.raw.del(&[&key, &format!("{key}:intervals")]).await?;
    let (mut a, _) = env.pair(no, dir, Speed::QuietPoll);
    let fa = a.field(kind, &name).await?;
    a.lock(kind, &name, None).await?;
    let b_java = dir == Dir::RustHolds;
    let (mut recs, mut fields) = (Vec::new(), Vec::new());
    let mut head_ms = 0.0;
    for i in 0..4 {
        let java = (i % 2 == 0) == b_java;
        let p = env.party(no, dir, &format!("w{i}"), java, Speed::QuietPoll);
        let r = Recorder::start(env, &p, kind, &name, &key).await?;
        fields.push(r.field.clone());
        let what = format!("waiter {i} ({}) is queued", r.who);
        let scores = wait_queue(env, &name, &fields, &what).await?;
        head_ms = check_deadlines(&scores, &[FAIR_WAIT_MS; 4][..=i], now_ms(), &what)?;
        recs.push(r);
    }
    for r in &mut recs {
        ensure!(!r.is_done(), "{} got the lock while A holds it", r.who);
    }
    let h = env.raw.hgetall(&name).await?;
    ensure!(
        h == one_field(&fa, "1"),
        "with 4 waiters queued the hash is {h:?}"
    );
    let (_, t_unlock) = a.unlock_ok(kind, &name).await?;
    let order: Vec<String> = recs.iter().map(|r| r.who.clone()).collect();
    let served = served_in_order(env, &key, recs).await?;
    expect_no_queue(env, &name, "after the last waiter's turn").await?;
    let first = served[0].start as f64 / 1000.0 - t_unlock;
    let span = (served[3].end - served[0].start) as f64 / 1000.0;
    let late = late_unlock(&mut a, kind, &name).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "served {} in queue order; deadlines 300 000 ms apart, the head's now + {:.1} s; the first got in {first:.1} ms after A's unlock, 4 holds of {HOLD_MS} ms in {span:.0} ms; A's late unlock: {late}",
            order.join(" → "),
            head_ms / 1000.0
        ),
    })
}

async fn s28(env: &Env, dir: Dir) -> Result<Outcome> {
    let (no, kind) = (28, FAIR);
    let name = env.name(no, dir);
    let key = format!("{name}:turns");
    env.raw.del(&[&key, &format!("{key}:intervals")]).await?;
    let (mut a, mut b) = env.pair(no, dir, Speed::QuietPoll);
    a.lock(kind, &name, None).await?;
    let jt = env.party(no, dir, "t", true, Speed::QuietPoll);
    let rc = env.party(no, dir, "c", false, Speed::QuietPoll);
    let (ft, fc) = (jt.field(kind, &name).await?, rc.field(kind, &name).await?);
    // the leavers: J→R the Java tryLock first, R→J the Rust lock() first
    let (mut fields, mut waits) = (Vec::new(), Vec::new());
    let (mut timing_out, mut cancelled) = (None, None);
    let java_first = dir == Dir::JavaHolds;
    for java in [java_first, !java_first] {
        if java {
            let j = jt.java_lock(kind, &name).ok_or("not a Java party")?;
            timing_out = Some(j.send("tryLock", &[&JAVA_TRY_WAIT_MS.to_string()]).await?);
            fields.push(ft.clone());
            waits.push(JAVA_TRY_WAIT_MS as f64);
        } else {
            cancelled = Some(rc.start_lock(kind, &name).await?);
            fields.push(fc.clone());
            waits.push(FAIR_WAIT_MS);
        }
        wait_queue(env, &name, &fields, "a leaver is queued").await?;
    }
    let (Some(mut timing_out), Some(Waiting::Rust(cancelled))) = (timing_out, cancelled) else {
        return Err("unreachable: both leavers started".into());
    };
    // behind them, one waiter of each language, B's first
    let b_java = dir == Dir::RustHolds;
    let mut recs = Vec::new();
    for i in 0..2 {
        let p = env.party(no, dir, &format!("w{i}"), (i == 0) == b_java, Speed::QuietPoll);
        let r = Recorder::start(env, &p, kind, &name, &key).await?;
        fields.push(r.field.clone());
        waits.push(FAIR_WAIT_MS);
        wait_queue(env, &name, &fields, &format!("{} is queued", r.who)).await?;
        recs.push(r);
    }
    let before = wait_queue(env, &name, &fields, "4 waiters queued").await?;
    check_deadlines(&before, &waits, now_ms(), "4 waiters queued")?;
    // 1. the Rust waiter's task is aborted: its lock() future is dropped
    ensure!(
        !cancelled.is_finished(),
        "the Rust waiter got the lock while A holds it"
    );
    let t0 = Instant::now();
    cancelled.abort();
    let after_cancel: Vec<String> = fields.iter().filter(|f| **f != fc).cloned().collect();
    let s1 = wait_queue(env, &name, &after_cancel, "the cancelled Rust waiter left").await?;
    let cancel_ms = t0.elapsed().as_secs_f64() * 1000.0;
    ensure!(
        !timing_out.is_done(),
        "the Java tryLock({JAVA_TRY_WAIT_MS}) answered before its wait ran out"
    );
    check_give_back(
        &fields,
        &before,
        &s1,
        &fc,
        FAIR_WAIT_MS,
        "the cancelled Rust waiter",
    )?;
    // 2. the Java tryLock's wait runs out: Redisson's acquireFailed
    let r = timing_out
        .wait(Duration::from_millis(JAVA_TRY_WAIT_MS) + Duration::from_secs(10))
        .await?;
    let (started, answered) = (r.start_ms, r.ts_ms);
    ensure!(
        !r.bool()?,
        "the Java tryLock({JAVA_TRY_WAIT_MS}) acquired while A holds"
    );
    let waited = answered - started;
    ensure!(
        waited >= JAVA_TRY_WAIT_MS as f64 - 50.0,
        "the Java tryLock({JAVA_TRY_WAIT_MS}) gave up after {waited} ms"
    );
    let after_timeout: Vec<String> = after_cancel.iter().filter(|f| **f != ft).cloned().collect();
    let s2 = wait_queue(env, &name, &after_timeout, "the timed-out Java waiter left").await?;
    let left_ms = now_ms() - answered;
    check_give_back(
        &after_cancel,
        &s1,
        &s2,
        &ft,
        JAVA_TRY_WAIT_MS as f64,
        "the timed-out Java waiter",
    )?;
    // 3. A's unlock wakes the new head at once; the other follows
    let (_, t_unlock) = a.unlock_ok(kind, &name).await?;
    let order: Vec<String> = recs.iter().map(|r| r.who.clone()).collect();
    let served = served_in_order(env, &key, recs).await?;
    let first = served[0].start as f64 / 1000.0 - t_unlock;
    ensure!(
        first <= WAKE_BOUND_MS,
        "the new head got in {first:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms): held up by a waiter that left?"
    );
    expect_no_queue(env, &name, "after the last waiter's turn").await?;
    // 4. a waiter that died without leaving (a field at the head whose deadline is 60 s ahead):
    // the lock is free, yet nobody else may take it; once its deadline has passed, the next
    // attempt purges it and gets in
    let ghost = format!("compat-crashed-waiter-{}:1", std::process::id());
    let (q, d) = (fair_queue(&name), fair_deadlines(&name));
    env.raw.q::<i64>(redis::cmd("RPUSH").arg(&q).arg(&ghost)).await?;
    env.raw
        .q::<i64>(
            redis::cmd("ZADD")
                .arg(&d)
                .arg(now_ms() as i64 + 60_000)
                .arg(&ghost),
        )
        .await?;
    for p in [&mut a, &mut b] {
        ensure!(
            !p.try_lock(kind, &name).await?,
            "{}'s try_lock() took the free lock past the head of the queue (a crashed waiter whose deadline is 60 s ahead)",
            p.desc()
        );
    }
    wait_queue(
        env,
        &name,
        std::slice::from_ref(&ghost),
        "the refused try_lock() calls queued nothing",
    )
    .await?;
    env.raw
        .q::<i64>(redis::cmd("ZADD").arg(&d).arg(now_ms() as i64 - 1).arg(&ghost))
        .await?;
    ensure!(
        b.try_lock(kind, &name).await?,
        "{}'s try_lock() did not get past the crashed waiter whose deadline has passed",
        b.desc()
    );
    expect_no_queue(env, &name, "after the stale head was purged").await?;
    b.unlock_ok(kind, &name).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "Rust waiter left {cancel_ms:.0} ms after its task was aborted (those behind −300 000 ms); Java tryLock({JAVA_TRY_WAIT_MS}) answered false after {waited:.0} ms and was gone {left_ms:.0} ms later (those behind −{JAVA_TRY_WAIT_MS} ms); then {} served, the first {first:.1} ms after A's unlock; a crashed head (deadline +60 s) made the free lock refuse both languages' try_lock(), and once past its deadline {} purged it and got in",
            order.join(" → "),
            b.desc()
        ),
    })
}

/// Scenarios 29 and 33: A's unlock wakes only B (the head), on B's own channel; B's unlock wakes
/// C (A's language); C's unlock, with nobody queued, publishes nothing.
pub async fn head_wake(env: &Env, no: usize, dir: Dir, kind: JavaKind) -> Result<Outcome> {
    let name = env.name(no, dir);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    let (mut a, mut b) = env.pair(no, dir, Speed::QuietPoll);
    let mut c = env.party(no, dir, "c", dir == Dir::JavaHolds, Speed::QuietPoll);
    let (fb, fc) = (b.field(kind, &name).await?, c.field(kind, &name).await?);
    a.lock(kind, &name, None).await?;
    let wb = b.start_lock(kind, &name).await?;
    wait_queue(env, &name, std::slice::from_ref(&fb), "B is queued").await?;
    let mut wc = c.start_lock(kind, &name).await?;
    wait_queue(env, &name, &[fb.clone(), fc.clone()], "C is queued behind B").await?;
    let (chb, chc) = (fair_channel(&name, &fb), fair_channel(&name, &fc));
    until(
        Duration::from_secs(10),
        "B and C listen on their own channels",
        || async { Ok(env.raw.numsub(&chb).await? >= 1 && env.raw.numsub(&chc).await? >= 1) },
    )
    .await?;
    let base = channel_of(&name);
    let on_base = env.raw.numsub(&base).await?;
    ensure!(
        on_base == 0,
        "{on_base} subscriber(s) on the base channel {base}: fair waiters listen on their own"
    );
    ensure!(
        watch.seen().is_empty(),
        "messages before A's unlock: {:?}",
        watch.seen()
    );
    let (u_start, t_unlock) = a.unlock_ok(kind, &name).await?;
    let (t_b, started) = b.finish(kind, &name, wb, Duration::from_secs(15)).await?;
    if let Some(s) = started {
        ensure!(s <= u_start, "B's lock started after A's unlock");
    }
    let lat_b = t_b - t_unlock;
    ensure!(
        lat_b <= WAKE_BOUND_MS,
        "B (the head) got in {lat_b:.1} ms after A's unlock (bound {WAKE_BOUND_MS} ms; Rust polls every 10 s, Java waits its expected time): not woken by a message?"
    );
    let seen = watch.wait_for(1, Duration::from_secs(2)).await?;
    ensure!(
        seen.len() == 1 && seen[0].1 == chb && seen[0].2 == "0",
        "A's unlock published {seen:?}, expected exactly one `0` on B's channel {chb}"
    );
    ensure!(!wc.is_done(), "C got the lock while B holds it");
    wait_queue(
        env,
        &name,
        std::slice::from_ref(&fc),
        "B left the queue, C is the head",
    )
    .await?;
    let h = env.raw.hgetall(&name).await?;
    ensure!(h == one_field(&fb, "1"), "B holds, but the hash is {h:?}");
    let (_, t_unlock_b) = b.unlock_ok(kind, &name).await?;
    let (t_c, _) = c.finish(kind, &name, wc, Duration::from_secs(15)).await?;
    let lat_c = t_c - t_unlock_b;
    ensure!(
        lat_c <= WAKE_BOUND_MS,
        "C got in {lat_c:.1} ms after B's unlock (bound {WAKE_BOUND_MS} ms): not woken by a message?"
    );
    let seen = watch.wait_for(2, Duration::from_secs(2)).await?;
    ensure!(
        seen.len() == 2 && seen[1].1 == chc && seen[1].2 == "0",
        "B's unlock published {:?}, expected exactly one `0` on C's channel {chc}",
        &seen[1..]
    );
    expect_no_queue(env, &name, "C holds, nobody waits").await?;
    c.unlock_ok(kind, &name).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = watch.seen();
    ensure!(
        seen.len() == 2,
        "C's unlock with nobody queued published {:?}",
        &seen[2..]
    );
    drop(watch);
    Ok(Outcome {
        latency_ms: Some(lat_b),
        note: format!(
            "A→B {lat_b:.1} ms ({:.1} ms after the unlock call started) on B's own channel; B→C {lat_c:.1} ms on C's; exactly one `0` per unlock with a waiter, none on {base}, none from C's unlock (nobody queued); B waited in {}lock() of {}",
            t_b - u_start,
            word(kind),
            if matches!(b.lang, Lang::Java { .. }) { "Java" } else { "Rust (poll_interval 10 s)" }
        ),
    })
}

/// Scenarios 30 and 34: the mixed-language counter on a fair lock; afterwards no queue is left.
pub async fn counter(
    env: &Env,
    no: usize,
    dir: Dir,
    kind: JavaKind,
    tasks: (usize, usize, usize),
) -> Result<Outcome> {
    let name = env.name(no, dir);
    let run = mixed_counter(env, no, dir, kind, &name, tasks, 0).await?;
    expect_no_queue(env, &name, "after the counter").await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!("{}; no queue left", run.summary()),
    })
}
