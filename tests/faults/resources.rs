//! The fault run's resource checks (L4, and L2's orphan holds): every worker's `client.stats()`
//! once its tasks finished, then Redis while the workers are idle but still connected, and again
//! after they exited. Findings go to the report's resources section, problems to the run's
//! failures. Also the semaphores' counts: set up before the workers start, checked at quiescent
//! points of the run (`semaphore_quiesce`) and after the workers shut down
//! (`semaphore_end_checks`).

use super::*;

/// What the resource checks saw, for the report.
#[derive(Default)]
pub(super) struct Resources {
    pub(super) lines: Vec<String>,
    /// Each worker's loss-signal path (`ClientStats::loss_signal`) when its tasks finished.
    pub(super) loss_signals: Vec<String>,
}

/// The workers' own counters, as each worker reported them once its tasks finished and it had
/// settled: checks that none still renews a lock, listens on a lock channel or has a waiter
/// registered (L4). A worker that sent no stats is a failure.
pub(super) fn worker_stats_checks(run: &mut Run, stats_lines: Result<Vec<String>, String>) {
    let stats: Vec<serde_json::Value> = match stats_lines {
        Ok(lines) => lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad stats line {l:?}: {e}")))
            .collect(),
        Err(e) => {
            run.failures.push(format!("worker stats: {e}"));
            Vec::new()
        }
    };
    for s in &stats {
        run.res.lines.push(format!("worker {}: stats {s}", s["process"]));
        let signal = s["loss_signal"].as_str().unwrap_or("?").to_owned();
        // a run meant for one path (`scripts/test` runs one on Valkey for tracking without the
        // echo) fails when the clients took another
        if let Some(want) = std::env::var("FAULTS_EXPECT_LOSS_SIGNAL")
            .ok()
            .filter(|w| *w != signal)
        {
            run.failures.push(format!(
                "worker {}'s loss signal is {signal}, FAULTS_EXPECT_LOSS_SIGNAL wants {want}",
                s["process"]
            ));
        }
        run.res.loss_signals.push(signal);
        if s["shutdown"].as_str() != Some("ok") {
            run.failures.push(format!(
                "L4: worker {}'s `client.shutdown()` after its tasks finished: {}",
                s["process"], s["shutdown"]
            ));
        }
        for k in ["renewing", "channels", "waiters"] {
            if s[k].as_u64() != Some(0) {
                run.failures.push(format!(
                    "L4: worker {} still has {k} = {} after all its tasks finished and {} ms to settle (stats when the tasks finished: {})",
                    s["process"], s[k], s["settle_ms"], s["at_tasks_end"]
                ));
            }
        }
    }
}

