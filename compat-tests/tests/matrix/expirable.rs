//! Permit-expirable semaphore scenarios 53–57 (`getPermitExpirableSemaphore` /
//! `Client::permit_expirable_semaphore`, every Redisson version of the matrix; 54 needs the
//! multi-permit calls, 3.23.4+, else n/a): the kind's table, 53 and 54 here; the leases and
//! wake-ups (55–57) in [`crate::expirable_lease`], which uses the helpers of this module
//! ([`state`], [`about`]); both languages' wrapper [`Pes`] is in [`crate::expirable_party`].
//! Permits are taken under ids (Redisson's strings of 32 hex digits, the crate's `PermitId`),
//! and an id taken in one language is given back in the other. A is the side that sets the
//! permits up and takes first, B the other language; J→R = Java is A, R→J = Rust is A.
//!
//! Redis state: the available permits are a decimal string at N; every held permit is a member
//! of the zset `{N}:timeout`, its 16 raw id bytes, scored with the epoch ms its lease ends
//! ([`NO_LEASE`] = taken without one). The channel is `redisson_sc:{N}` (as the plain
//! semaphore's): a release publishes the new total, a multi-permit release the number given
//! back, and a reclaim of ended leases (by any later call) the new total.
//! Calls that some versions lack are compared only where Java has them: `getLeaseTime` (3.41.0+),
//! `getPermits` / `acquiredPermits` (3.19.1+); the raw zset scores are checked in every version.
//!
//! Waiters: Java `acquire()` on a worker of its own (Redisson tries again when a message arrives
//! or, told when the earliest lease ends, at that time); Rust `acquire()` in a task on the quiet
//! client (10 s poll, 30 s once subscribed; it too tries again when the earliest lease ends).

use redisson_lock_compat_tests::{now_ms, Result};

use crate::env::{Env, Speed};
use crate::expirable_lease;
use crate::expirable_party::Pes;
use crate::kinds::{Dir, Needs, Outcome, Scenario, BOTH_WAYS};
use crate::semaphore::expect_sem_messages;
use crate::support::Watch;

/// The score of a permit taken without a lease (Redisson's).
pub(crate) const NO_LEASE: i64 = 922_337_203_685_477;
/// How far a lease read back may be below what was set (the time the calls in between took).
const LEASE_SLACK_MS: i64 = 2000;
/// Scenario 54: the first Redisson version that gives back a list of permit ids all or none (a
/// list with an id not held gives back nothing), as the crate does: 3.41.0 added the check to
/// `tryRelease(ids)`. Before it (3.23.4-3.40.x) the script removes the ids it finds and ignores
/// the rest. Run at 3.40.2 (the ids it knows), 3.41.0 and 3.45.1 (all or none).
const ALL_OR_NONE_SINCE: &str = "3.41.0";

pub(crate) const fn sc(no: usize, title: &'static str) -> Scenario {
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
    sc(53, "Permit ids across languages: A's trySetPermits(2); A acquires with a 10 s lease: the id is 32 lowercase hex, {N}:timeout holds exactly its 16 raw bytes scored now + 10 s, N = \"1\"; both sides read the lease (~10 s; Java getLeaseTime 3.41+), available 1, acquired 1 and permits 2 (Java 3.19.1+); B's updateLeaseTime(20 s) moves the score and A sees ~20 s; B acquires without a lease (score 922337203685477, Java getLeaseTime −1, Rust Unlimited); A gives it a 30 s lease, then none again, B sees both; B's tryAcquire() gets nothing; B releases A's id by its string; around B's held permit A's addPermits(2) (message: the delta 2), B's addPermits(-1) (no message) and setPermits(5) (Java's where it has it, 3.23.4+, else Rust's; N = \"4\", message 5); A's second release of its id is refused (Java throws, Rust NotHeld) and both tryRelease false; A releases B's id (N = \"5\"); channel 2, 1, 2, 5, 5"),
    Scenario {
        needs: Some(Needs {
            since: "3.23.4",
            what: "RPermitExpirableSemaphore.acquire(int, long, TimeUnit) / tryRelease(List)",
        }),
        ..sc(54, "Permit ids, several at once: A's trySetPermits(3); A's acquire(2, 10 s lease) gives 2 ids (2 zset members); B's tryRelease(A's 2 ids) gives back 2 (N = \"3\", zset gone, message 2: the number given back); B's tryAcquire(3, wait 0, no lease) gives 3 ids scored 922337203685477, A's tryAcquire() gets nothing; A's tryRelease([B's first id, an unknown id]) gives back 0 and changes nothing (all or none: Rust, Redisson 3.41.0+) or the known one (Redisson 3.23.4-3.40.x: message 1), A's release(that list) is refused; A's release(the rest of B's ids) gives them back, a second time refused; channel 3, 2, [1,] 3 or 2")
    },
    expirable_lease::S55,
    expirable_lease::S56,
    expirable_lease::S57,
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        53 => s53(env, dir).await,
        54 => s54(env, dir).await,
        55 => expirable_lease::s55(env, dir).await,
        56 => expirable_lease::s56(env, dir).await,
        57 => expirable_lease::s57(env, dir).await,
        _ => Err(format!("no permit-expirable semaphore scenario {no}")),
    }
}

