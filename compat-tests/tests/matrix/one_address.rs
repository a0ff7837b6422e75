//! Scenarios 59–62: **a cluster behind one address** (a cluster proxy or a serverless endpoint:
//! one address that looks like one server but refuses a script or multi-key command whose keys
//! hash to different slots, `CROSSSLOT`), with Redisson in **single-server mode**
//! (`useSingleServer().setAddress(url)`, the harness' `--url`) and the Rust client on the same
//! plain URL. Stood in for by one cluster-enabled redis-server that owns all 16384 slots
//! (`common::cluster::one_address`); [`check_endpoint`] proves it refuses a script over two slots
//! before anything runs. Both sides use the watchdog [`ONE_WATCHDOG_MS`] (renewal rounds every
//! second), and every name of a scenario is in a slot of its own, so any call that carries several
//! holds at once (a renewal round) spans slots.
//!
//! * 59 RLock: A holds 5 names in 5 slots (watchdog mode): the hashes and TTLs are A's, B's
//!   `try_lock` is refused on each; B blocks in `lock()` on one of them (subscribed) and A's
//!   unlock gets it in within [`ONE_WAKE_BOUND_MS`]. The hold is shorter than the watchdog
//!   timeout (no renewal needed), so it runs on every version;
//! * 60 the same with the fair lock (B, queued, woken on its own channel);
//! * 61 **renewal across slots**: A holds 5 RLocks and 5 fair locks (10 slots) for [`HOLD`], more
//!   than two watchdog timeouts, so each key had to be renewed at least twice (one renewal extends
//!   a key by at most the timeout); every [`SAMPLE`] the 10 TTLs are read (each must stay > 0 with
//!   A's field in the hash, and go back up at least twice: the renewals seen) and, every other
//!   sample, B's `try_lock` on all 10 must be refused, while a B waiter blocks in `lock()` on the
//!   first. Then A's own view (Rust guards `Held`, Java `isHeldByThread`), A's 10 unlocks must
//!   succeed and the waiter gets in within the bound. **J→R is n/a** where Redisson's own watchdog
//!   fails on this endpoint, decided by what was measured: no key of A's ever went back up, the
//!   first sign of loss came no sooner than the lease after A's first lock, and Redisson logged
//!   its renewal of these locks refused `CROSSSLOT`; the row reports the first sign and what
//!   Redisson answered. A Java hold lost any other way, or any Rust hold lost, fails the row;
//! * 62 semaphore: A takes the only permit, B blocks in `acquire()` (subscribed to
//!   `redisson_sc:{N}`), A's `release()` gets it in within the bound.
//!
//! The waiters' fallbacks are far from the bound: a Rust waiter re-polls only every 10 s
//! (`poll_interval`) or at the holder's TTL, a Redisson lock waiter at the holder's TTL (2–3 s,
//! from an attempt made just before the unlock in 59/60), a Redisson semaphore waiter never.
//! Every scenario ends by checking that no key or channel of its names is left.

use std::time::{Duration, Instant};

use redisson_lock::LeaseState;
use redisson_lock_compat_tests::{JavaKind, Result};

use crate::env::{Env, Speed};
use crate::kinds::{Dir, Outcome, Scenario, Verdict, BOTH_WAYS};
use crate::party::{Lang, Party, FAIR, LOCK};
use crate::semaphore::sem_channel;
use crate::semaphore_party::Sem;
use crate::support::{channel_of, fair_channel, fair_deadlines, fair_queue, one_field, until, Raw, CMD};

