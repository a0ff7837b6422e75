//! The fault run's resource checks (L4, and L2's orphan holds): every worker's `client.stats()`
//! once its tasks finished, then Redis while the workers are idle but still connected, and again
//! after they exited. Findings go to the report's resources section, problems to the run's
//! failures.

use super::*;

/// What the resource checks saw, for the report.
#[derive(Default)]
pub(super) struct Resources {
    pub(super) lines: Vec<String>,
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
    let mut c = run.target.conn().await.expect("connect after the run");
    let idle_since = Instant::now();
    let mut subs = Vec::new();
    while idle_since.elapsed() < Duration::from_secs(5) {
        subs = numsub(&mut c, "NUMSUB", names).await;
        subs.extend(numsub(&mut c, "SHARDNUMSUB", names).await);
        if subs.iter().all(|(_, n)| *n == 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left: Vec<_> = subs.iter().filter(|(_, n)| *n > 0).collect();
    if left.is_empty() {
        run.res
            .lines
            .push("PUBSUB NUMSUB / SHARDNUMSUB of every lock channel: 0 while the workers were idle".into());
    } else {
        run.failures.push(format!(
            "L4: subscriptions left on lock channels 5 s after the workers went idle (still connected): {left:?}"
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
    let subs: Vec<_> = numsub(c, "NUMSUB", &run.names)
        .await
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    if !subs.is_empty() {
        run.failures.push(format!(
            "L4: subscriptions on lock channels after the workers exited: {subs:?}"
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
                "latch keys after the workers exited: {} short-lived (longest PTTL {max_short} ms), all gone after {:.1} s; {} long-lived acquire-cancellation markers (PTTL up to {} ms){}",
                short.len(),
                latch_since.elapsed().as_secs_f64(),
                long.len(),
                long.iter().map(|(_, p)| *p).max().unwrap_or(0),
                if long.is_empty() { String::new() } else { format!(", e.g. `{}`", long[0].0) }
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

/// Subscriber counts of every lock's channel (`PUBSUB NUMSUB` or `SHARDNUMSUB`, as `cmd`).
async fn numsub(
    c: &mut redis::aio::MultiplexedConnection,
    cmd: &str,
    names: &[String],
) -> Vec<(String, i64)> {
    let mut q = redis::cmd("PUBSUB");
    q.arg(cmd);
    for n in names {
        q.arg(channel(n));
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