/// The leases' zset of semaphore N: `{N}:timeout`.
pub fn leases_key(name: &str) -> String {
    format!("{{{name}}}:timeout")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The zset `{N}:timeout`, lowest score first: (the member's bytes in hex, score).
async fn raw_leases(env: &Env, name: &str) -> Result<Vec<(String, i64)>> {
    let key = leases_key(name);
    let v: Vec<(Vec<u8>, String)> = env
        .raw
        .q(redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).arg("WITHSCORES"))
        .await?;
    v.into_iter()
        .map(|(m, s)| {
            let score = s.parse::<f64>().map_err(|e| format!("{key} score `{s}`: {e}"))?;
            Ok((hex(&m), score as i64))
        })
        .collect()
}

/// The raw count at N (`None`: no key).
async fn raw_count(env: &Env, name: &str) -> Result<Option<String>> {
    env.raw.get(name).await
}

/// N holds `count` and the zset exactly `held` (ids in any order, each with a score that
/// `score_ok` accepts).
pub(crate) async fn state(
    env: &Env,
    name: &str,
    count: Option<&str>,
    held: &[&str],
    score_ok: impl Fn(&str, i64) -> bool,
    what: &str,
) -> Result<Vec<(String, i64)>> {
    let c = raw_count(env, name).await?;
    ensure!(
        c.as_deref() == count,
        "{what}: GET {name} = {c:?}, expected {count:?}"
    );
    let leases = raw_leases(env, name).await?;
    let mut got: Vec<&str> = leases.iter().map(|(id, _)| id.as_str()).collect();
    let mut want = held.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    ensure!(
        got == want,
        "{what}: {} holds {leases:?}, expected the ids {held:?}",
        leases_key(name)
    );
    for (id, score) in &leases {
        ensure!(
            score_ok(id, *score),
            "{what}: the score of {id} is {score} (now {:.0})",
            now_ms()
        );
    }
    Ok(leases)
}

/// A score `lease_ms` from now, give or take the calls in between.
pub(crate) fn about(lease_ms: i64) -> impl Fn(&str, i64) -> bool {
    let now = now_ms() as i64;
    move |_, s| s <= now + lease_ms + 50 && s >= now + lease_ms - LEASE_SLACK_MS
}

/// Both sides read `available`, and where they can `acquiredPermits` = `held`, `getPermits` =
/// `total`.
async fn counts(a: &Pes<'_>, b: &Pes<'_>, available: i64, held: i64, what: &str) -> Result<()> {
    for s in [a, b] {
        let n = s.available().await?;
        ensure!(
            n == available,
            "{what}: {} availablePermits = {n}, expected {available}",
            s.lang()
        );
        if let Some((h, t)) = s.held_and_total().await? {
            ensure!(
                (h, t) == (held, available + held),
                "{what}: {} acquiredPermits / getPermits = {h} / {t}, expected {held} / {}",
                s.lang(),
                available + held
            );
        }
    }
    Ok(())
}

/// The lease `s` reads for `id` is `want_ms` (−1: none) give or take [`LEASE_SLACK_MS`];
/// returns what it read (`None`: this side cannot read leases).
async fn lease_is(s: &Pes<'_>, id: &str, want_ms: i64, what: &str) -> Result<Option<i64>> {
    let Some(ms) = s.lease_ms(id).await? else {
        return Ok(None);
    };
    let ok = if want_ms < 0 {
        ms == -1
    } else {
        ms <= want_ms && ms > want_ms - LEASE_SLACK_MS
    };
    ensure!(
        ok,
        "{what}: {} reads the lease of {id} as {ms} ms, expected {}",
        s.lang(),
        if want_ms < 0 {
            "-1 (none)".to_owned()
        } else {
            format!("{want_ms} ms (- up to {LEASE_SLACK_MS})")
        }
    );
    Ok(Some(ms))
}

fn is_permit_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

async fn s53(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(53, dir);
    let (pa, pb) = env.pair(53, dir, Speed::QuietPoll);
    let (a, b) = (Pes::of(env, &pa, &name)?, Pes::of(env, &pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    ensure!(a.try_set_permits(2).await?, "A's trySetPermits(2) returned false");
    state(
        env,
        &name,
        Some("2"),
        &[],
        |_, _| true,
        "after A's trySetPermits(2)",
    )
    .await?;
    let id_a = a.acquire(Some(10_000)).await?;
    ensure!(
        is_permit_id(&id_a),
        "{}'s permit id `{id_a}` is not 32 lowercase hex digits",
        a.lang()
    );
    state(
        env,
        &name,
        Some("1"),
        &[&id_a],
        about(10_000),
        "after A's acquire(10 s)",
    )
    .await?;
    let mut leases = Vec::new();
    for s in [&b, &a] {
        leases.extend(
            lease_is(s, &id_a, 10_000, "A's 10 s lease")
                .await?
                .map(|ms| format!("{} {ms}", s.lang())),
        );
    }
    counts(&a, &b, 1, 1, "with A's permit held").await?;
    ensure!(
        b.update_lease(&id_a, Some(20_000)).await?,
        "B's updateLeaseTime(A's id, 20 s) returned false"
    );
    state(
        env,
        &name,
        Some("1"),
        &[&id_a],
        about(20_000),
        "after B's updateLeaseTime(20 s)",
    )
    .await?;
    for s in [&a, &b] {
        leases.extend(
            lease_is(s, &id_a, 20_000, "after B's update to 20 s")
                .await?
                .map(|ms| format!("{} {ms}", s.lang())),
        );
    }
    let id_b = b.acquire(None).await?;
    ensure!(
        is_permit_id(&id_b),
        "{}'s permit id `{id_b}` is not 32 lowercase hex digits",
        b.lang()
    );
    ensure!(id_a != id_b, "both permits have the id {id_a}");
    let nb = id_b.clone();
    state(
        env,
        &name,
        Some("0"),
        &[&id_a, &id_b],
        move |id, s| id != nb || s == NO_LEASE,
        "after B's acquire() without a lease",
    )
    .await?;
    lease_is(&a, &id_b, -1, "B's permit without a lease").await?;
    lease_is(&b, &id_b, -1, "B's permit without a lease").await?;
    ensure!(
        a.update_lease(&id_b, Some(30_000)).await?,
        "A's updateLeaseTime(B's id, 30 s) returned false"
    );
    let nb = id_b.clone();
    let near = about(30_000);
    state(
        env,
        &name,
        Some("0"),
        &[&id_a, &id_b],
        move |id, s| id != nb || near(id, s),
        "after A's updateLeaseTime(30 s)",
    )
    .await?;
    lease_is(&b, &id_b, 30_000, "after A's update to 30 s").await?;
    ensure!(
        a.update_lease(&id_b, None).await?,
        "A's updateLeaseTime(B's id, none) returned false"
    );
    let nb = id_b.clone();
    state(
        env,
        &name,
        Some("0"),
        &[&id_a, &id_b],
        move |id, s| id != nb || s == NO_LEASE,
        "after A's updateLeaseTime(none)",
    )
    .await?;
    lease_is(&b, &id_b, -1, "after A's update to none").await?;
    counts(&a, &b, 0, 2, "with both permits held").await?;
    let none = b.try_acquire().await?;
    ensure!(
        none.is_none(),
        "B's tryAcquire() with no permit available gave {none:?}"
    );
    b.release(&id_a)
        .await?
        .map_err(|e| format!("B's release of A's id {id_a} was refused: {e}"))?;
    state(
        env,
        &name,
        Some("1"),
        &[&id_b],
        |_, s| s == NO_LEASE,
        "after B released A's id",
    )
    .await?;
    // the count around a held permit: add (message: the delta), remove (no message), set the
    // total (message: the new total; Java's setPermits needs 3.23.4, else Rust sets it)
    a.add_permits(2).await?;
    state(
        env,
        &name,
        Some("3"),
        &[&id_b],
        |_, _| true,
        "after A's addPermits(2)",
    )
    .await?;
    b.add_permits(-1).await?;
    state(
        env,
        &name,
        Some("2"),
        &[&id_b],
        |_, _| true,
        "after B's addPermits(-1)",
    )
    .await?;
    let (java, rust) = if matches!(a, Pes::Java { .. }) {
        (&a, &b)
    } else {
        (&b, &a)
    };
    let setter = if java.has("3.23.4") { java } else { rust };
    setter.set_permits(5).await?;
    state(
        env,
        &name,
        Some("4"),
        &[&id_b],
        |_, _| true,
        "after setPermits(5) with 1 held",
    )
    .await?;
    counts(&a, &b, 4, 1, "after setPermits(5) with 1 held").await?;
    let refused = a.release(&id_a).await?;
    let Err(refusal) = refused else {
        return Err(format!("A's second release of {id_a} (released by B) succeeded"));
    };
    ensure!(
        !a.try_release(&id_a).await?,
        "A's tryRelease of the released {id_a} returned true"
    );
    ensure!(
        !b.try_release(&id_a).await?,
        "B's tryRelease of the released {id_a} returned true"
    );
    state(
        env,
        &name,
        Some("4"),
        &[&id_b],
        |_, _| true,
        "after the refused releases",
    )
    .await?;
    a.release(&id_b)
        .await?
        .map_err(|e| format!("A's release of B's id {id_b} was refused: {e}"))?;
    state(env, &name, Some("5"), &[], |_, _| true, "after A released B's id").await?;
    counts(&a, &b, 5, 0, "after both releases").await?;
    ensure!(b.delete().await?, "B's delete() returned false");
    ensure!(
        !a.delete().await?,
        "A's delete() of a deleted semaphore returned true"
    );
    expect_sem_messages(env, &watch, &name, &["2", "1", "2", "5", "5"]).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "ids {id_a} ({}) / {id_b} ({}) released by the other language; leases read {}; addPermits ±1 around a held permit, {}'s setPermits(5) kept it; A's second release refused with `{}`; messages 2, 1, 2 (add: the delta), 5 (set: the total), 5",
            a.lang(),
            b.lang(),
            if leases.is_empty() {
                "from the zset only (Java getLeaseTime needs 3.41.0)".to_owned()
            } else {
                format!("[{}] ms", leases.join(", "))
            },
            setter.lang(),
            refusal
        ),
    })
}