/// The watchdog timeout of both sides (renewal every third of it).
pub const ONE_WATCHDOG_MS: u64 = 3000;
/// From A's unlock (or release) reply to B's acquisition.
pub const ONE_WAKE_BOUND_MS: f64 = 500.0;
/// Names (one slot each) per kind held at once.
const NAMES: usize = 5;
/// Scenario 61: how long A holds after its last acquisition (more than two watchdog timeouts).
const HOLD: Duration = Duration::from_millis(2 * ONE_WATCHDOG_MS + 500);
/// Scenario 61: how often the TTLs are read (B's `try_lock`s: every other time).
const SAMPLE: Duration = Duration::from_millis(250);
/// A TTL read this much above the previous one was renewed in between.
const RISE_MS: i64 = 100;

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
    sc(59, "One address: A holds 5 RLocks in 5 slots: B's try_lock refused on each; B blocked in lock() woken by A's unlock within 500 ms"),
    sc(60, "One address: fair lock, as 59: A holds 5 in 5 slots, B refused on each; B (queued, on its own channel) woken by A's unlock within 500 ms"),
    sc(61, "One address, watchdog 3 s on both sides: A holds 5 RLocks + 5 fair locks in 10 slots for 6.5 s (> 2 timeouts): every TTL renewed ≥ 2 times and B refused throughout (try_lock every 0.5 s, a blocked lock()); A's 10 unlocks succeed, the waiter gets in within 500 ms; n/a where Redisson's own renewal fails here"),
    sc(62, "One address: semaphore: A takes the only permit; B blocked in acquire() is woken by A's release within 500 ms"),
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Verdict> {
    match no {
        59 => hold_and_wake(env, no, dir, LOCK).await,
        60 => hold_and_wake(env, no, dir, FAIR).await,
        61 => renewals(env, dir).await,
        62 => semaphore_wake(env, dir).await,
        _ => Err(format!("no one-address scenario {no}")),
    }
}

/// The hash slot of `key` (`CLUSTER KEYSLOT`: the endpoint's own answer).
async fn slot(raw: &Raw, key: &str) -> Result<i64> {
    raw.q(redis::cmd("CLUSTER").arg("KEYSLOT").arg(key)).await
}

/// Checks that the server at `raw` refuses a script over two keys of different slots
/// (`CROSSSLOT`), as a cluster behind one address does and a plain server does not.
pub async fn check_endpoint(raw: &Raw) -> Result<()> {
    let keys = ["compat:one-address:probe:a", "compat:one-address:probe:b"];
    let slots = (slot(raw, keys[0]).await?, slot(raw, keys[1]).await?);
    ensure!(slots.0 != slots.1, "probe keys {keys:?} share slot {}", slots.0);
    let answer = raw
        .q::<redis::Value>(redis::cmd("EVAL").arg("return 0").arg(2).arg(&keys[..]))
        .await;
    match answer {
        // redis-rs shows the CROSSSLOT code as `CrossSlot`
        Err(e) if e.to_ascii_uppercase().contains("CROSSSLOT") => Ok(()),
        other => Err(format!(
            "not a cluster behind one address: EVAL over {keys:?} (slots {slots:?}) answered {other:?}, expected CROSSSLOT"
        )),
    }
}

/// Names `<scenario name>:<tag><i>` in `n` slots none of which is in `taken` (which gets them).
async fn slot_names(
    env: &Env,
    no: usize,
    dir: Dir,
    tag: &str,
    n: usize,
    taken: &mut Vec<i64>,
) -> Result<Vec<String>> {
    let base = env.name(no, dir);
    let mut names = Vec::new();
    for i in 0..1000 {
        if names.len() == n {
            break;
        }
        let name = format!("{base}:{tag}{i}");
        let s = slot(&env.raw, &name).await?;
        if !taken.contains(&s) {
            taken.push(s);
            names.push(name);
        }
    }
    ensure!(
        names.len() == n,
        "found only {} names in distinct slots",
        names.len()
    );
    Ok(names)
}

/// Waits until nothing of `names` is left: no lock hash, fair queue or deadline set, no
/// channel with a subscriber. (One `EXISTS` per name: its three keys share its slot, and the
/// endpoint refuses a command over several slots.)
async fn nothing_left(env: &Env, names: &[String]) -> Result<()> {
    for n in names {
        let keys = [n.clone(), fair_queue(n), fair_deadlines(n)];
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        until(
            Duration::from_secs(5),
            "no lock, queue or deadline key is left",
            || async { Ok(env.raw.exists(&keys).await? == 0) },
        )
        .await
        .map_err(|e| format!("{e}: {}", keys.join(" ")))?;
    }
    let ours = || async {
        let channels = env.raw.channels().await?;
        Ok::<_, String>(
            channels
                .into_iter()
                .filter(|c| names.iter().any(|n| c.contains(&format!("{{{n}}}"))))
                .collect::<Vec<_>>(),
        )
    };
    let r = until(
        Duration::from_secs(5),
        "no channel of these names has a subscriber",
        || async { Ok(ours().await?.is_empty()) },
    )
    .await;
    if r.is_err() {
        return Err(format!("channels still subscribed: {:?}", ours().await?));
    }
    Ok(())
}