/// While the workers are idle but still connected: checks that the subscriptions on every lock
/// channel (`PUBSUB NUMSUB` and `SHARDNUMSUB`) drop to 0 within 5 s (L4), that no lock key is
/// left without a TTL or with a TTL longer than any lease, and that every lock key disappears
/// within a lease plus 2 s (L2/F27: nobody renews an orphan hold). Returns the admin connection,
/// which the checks after the workers' exit go on with.
pub(super) async fn idle_resource_checks(run: &mut Run) -> redis::aio::MultiplexedConnection {
    let names = &run.names;
    let channels = all_channels(names);
    let mut c = run.target.conn().await.expect("connect after the run");
    let idle_since = Instant::now();
    let mut subs = Vec::new();
    while idle_since.elapsed() < Duration::from_secs(5) {
        subs = numsub(&mut c, "NUMSUB", &channels).await;
        subs.extend(numsub(&mut c, "SHARDNUMSUB", &channels).await);
        if subs.iter().all(|(_, n)| *n == 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left: Vec<_> = subs.iter().filter(|(_, n)| *n > 0).collect();
    if left.is_empty() {
        run.res.lines.push(
            "PUBSUB NUMSUB / SHARDNUMSUB of every lock and semaphore channel: 0 while the workers were idle"
                .into(),
        );
    } else {
        run.failures.push(format!(
            "L4: subscriptions left on lock or semaphore channels 5 s after the workers went idle (still connected): {left:?}"
        ));
    }
    let mut ttl_at_idle = BTreeMap::new();
    for n in names {
        let pttl: i64 = redis::cmd("PTTL").arg(n).query_async(&mut c).await.unwrap_or(-3);
        if pttl != -2 {
            ttl_at_idle.insert(n.clone(), pttl);
        }
        if pttl == -1 {
            run.failures.push(format!(
                "lock key without TTL after the run: {}",
                describe_key(&mut c, n).await
            ));
        } else if pttl > LEASE.as_millis() as i64 {
            run.failures.push(format!(
                "lock key with a TTL longer than any lease after the run: {}",
                describe_key(&mut c, n).await
            ));
        }
    }
    run.res.lines.push(format!(
        "lock keys left when the workers went idle (PTTL ms): {ttl_at_idle:?}"
    ));
    let key_deadline = idle_since + LEASE + Duration::from_secs(2);
    loop {
        let mut present = Vec::new();
        for n in names {
            let e: i64 = redis::cmd("EXISTS").arg(n).query_async(&mut c).await.unwrap_or(0);
            if e == 1 {
                present.push(n.clone());
            }
        }
        if present.is_empty() {
            run.res.lines.push(format!(
                "every lock key gone {:.1} s after the workers went idle",
                idle_since.elapsed().as_secs_f64()
            ));
            break;
        }
        if Instant::now() >= key_deadline {
            let mut d = Vec::new();
            for k in &present {
                d.push(describe_key(&mut c, k).await);
            }
            run.failures.push(format!(
                "L2/F27: lock keys still present {:.1} s after the workers went idle (longer than any lease: an orphan hold is being renewed): {}",
                idle_since.elapsed().as_secs_f64(),
                d.join("; ")
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    c
}

/// After the workers exited: checks that no subscription is left on a lock channel (L4), the
/// unlock latches (`latch_checks`), and that no lock key came back.
pub(super) async fn after_exit_checks(run: &mut Run, c: &mut redis::aio::MultiplexedConnection) {
    let subs: Vec<_> = numsub(c, "NUMSUB", &all_channels(&run.names))
        .await
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    if !subs.is_empty() {
        run.failures.push(format!(
            "L4: subscriptions on lock or semaphore channels after the workers exited: {subs:?}"
        ));
    }
    latch_checks(run, c).await;
    for n in &run.names {
        let e: i64 = redis::cmd("EXISTS").arg(n).query_async(c).await.unwrap_or(0);
        if e == 1 {
            run.failures.push(format!(
                "a lock key exists after the workers exited: {}",
                describe_key(c, n).await
            ));
        }
    }
}

/// The latch keys after the workers exited. An unlock latch lives for the retry window (seconds)
/// and is deleted after use; a marker that cancels an ambiguous acquire (same key prefix) may live
/// for minutes by design. Checks that none lacks a TTL (L4/F6), that no marker's TTL exceeds
/// `LATCH_LONG_MAX_MS`, and that the short-lived ones are gone once their TTL ran out (L4).
/// The semaphores' request latches (an acquisition's grant record or cancellation marker, a
/// release's or set-up's first reply) all live for the settle window at most, so none of them
/// may be long-lived, and they too must be gone once their TTL ran out.
async fn latch_checks(run: &mut Run, c: &mut redis::aio::MultiplexedConnection) {
    let latch_since = Instant::now();
    let mut short: Vec<(String, i64)> = Vec::new();
    let mut long: Vec<(String, i64)> = Vec::new();
    let mut no_ttl = Vec::new();
    for l in scan(c, "redisson_unlock_latch:*").await {
        let p: i64 = redis::cmd("PTTL").arg(&l).query_async(c).await.unwrap_or(-2);
        match p {
            -2 => {}
            -1 => no_ttl.push(l),
            p if p > LATCH_SHORT_MS => long.push((l, p)),
            p => short.push((l, p)),
        }
    }
    if !no_ttl.is_empty() {
        run.failures.push(format!(
            "L4/F6: {} unlock latch keys without TTL after the workers exited, e.g. {:?}",
            no_ttl.len(),
            &no_ttl[..no_ttl.len().min(5)]
        ));
    }
    let of_sem = |l: &str| {
        semaphores()
            .into_iter()
            .find(|(n, _, _)| l.contains(&format!("{{{n}}}:")))
            .map(|(n, _, _)| n)
    };
    let mut sem_latches: BTreeMap<&str, usize> = BTreeMap::new();
    for (l, _) in short.iter().chain(&long) {
        if let Some(n) = of_sem(l) {
            *sem_latches.entry(n).or_default() += 1;
        }
    }
    let long_sem: Vec<&(String, i64)> = long.iter().filter(|(l, _)| of_sem(l).is_some()).collect();
    if !long_sem.is_empty() {
        run.failures.push(format!(
            "L4: {} semaphore request latches with a TTL beyond {LATCH_SHORT_MS} ms after the workers exited (a semaphore's latches live for the settle window at most), e.g. {:?}",
            long_sem.len(),
            &long_sem[..long_sem.len().min(5)]
        ));
    }
    if let Some((l, p)) = long.iter().find(|(_, p)| *p > LATCH_LONG_MAX_MS) {
        run.failures.push(format!(
            "L4: latch `{l}` has a TTL of {p} ms after the workers exited (more than {LATCH_LONG_MAX_MS} ms)"
        ));
    }
    let max_short = short.iter().map(|(_, p)| *p).max().unwrap_or(0);
    let short_deadline = latch_since + Duration::from_millis(max_short as u64) + Duration::from_secs(2);
    loop {
        let mut left = Vec::new();
        for (l, _) in &short {
            let e: i64 = redis::cmd("EXISTS").arg(l).query_async(c).await.unwrap_or(0);
            if e == 1 {
                left.push(l.clone());
            }
        }
        if left.is_empty() {
            run.res.lines.push(format!(
                "latch keys after the workers exited: {} short-lived (longest PTTL {max_short} ms), all gone after {:.1} s; {} long-lived acquire-cancellation markers (PTTL up to {} ms){}; of these, semaphore request latches: {}",
                short.len(),
                latch_since.elapsed().as_secs_f64(),
                long.len(),
                long.iter().map(|(_, p)| *p).max().unwrap_or(0),
                if long.is_empty() { String::new() } else { format!(", e.g. `{}`", long[0].0) },
                if sem_latches.is_empty() {
                    "none".to_owned()
                } else {
                    sem_latches
                        .iter()
                        .map(|(n, k)| format!("`{n}` {k}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
            break;
        }
        if Instant::now() >= short_deadline {
            run.failures.push(format!(
                "L4: {} unlock latch keys still present {:.1} s after the workers exited, past their TTL (longest PTTL seen {max_short} ms), e.g. {:?}",
                left.len(),
                latch_since.elapsed().as_secs_f64(),
                &left[..left.len().min(5)]
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The pub/sub channel on which a lock's release is announced.
fn channel(name: &str) -> String {
    format!("redisson_lock__channel:{{{name}}}")
}

/// Every lock's channel (of `names`) and every semaphore's (`redisson_sc:{name}`).
fn all_channels(names: &[String]) -> Vec<String> {
    let mut v: Vec<String> = names.iter().map(|n| channel(n)).collect();
    v.extend(
        semaphores()
            .iter()
            .map(|(n, _, _)| format!("redisson_sc:{{{n}}}")),
    );
    v
}

/// Subscriber counts of `channels` (`PUBSUB NUMSUB` or `SHARDNUMSUB`, as `cmd`).
async fn numsub(
    c: &mut redis::aio::MultiplexedConnection,
    cmd: &str,
    channels: &[String],
) -> Vec<(String, i64)> {
    let mut q = redis::cmd("PUBSUB");
    q.arg(cmd);
    for ch in channels {
        q.arg(ch);
    }
    let v: Vec<redis::Value> = q.query_async(c).await.unwrap_or_default();
    let mut out = Vec::new();
    for pair in v.chunks(2) {
        if let [k, n] = pair {
            let k: String = redis::from_redis_value(k.clone()).unwrap_or_default();
            let n: i64 = redis::from_redis_value(n.clone()).unwrap_or_default();
            out.push((k, n));
        }
    }
    out
}

/// Every key matching `pattern`.
async fn scan(c: &mut redis::aio::MultiplexedConnection, pattern: &str) -> Vec<String> {
    let mut cursor = 0u64;
    let mut out = Vec::new();
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(c)
            .await
            .unwrap_or((0, Vec::new()));
        out.extend(keys);
        if next == 0 {
            return out;
        }
        cursor = next;
    }
}

/// Describes a key for a failure message: type, TTL, content.
async fn describe_key(c: &mut redis::aio::MultiplexedConnection, key: &str) -> String {
    let t: String = redis::cmd("TYPE")
        .arg(key)
        .query_async(c)
        .await
        .unwrap_or_default();
    let pttl: i64 = redis::cmd("PTTL").arg(key).query_async(c).await.unwrap_or(-3);
    let content = if t == "hash" {
        let v: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(key)
            .query_async(c)
            .await
            .unwrap_or_default();
        format!("{v:?}")
    } else {
        String::new()
    };
    format!("`{key}` ({t}, PTTL {pttl} ms) {content}")
}

/// A semaphore's count as the parent read it at a quiescent point or at the end, for the report.
pub(super) struct SemCheck {
    pub(super) label: String,
    pub(super) lock: &'static str,
    pub(super) available: Option<i64>,
    pub(super) acquired: Option<i64>,
    pub(super) expected: i64,
    /// `ok`, `FAIL ...`, or `not judged: <why>`.
    pub(super) verdict: String,
    pub(super) reset_to: Option<i64>,
    /// When the count was read (`CLOCK_MONOTONIC` ns).
    pub(super) time: u64,
    /// The index in `Run::failures` of its failure, if it failed (`diagnose_sem_checks` adds
    /// what the history shows).
    pub(super) failure: Option<usize>,
}

/// Sets both semaphores up (N available, no id held) before the workers start, recorded as their
/// first creation (`by` = `parent`).
pub(super) async fn set_up_semaphores(run: &mut Run) {
    let mut c = run.target.conn().await.expect("connect to set the semaphores up");
    for (name, _, cap) in semaphores() {
        let start = now_ns();
        let _: () = redis::pipe()
            .atomic()
            .del(name)
            .ignore()
            .del(leases_key(name))
            .ignore()
            .set(name, cap)
            .ignore()
            .query_async(&mut c)
            .await
            .unwrap_or_else(|e| panic!("set up semaphore `{name}`: {e}"));
        run.parent_log.reinits.push(common::history::Reinit {
            lock: name.to_owned(),
            by: "parent".into(),
            start,
            end: now_ns(),
        });
    }
}

/// The available permits (`None`: no count) and, for the expirable semaphore, the permits held
/// under an id (the leases' sorted set, ended leases included: none may be left).
async fn read_semaphore(
    c: &mut redis::aio::MultiplexedConnection,
    name: &str,
    kind: SemKind,
) -> Result<(Option<i64>, Option<i64>), String> {
    let text: Option<String> = redis::cmd("GET")
        .arg(name)
        .query_async(c)
        .await
        .map_err(|e| format!("GET {name}: {e}"))?;
    let available = match text {
        None => None,
        Some(t) => Some(
            t.parse::<i64>()
                .map_err(|_| format!("`{name}` holds `{t}`, not a count"))?,
        ),
    };
    let acquired = match kind {
        SemKind::Semaphore => None,
        SemKind::Expirable => Some(
            redis::cmd("ZCARD")
                .arg(leases_key(name))
                .query_async::<i64>(c)
                .await
                .map_err(|e| format!("ZCARD {}: {e}", leases_key(name)))?,
        ),
    };
    Ok((available, acquired))
}

/// What a wrong count means.
fn count_problem(available: Option<i64>, acquired: Option<i64>, n: i64) -> String {
    let mut why = Vec::new();
    match available {
        None => why.push("the semaphore is gone".to_owned()),
        Some(a) if a < n => why.push(format!(
            "{} permits lost (an acquisition granted after its caller gave up not given back, or a release that never applied)",
            n - a
        )),
        Some(a) if a > n => why.push(format!("{} permits too many (a release applied twice)", a - n)),
        Some(_) => {}
    }
    if let Some(k) = acquired.filter(|k| *k > 0) {
        why.push(format!("{k} permits still held under an id nobody holds"));
    }
    why.join("; ")
}

/// Pauses every worker's semaphore tasks (`SEMPAUSE`; each worker parks them, their holdings
/// given back and their acquisitions dropped, and waits until its client's background work has
/// drained, so every permit a dropped guard or an abandoned acquisition owes is back), reads both
/// semaphores, judges what is decidable, leaves each at exactly N with no id held (recorded as a
/// `Quiesce`: data loss before it explains no excess after it), and resumes them (`SEMRESUME`).
///
/// What is decidable (`after_data_loss`: the data-loss faults have happened):
/// * Without data loss (the end of phase A): both must hold exactly N available, the expirable
///   semaphore no permit under an id. A permit lost to a lost reply, or given back twice after a
///   retried release, shows here.
/// * After data loss, the `Semaphore`'s count is not judged: a permit taken before a loss and
///   given back after a worker set the semaphore up again counts once more (a release adds to
///   the new count), one given back before the set-up creates the count with fewer, and a
///   release retried after the loss erased its request latch applies again. The expirable
///   semaphore's count is judged when it exists: only `try_set_permits` creates it, at N, when
///   the loss has erased every id too, and a release of an erased id is refused, so once set up
///   again it holds N minus the ids taken since, none at a quiescent point. When the last loss
///   erased it and nobody set it up since, it is not judged.
///
/// No data-loss fault follows the pause after the data-loss faults, so after the workers' shutdown
/// both counts are judged again (`semaphore_end_checks`).
pub(super) async fn semaphore_quiesce(run: &mut Run, label: &str, after_data_loss: bool) {
    let asked = Instant::now();
    run.workers.tell("SEMPAUSE");
    let lines = await_lines(
        &mut run.worker_events,
        run.mode.processes,
        "FAULTS-SEMPAUSED",
        PAUSE_LIMIT + Duration::from_secs(5),
        &run.run_dir,
    )
    .await;
    let mut sound = true;
    let mut took = Vec::new();
    match &lines {
        Err(e) => {
            run.failures.push(format!("semaphore pause at {label}: {e}"));
            sound = false;
        }
        Ok(lines) => {
            for l in lines {
                let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
                took.push(format!("{} ms", v["drained_ms"]));
                if v["ok"] != serde_json::Value::Bool(true) {
                    run.failures.push(format!(
                        "semaphore pause at {label}: a worker did not park its semaphore tasks and drain its background work within {PAUSE_LIMIT:?}: {l}"
                    ));
                    sound = false;
                }
            }
        }
    }
    if sound {
        match run.target.conn().await {
            Ok(mut c) => {
                for (name, kind, cap) in semaphores() {
                    quiesce_one(run, &mut c, label, name, kind, i64::from(cap), after_data_loss).await;
                }
            }
            Err(e) => run
                .failures
                .push(format!("semaphore check at {label}: connect: {e}")),
        }
    }
    run.workers.tell("SEMRESUME");
    run.res.lines.push(format!(
        "semaphore pause ({label}): {:.0} ms from `SEMPAUSE` to the counts read and reset (each worker parked its semaphore tasks and drained its background work in {})",
        asked.elapsed().as_secs_f64() * 1e3,
        if took.is_empty() { "-".to_owned() } else { took.join(", ") }
    ));
}

async fn quiesce_one(
    run: &mut Run,
    c: &mut redis::aio::MultiplexedConnection,
    label: &str,
    name: &'static str,
    kind: SemKind,
    n: i64,
    after_data_loss: bool,
) {
    let start = now_ns();
    let (available, acquired) = match read_semaphore(c, name, kind).await {
        Ok(v) => v,
        Err(e) => {
            run.failures.push(format!("semaphore `{name}` at {label}: {e}"));
            return;
        }
    };
    let right = available == Some(n) && acquired.unwrap_or(0) == 0;
    let mut failure = None;
    let verdict = if after_data_loss && kind == SemKind::Semaphore {
        "not judged: after data loss a `Semaphore`'s count is undecidable".to_owned()
    } else if after_data_loss && available.is_none() {
        "not judged: erased by the last data-loss fault and not set up since".to_owned()
    } else if right {
        "ok".to_owned()
    } else {
        let why = count_problem(available, acquired, n);
        failure = Some(run.failures.len());
        run.failures.push(format!(
            "semaphore `{name}` ({}) at {label}: {} available{} (expected {n}{}) while no task held or was acquiring a permit and every worker's background work had drained: {why}",
            kind.label(),
            available.map_or_else(|| "none (no count)".to_owned(), |a| a.to_string()),
            acquired.map(|k| format!(", {k} held under an id")).unwrap_or_default(),
            if kind == SemKind::Expirable { ", 0" } else { "" },
        ));
        format!("FAIL: {why}")
    };
    let mut reset_to = None;
    if !right {
        let r: redis::RedisResult<()> = redis::pipe()
            .atomic()
            .del(leases_key(name))
            .ignore()
            .set(name, n)
            .ignore()
            .query_async(c)
            .await;
        match r {
            Ok(()) => reset_to = Some(n),
            Err(e) => run
                .failures
                .push(format!("semaphore `{name}` at {label}: reset to {n}: {e}")),
        }
    }
    run.parent_log.quiesces.push(Quiesce {
        lock: name.to_owned(),
        label: label.to_owned(),
        start,
        end: now_ns(),
        available,
        acquired,
        reset_to,
    });
    run.sem_checks.push(SemCheck {
        label: label.to_owned(),
        lock: name,
        available,
        acquired,
        expected: n,
        verdict,
        reset_to,
        time: start,
        failure,
    });
}

/// After the workers' `client.shutdown()` (which waits for the permits of dropped guards and of
/// acquisitions abandoned at the stop to be given back): a semaphore that no data-loss fault hit
/// since its last quiescent check (which left it at exactly N) must hold exactly N available,
/// the expirable one no permit under an id. Recorded as a `Quiesce` without reset.
pub(super) async fn semaphore_end_checks(run: &mut Run, c: &mut redis::aio::MultiplexedConnection) {
    let label = "after the workers shut down";
    for (name, kind, cap) in semaphores() {
        let n = i64::from(cap);
        let start = now_ns();
        let (available, acquired) = match read_semaphore(c, name, kind).await {
            Ok(v) => v,
            Err(e) => {
                run.failures.push(format!("semaphore `{name}` {label}: {e}"));
                continue;
            }
        };
        let last_loss = run
            .parent_log
            .faults
            .iter()
            .filter(|f| f.erases(name))
            .map(|f| f.end)
            .max();
        let clean = run
            .parent_log
            .quiesces
            .iter()
            .any(|q| q.lock == name && last_loss.is_none_or(|e| q.start > e));
        let right = available == Some(n) && acquired.unwrap_or(0) == 0;
        let mut failure = None;
        let verdict = if !clean {
            "not judged: no quiescent check after the last data-loss fault".to_owned()
        } else if right {
            "ok".to_owned()
        } else {
            let why = count_problem(available, acquired, n);
            failure = Some(run.failures.len());
            run.failures.push(format!(
                "semaphore `{name}` ({}) {label}: {} available{} (expected {n}{}; no data loss since its last quiescent check, which left it at {n}): {why}",
                kind.label(),
                available.map_or_else(|| "none (no count)".to_owned(), |a| a.to_string()),
                acquired.map(|k| format!(", {k} held under an id")).unwrap_or_default(),
                if kind == SemKind::Expirable { ", 0" } else { "" },
            ));
            format!("FAIL: {why}")
        };
        run.parent_log.quiesces.push(Quiesce {
            lock: name.to_owned(),
            label: label.to_owned(),
            start,
            end: now_ns(),
            available,
            acquired,
            reset_to: None,
        });
        run.sem_checks.push(SemCheck {
            label: label.to_owned(),
            lock: name,
            available,
            acquired,
            expected: n,
            verdict,
            reset_to: None,
            time: start,
            failure,
        });
    }
}

/// Adds to each failed semaphore count what the history shows since the semaphore's previous
/// check: releases that failed (by error), guards dropped during a fault (their give-back runs in
/// the background, where a failure is only logged) and acquisitions abandoned or failed during a
/// fault (settled in the background; a grant found is given back there).
pub(super) fn diagnose_sem_checks(run: &mut Run, h: &History) {
    for (i, c) in run.sem_checks.iter().enumerate() {
        let Some(f) = c.failure else { continue };
        let since = run.sem_checks[..i]
            .iter()
            .filter(|p| p.lock == c.lock)
            .map(|p| p.time)
            .max()
            .unwrap_or(0);
        // faults that may fail a write of the semaphore (not a key written over another lock)
        let in_fault = |t: u64| {
            h.faults_in(t, t, 1_000_000_000)
                .iter()
                .any(|&f| h.faults[f].target.as_deref().is_none_or(|x| x == c.lock))
        };
        let mut failed: BTreeMap<String, usize> = BTreeMap::new();
        let mut first_failed: Option<String> = None;
        let mut dropped = 0usize;
        for s in h
            .sections
            .iter()
            .filter(|s| s.lock == c.lock && s.sem.is_some() && s.start >= since && s.end <= c.time)
        {
            match &s.unlock {
                UnlockResult::Error { message } => {
                    *failed.entry(common::history::error_class(message)).or_default() += 1;
                    first_failed.get_or_insert_with(|| h.describe_section(s));
                }
                UnlockResult::Hung => *failed.entry("hung".into()).or_default() += 1,
                UnlockResult::Dropped if in_fault(s.end) => dropped += 1,
                _ => {}
            }
        }
        let abandoned = h
            .attempts
            .iter()
            .filter(|a| {
                a.lock == c.lock
                    && a.sem.is_some()
                    && a.start >= since
                    && a.end <= c.time
                    && a.outcome != AttemptResult::NotAcquired
                    && in_fault(a.end)
            })
            .count();
        let note = format!(
            "; since the previous check the history shows releases that failed: {}{}; guards dropped during a fault (given back in the background, where a failure is only logged): {dropped}; acquisitions abandoned or failed during a fault (settled in the background): {abandoned}",
            if failed.is_empty() {
                "none".to_owned()
            } else {
                failed
                    .iter()
                    .map(|(k, v)| format!("{k} ×{v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            first_failed
                .map(|d| format!(" (first: {d})"))
                .unwrap_or_default()
        );
        run.failures[f].push_str(&note);
    }
}