async fn s54(env: &Env, dir: Dir) -> Result<Outcome> {
    let name = env.name(54, dir);
    let (pa, pb) = env.pair(54, dir, Speed::QuietPoll);
    let (a, b) = (Pes::of(env, &pa, &name)?, Pes::of(env, &pb, &name)?);
    let watch = Watch::lock_channels(&env.url, &env.raw, &name).await?;
    ensure!(a.try_set_permits(3).await?, "A's trySetPermits(3) returned false");
    let ids = a.acquire_many(2, 10_000).await?;
    ensure!(
        ids.len() == 2 && ids.iter().all(|i| is_permit_id(i)) && ids[0] != ids[1],
        "A's acquire(2, 10 s) gave {ids:?}"
    );
    let held: Vec<&str> = ids.iter().map(String::as_str).collect();
    state(
        env,
        &name,
        Some("1"),
        &held,
        about(10_000),
        "after A's acquire(2, 10 s)",
    )
    .await?;
    counts(&a, &b, 1, 2, "with A's 2 permits held").await?;
    let n = b.try_release_many(&ids).await?;
    ensure!(n == 2, "B's tryRelease(A's 2 ids) gave back {n}, expected 2");
    state(env, &name, Some("3"), &[], |_, _| true, "after B gave back A's 2").await?;
    let ids_b = b.try_acquire_many(3).await?;
    ensure!(
        ids_b.len() == 3 && ids_b.iter().all(|i| is_permit_id(i)),
        "B's tryAcquire(3, 0, no lease) gave {ids_b:?}"
    );
    let held_b: Vec<&str> = ids_b.iter().map(String::as_str).collect();
    state(
        env,
        &name,
        Some("0"),
        &held_b,
        |_, s| s == NO_LEASE,
        "after B's tryAcquire(3)",
    )
    .await?;
    let none = a.try_acquire().await?;
    ensure!(
        none.is_none(),
        "A's tryAcquire() with none available gave {none:?}"
    );
    counts(&a, &b, 0, 3, "with B's 3 permits held").await?;
    // a list with an id nobody holds: all or none (Rust; Redisson 3.41.0 and later), or the
    // known ids alone (Redisson before 3.41.0)
    let unknown = "00112233445566778899aabbccddeeff".to_owned();
    let mixed = vec![ids_b[0].clone(), unknown];
    let all_or_none = a.has(ALL_OR_NONE_SINCE);
    let n = a.try_release_many(&mixed).await?;
    let want = if all_or_none { 0 } else { 1 };
    ensure!(
        n == want,
        "A's tryRelease([B's id, an unknown id]) gave back {n}, expected {want} ({})",
        if all_or_none {
            "all or none"
        } else {
            "Redisson before 3.41 gives back the ids it knows"
        }
    );
    let rest: Vec<String> = if all_or_none {
        ids_b.clone()
    } else {
        ids_b[1..].to_vec()
    };
    let held_rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let count = (3 - rest.len()).to_string();
    state(
        env,
        &name,
        Some(&count),
        &held_rest,
        |_, _| true,
        "after A's tryRelease with an unknown id",
    )
    .await?;
    let refusal = match a.release_many(&mixed).await? {
        Ok(()) => return Err("A's release([B's id, an unknown id]) succeeded".into()),
        Err(e) => e,
    };
    state(
        env,
        &name,
        Some(&count),
        &held_rest,
        |_, _| true,
        "after A's refused release(list)",
    )
    .await?;
    a.release_many(&rest)
        .await?
        .map_err(|e| format!("A's release(B's {} ids) was refused: {e}", rest.len()))?;
    state(
        env,
        &name,
        Some("3"),
        &[],
        |_, _| true,
        "after A gave back B's ids",
    )
    .await?;
    let again = a.release_many(&ids_b).await?;
    ensure!(again.is_err(), "A's second release(B's 3 ids) succeeded");
    ensure!(b.delete().await?, "B's delete() returned false");
    let rest_msg = rest.len().to_string();
    let want: Vec<&str> = if all_or_none {
        vec!["3", "2", &rest_msg]
    } else {
        vec!["3", "2", "1", &rest_msg]
    };
    expect_sem_messages(env, &watch, &name, &want).await?;
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "2 ids with a 10 s lease and 3 without, each list given back by the other language; [B's id, an unknown id]: {} tryRelease gave back {}, release refused (`{refusal}`); messages {}",
            a.lang(),
            if all_or_none { "0 (all or none)" } else { "1 (the known id: Redisson before 3.41.0)" },
            want.join(", ")
        ),
    })
}