/// Waits until B waits on `name`: subscribed to the lock's channel (RLock), or queued and
/// subscribed to its own channel (fair lock, `fb` = B's field). Returns the channel.
async fn wait_waiting(env: &Env, kind: JavaKind, name: &str, fb: &str) -> Result<String> {
    let ch = if kind == FAIR {
        let queue = fair_queue(name);
        until(Duration::from_secs(10), "B is queued", || async {
            Ok(env.raw.lrange(&queue).await? == [fb.to_owned()])
        })
        .await?;
        fair_channel(name, fb)
    } else {
        channel_of(name)
    };
    until(Duration::from_secs(10), &format!("B listens on {ch}"), || async {
        Ok(env.raw.numsub(&ch).await? >= 1)
    })
    .await?;
    Ok(ch)
}

/// Scenarios 59 (RLock) and 60 (fair lock).
async fn hold_and_wake(env: &Env, no: usize, dir: Dir, kind: JavaKind) -> Result<Verdict> {
    let names = slot_names(env, no, dir, "", NAMES, &mut Vec::new()).await?;
    let (mut a, mut b) = env.pair(no, dir, Speed::Normal);
    let (fa, fb) = (a.field(kind, &names[0]).await?, b.field(kind, &names[0]).await?);
    for n in &names {
        a.lock(kind, n, None).await?;
    }
    for n in &names {
        let h = env.raw.hgetall(n).await?;
        ensure!(
            h == one_field(&fa, "1"),
            "after A's lock({n}) the hash is {h:?}, expected {{{fa}: 1}}"
        );
        let ttl = env.raw.pttl(n).await?;
        ensure!(
            ttl > 0 && ttl <= ONE_WATCHDOG_MS as i64,
            "PTTL {n} = {ttl} after A's lock, expected 0 < PTTL <= {ONE_WATCHDOG_MS} (watchdog mode)"
        );
        ensure!(
            !b.try_lock(kind, n).await?,
            "B ({}) acquired {n} with try_lock while A holds it",
            b.desc()
        );
    }
    if kind == FAIR {
        for n in &names {
            let left = env.raw.exists(&[&fair_queue(n), &fair_deadlines(n)]).await?;
            ensure!(
                left == 0,
                "B's refused try_lock of fair lock {n} queued something"
            );
        }
    }
    let target = &names[0];
    let mut w = b.start_lock(kind, target).await?;
    let ch = wait_waiting(env, kind, target, &fb).await?;
    ensure!(!w.is_done(), "B acquired {target} while A holds it");
    let (u_start, t_unlock) = a.unlock_ok(kind, target).await?;
    let (t_acq, _) = b.finish(kind, target, w, Duration::from_secs(10)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= ONE_WAKE_BOUND_MS,
        "B acquired {target} {lat:.1} ms after A's unlock (bound {ONE_WAKE_BOUND_MS} ms): not woken by the unlock message"
    );
    let h = env.raw.hgetall(target).await?;
    ensure!(
        h == one_field(&fb, "1"),
        "after the hand-over {target} is {h:?}, expected {{{fb}: 1}}"
    );
    for n in &names[1..] {
        let h = env.raw.hgetall(n).await?;
        ensure!(
            h == one_field(&fa, "1"),
            "A's hold of {n} is {h:?} after the hand-over of {target}"
        );
        a.unlock_ok(kind, n).await?;
    }
    b.unlock_ok(kind, target).await?;
    nothing_left(env, &names).await?;
    Ok(Verdict::Pass(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "A held {NAMES} names in {NAMES} slots, B's try_lock refused on each; B woken on {ch} {lat:.1} ms after A's unlock ({:.1} ms after the call started)",
            t_acq - u_start
        ),
    }))
}

/// What A holds in scenario 61: (kind, name).
type Held = Vec<(JavaKind, String)>;

/// Scenario 61: A's holds across 10 slots through more than two watchdog timeouts.
async fn renewals(env: &Env, dir: Dir) -> Result<Verdict> {
    const NO: usize = 61;
    let mut taken = Vec::new();
    let locks = slot_names(env, NO, dir, "lock", NAMES, &mut taken).await?;
    let fairs = slot_names(env, NO, dir, "fair", NAMES, &mut taken).await?;
    let held: Held = locks
        .iter()
        .map(|n| (LOCK, n.clone()))
        .chain(fairs.iter().map(|n| (FAIR, n.clone())))
        .collect();
    let names: Vec<String> = held.iter().map(|(_, n)| n.clone()).collect();
    // A holds; B waits in lock() on the first name; C (B's language) tries every name
    let (mut a, mut b) = env.pair(NO, dir, Speed::Normal);
    let mut c = env.party(NO, dir, "c", dir == Dir::RustHolds, Speed::Normal);
    let fa = a.field(LOCK, &names[0]).await?;
    let target = names[0].clone();
    let t_first = Instant::now();
    for (kind, n) in &held {
        a.lock(*kind, n, None).await?;
    }
    let t_held = Instant::now();
    for n in &names {
        let h = env.raw.hgetall(n).await?;
        ensure!(
            h == one_field(&fa, "1"),
            "after A's lock({n}) the hash is {h:?}, expected {{{fa}: 1}}"
        );
    }
    let mut w = b.start_lock(LOCK, &target).await?;
    wait_waiting(env, LOCK, &target, "").await?;

    let mut last: Vec<i64> = Vec::new();
    for n in &names {
        last.push(env.raw.pttl(n).await?);
    }
    let mut rises = vec![0usize; names.len()];
    let (mut min_ttl, mut refusals, mut round) = (i64::MAX, 0usize, 0usize);
    // the first sign that A's holds were not kept (and when, in s after A's first lock), and
    // what C acquired meanwhile
    let mut breach: Option<(String, f64)> = None;
    let mut got: Held = Vec::new();
    let since = |t: Instant| t.elapsed().as_secs_f64();
    while breach.is_none() && t_held.elapsed() < HOLD {
        // the hold itself is the phenomenon: it lasts HOLD whatever happens
        tokio::time::sleep(SAMPLE).await;
        round += 1;
        for (i, n) in names.iter().enumerate() {
            // the TTL, then whether it was A's (a key that expired may be B's by now)
            let ttl = env.raw.pttl(n).await?;
            let owner = env.raw.hget(n, &fa).await?;
            if ttl <= 0 || owner.is_none() {
                breach.get_or_insert((
                    format!("{n} was no longer A's (PTTL {ttl}, A's field {owner:?})"),
                    since(t_first),
                ));
                continue;
            }
            if ttl > last[i] + RISE_MS {
                rises[i] += 1;
            }
            last[i] = ttl;
            min_ttl = min_ttl.min(ttl);
        }
        if round % 2 == 0 {
            for (kind, n) in &held {
                if c.try_lock(*kind, n).await? {
                    got.push((*kind, n.clone()));
                    breach.get_or_insert((format!("B's try_lock acquired {n}"), since(t_first)));
                } else {
                    refusals += 1;
                }
            }
        }
        if w.is_done() {
            breach.get_or_insert((format!("B's blocked lock({target}) returned"), since(t_first)));
        }
    }
    if breach.is_none() {
        if let Some(i) = (0..names.len()).find(|&i| rises[i] < 2) {
            breach = Some((
                format!(
                    "{}'s TTL went back up only {} time(s) in {:.1} s after A's last lock (renewals seen per key: {rises:?})",
                    names[i],
                    rises[i],
                    since(t_held)
                ),
                since(t_first),
            ));
        }
    }
    if let Some((what, at)) = breach {
        // what a watchdog whose renewals all fail looks like: no key ever went back up, and the
        // first sign came no earlier than the lease after A's first lock (a key deleted or a
        // hold broken sooner is something else)
        let unrenewed = rises.iter().all(|&r| r == 0);
        let expired = unrenewed && at * 1000.0 >= ONE_WATCHDOG_MS as f64 - 50.0;
        let what = if unrenewed {
            format!("{what} {at:.1} s after A's first lock, no TTL seen going back up")
        } else {
            format!("{what} {at:.1} s after A's first lock (renewals seen per key: {rises:?})")
        };
        return lost_holds(env, &mut a, &mut b, &mut c, w, &held, got, what, expired).await;
    }

    // past two watchdog timeouts: A's hashes, B refused once more, A's own view
    for (kind, n) in &held {
        let h = env.raw.hgetall(n).await?;
        ensure!(
            h == one_field(&fa, "1"),
            "after the hold {n} is {h:?}, expected {{{fa}: 1}}"
        );
        ensure!(
            !c.try_lock(*kind, n).await?,
            "B's try_lock acquired {n} after the hold"
        );
        if matches!(a.lang, Lang::Rust { .. }) {
            let g = a
                .take_guard(*kind, n)
                .ok_or_else(|| format!("no Rust guard of {n}"))?;
            let state = g.state();
            a.push_guard(n, *kind, g);
            ensure!(
                state == LeaseState::Held,
                "A's Rust guard of {n} is {state:?} after the hold"
            );
        } else {
            ensure!(
                a.is_held(*kind, n).await?,
                "Java A's isHeldByThread({n}) is false after the hold"
            );
        }
    }
    let renewing = env.rust.stats().renewing;
    ensure!(!w.is_done(), "B's blocked lock({target}) returned while A holds");
    let held_s = since(t_held);
    let (u_start, t_unlock) = a.unlock_ok(LOCK, &target).await?;
    let (t_acq, _) = b.finish(LOCK, &target, w, Duration::from_secs(10)).await?;
    let lat = t_acq - t_unlock;
    ensure!(
        lat <= ONE_WAKE_BOUND_MS,
        "B's lock({target}) got in {lat:.1} ms after A's unlock (bound {ONE_WAKE_BOUND_MS} ms): not woken by the unlock message"
    );
    for (kind, n) in &held[1..] {
        a.unlock_ok(*kind, n).await?;
    }
    b.unlock_ok(LOCK, &target).await?;
    nothing_left(env, &names).await?;
    let mut slots = taken.clone();
    slots.sort_unstable();
    Ok(Verdict::Pass(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "A ({}) held 10 names (slots {slots:?}) {held_s:.1} s after its last lock; TTL renewals seen per key {}–{}, lowest TTL {min_ttl} ms; B's try_lock refused {refusals} times; {}; A's 10 unlocks succeeded; B's waiter in {lat:.1} ms ({:.1} ms after the unlock call started)",
            lang(&a),
            rises.iter().min().copied().unwrap_or(0),
            rises.iter().max().copied().unwrap_or(0),
            if lang(&a) == "Rust" {
                format!("the Rust watchdog was renewing {renewing} holds")
            } else {
                "Java's isHeldByThread true for all".to_owned()
            },
            t_acq - u_start
        ),
    }))
}

fn lang(p: &Party<'_>) -> &'static str {
    match p.lang {
        Lang::Java { .. } => "Java",
        Lang::Rust { .. } => "Rust",
    }
}

/// Scenario 61 when A's holds were not kept (`what`): releases what B and C got and what A
/// still has, then decides. A Java holder whose holds `expired` unrenewed (no TTL went back up,
/// and they went no sooner than the lease) while its Redisson logged the renewal of these locks
/// as refused `CROSSSLOT` makes the row n/a, with the measurements; anything else fails it.
#[allow(clippy::too_many_arguments)]
async fn lost_holds(
    env: &Env,
    a: &mut Party<'_>,
    b: &mut Party<'_>,
    c: &mut Party<'_>,
    w: crate::party::Waiting,
    held: &Held,
    got: Held,
    what: String,
    expired: bool,
) -> Result<Verdict> {
    let target = &held[0].1;
    for (kind, n) in &got {
        c.unlock_ok(*kind, n).await?;
    }
    // A's unlocks: the lost ones are "not held" (Redisson's fair unlock of a free lock returns
    // normally: README, "What real Redisson does")
    let mut not_held = Vec::new();
    let mut returned = Vec::new();
    for (kind, n) in held {
        match a.unlock(*kind, n).await {
            Ok(Ok(_)) => returned.push(if *kind == FAIR { "fair" } else { "plain" }),
            Ok(Err(e)) | Err(e) => not_held.push(format!("{n}: {e}")),
        }
    }
    // the waiter gets in once A's hold of the target is gone (expired or released)
    b.finish(LOCK, target, w, Duration::from_secs(10)).await?;
    b.unlock_ok(LOCK, target).await?;
    let names: Vec<String> = held.iter().map(|(_, n)| n.clone()).collect();
    nothing_left(env, &names).await?;
    let fair_returned = returned.iter().filter(|k| **k == "fair").count();
    let after = match not_held.first() {
        None => "A's 10 unlocks all returned".to_owned(),
        Some(first) => format!(
            "then {} of A's 10 unlocks were refused (first: {first}); {} returned ({fair_returned} of them fair)",
            not_held.len(),
            returned.len()
        ),
    };
    let refused = match a.lang {
        Lang::Java { .. } => renewal_refused(
            &env.java.stderr_matching("Can't update lock"),
            &env.java.stderr_matching("CROSSSLOT"),
            &names,
        ),
        Lang::Rust { .. } => None,
    };
    match refused {
        Some(why) if expired => Ok(Verdict::NotAvailable(format!(
            "Redisson {}'s own watchdog fails on this endpoint: {what}; {why}; {after}",
            env.version
        ))),
        Some(why) => Err(format!(
            "A's holds were not kept: {what}; {after}; Redisson logged {why}, but the holds did not simply run out unrenewed"
        )),
        None => Err(format!("A's holds were not kept: {what}; {after}")),
    }
}

/// What Redisson logged about its renewal of `names` (`renewal`: its "Can't update lock…" lines,
/// `refused`: its lines with `CROSSSLOT`), when both say the renewal was refused for spanning
/// slots: how often, the command and how many keys it carried.
pub fn renewal_refused(renewal: &[String], refused: &[String], names: &[String]) -> Option<String> {
    let ours: Vec<&String> = renewal
        .iter()
        .filter(|l| names.iter().any(|n| l.contains(n.as_str())))
        .collect();
    let first = ours.first()?;
    let answer = refused.iter().find(|l| l.contains("CROSSSLOT"))?;
    let logged = first.find("ERROR").map(|i| &first[i..]).unwrap_or(first.as_str());
    let logged = crate::support::short(logged, 120);
    let text = &answer[answer.find("CROSSSLOT")?..];
    let message = text.split(". channel:").next().unwrap_or(text);
    let command = text
        .find("command: (")
        .and_then(|i| text[i + 10..].split([',', ')']).next())
        .unwrap_or("?");
    let keys = text
        .find("params: [")
        .and_then(|i| text[i + 9..].split(", ").nth(1))
        .unwrap_or("?");
    Some(format!(
        "its renewal ({command} over {keys} keys) was answered `{message}` ({} such log line(s) for these locks: `{logged}`)",
        ours.len()
    ))
}

/// Scenario 62: a permit released by A wakes B's `acquire()`.
async fn semaphore_wake(env: &Env, dir: Dir) -> Result<Verdict> {
    let name = env.name(62, dir);
    let (a, b) = env.pair(62, dir, Speed::Normal);
    let (sa, sb) = (Sem::of(&a, &name)?, Sem::of(&b, &name)?);
    ensure!(
        sa.try_set_permits(1, None).await?,
        "{}'s trySetPermits(1) on a new semaphore answered false",
        sa.lang()
    );
    ensure!(sa.try_acquire(1).await?, "A could not take the only permit");
    let count = env.raw.get(&name).await?;
    ensure!(
        count.as_deref() == Some("0"),
        "{name} = {count:?} after A took the only permit"
    );
    ensure!(
        !sb.try_acquire(1).await?,
        "B took a permit while A has the only one"
    );
    let mut w = sb.start_acquire(1).await?;
    let ch = sem_channel(&name);
    until(Duration::from_secs(10), &format!("B listens on {ch}"), || async {
        Ok(env.raw.numsub(&ch).await? >= 1)
    })
    .await?;
    ensure!(!w.is_done(), "B's acquire() returned while no permit was free");
    let t_release = sa.release(1).await?;
    let t_acq = w.finish(Duration::from_secs(10)).await?;
    let lat = t_acq - t_release;
    ensure!(
        lat <= ONE_WAKE_BOUND_MS,
        "B's acquire() returned {lat:.1} ms after A's release (bound {ONE_WAKE_BOUND_MS} ms): not woken by the release message"
    );
    let count = env.raw.get(&name).await?;
    ensure!(
        count.as_deref() == Some("0"),
        "{name} = {count:?} after B took the permit"
    );
    sb.release(1).await?;
    let avail = sa.available().await?;
    ensure!(
        avail == 1,
        "A sees {avail} permits after B gave the permit back, expected 1"
    );
    ensure!(sa.delete().await?, "A's delete of {name} answered false");
    nothing_left(env, std::slice::from_ref(&name)).await?;
    Ok(Verdict::Pass(Outcome {
        latency_ms: Some(lat),
        note: format!(
            "{} acquire() woken on {ch} {lat:.1} ms after {}'s release",
            sb.lang(),
            sa.lang()
        ),
    }))
}

/// A first lock and unlock (plain and fair) on the harness, so that the scenarios do not pay
/// for the JVM's first calls (in 59 and 60 a Java hold must fit in one watchdog timeout).
pub async fn warm_up(env: &Env) -> Result<()> {
    let name = format!("compat:{}:one-address:warm-up", env.version);
    for cmd in ["lock", "unlock", "fairLock", "fairUnlock"] {
        env.java.call("warm", cmd, &[&name], CMD).await?.into_ok()?;
    }
    Ok(())
}
