//! The mixed-language counter of the fenced, spin and non-reentrant scenarios: Java
//! `<kind>Counter` workers and Rust tasks increment one key under the same lock (GET, SET n+1,
//! RPUSH an interval record, all inside the critical section). The RLock's scenario 8 and the
//! read-write lock's 15 have their own versions. The multi-lock's (scenario 37) runs Java
//! `multiCounter` workers (`RedissonMultiLock`) against Rust `client.multi_lock` tasks.

use std::time::{Duration, Instant};

use redisson_lock_compat_tests::{find_overlap, now_micros, Interval, JavaKind, Result};

use crate::env::Env;
use crate::kinds::Dir;
use crate::party::{word, Guard, RustLock};
use crate::support::until;
use redisson_lock::{MultiGuard, RMultiLock};

/// The fewest hand-overs each way (Java → Rust and Rust → Java) a run must show. Healthy runs show
/// about 30–115 each way; a kind whose unlock does not wake the other language's waiters (no message,
/// or a waiter that is not polling) shows 0–3 and takes ~30 s (the waiters' TTL wait).
pub const MIN_HANDOVERS: usize = 10;

/// [`MIN_HANDOVERS`] for a spin lock, whose waiters are never woken: they poll with an exponential
/// back-off (both libraries: 1 ms doubling to 128 ms) and nothing is fair. Most runs pass the lock
/// 57–89 times each way, but once both tasks of one language trade the lock through their 2 ms gaps
/// the other language's back-off sits at the cap and only its polls that land in a free moment get
/// in: a CI run showed 8 J→R + 7 R→J in 0.9 s, correct behaviour for a spin lock. The failure this
/// guards against (one side never polling, or polling only until its first try) shows as 0–1
/// hand-overs, or as a run that waits for a TTL, which [`SPIN_MAX_SECS`] catches.
pub const SPIN_MIN_HANDOVERS: usize = 3;

/// The longest a spin counter run may take: healthy runs take 0.6–0.9 s; a waiter that stopped
/// polling would wait for the holder's 30 s lease (the watchdog's) to run out.
pub const SPIN_MAX_SECS: f64 = 20.0;

/// What a finished counter run looked like.
pub struct Counted {
    /// Every record, sorted by start.
    pub intervals: Vec<Interval>,
    /// Seconds from the first start to the last result.
    pub secs: f64,
    /// Which language started alone (J→R: Java).
    pub java_first: bool,
    /// Adjacent sections (by start) that passed the lock Java → Rust and Rust → Java.
    pub handovers: (usize, usize),
}

impl Counted {
    /// `Java first; 600 Java + 600 Rust sections, none overlap, 41 J→R + 40 R→J hand-overs; 1.2 s`.
    pub fn summary(&self) -> String {
        let nj = self
            .intervals
            .iter()
            .filter(|i| i.who.starts_with("java:"))
            .count();
        format!(
            "{} first; counter {}: {nj} Java + {} Rust sections, none overlap, {} J→R + {} R→J hand-overs; {:.1} s",
            if self.java_first { "Java" } else { "Rust" },
            self.intervals.len(),
            self.intervals.len() - nj,
            self.handovers.0,
            self.handovers.1,
            self.secs
        )
    }
}

/// What a counter run contends on.
#[derive(Clone, Copy)]
pub enum Target<'n> {
    /// Lock `name` of a kind: Java `<kind>Counter NAME …`, Rust that kind's handle.
    Kind(JavaKind, &'n str),
    /// A multi-lock over the plain locks `names` (in that order): Java `multiCounter n1,n2,… …`
    /// (`RedissonMultiLock`), Rust `client.multi_lock(names)`. The counter key is named after the
    /// first member.
    Multi(&'n [String]),
}

impl Target<'_> {
    fn key_base(self) -> String {
        match self {
            Target::Kind(_, name) => name.to_owned(),
            Target::Multi(names) => names.first().cloned().unwrap_or_default(),
        }
    }

    fn what(self) -> &'static str {
        match self {
            Target::Kind(kind, _) => word(kind),
            Target::Multi(_) => "multi-",
        }
    }
}

/// The Rust side of one counter task.
enum RustCounterLock {
    One(RustLock),
    Multi(RMultiLock),
}

impl RustCounterLock {
    fn new(env: &Env, owner: u64, target: Target<'_>) -> Result<RustCounterLock> {
        Ok(match target {
            Target::Kind(kind, name) => RustCounterLock::One(RustLock::new(&env.rust, owner, kind, name)?),
            Target::Multi(names) => {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                RustCounterLock::Multi(
                    env.rust
                        .multi_lock(&names)
                        .map_err(|e| format!("client.multi_lock({names:?}): {e}"))?
                        .with_owner(owner),
                )
            }
        })
    }

    /// Takes the lock; returns the release and the record's tag (`:t<token>` for a fenced lock).
    async fn hold(&self) -> redisson_lock::Result<(RustCounterGuard, String)> {
        Ok(match self {
            RustCounterLock::One(l) => {
                let g = l.lock(None).await?;
                let tag = g.token().map(|t| format!(":t{t}")).unwrap_or_default();
                (RustCounterGuard::One(g), tag)
            }
            RustCounterLock::Multi(m) => (RustCounterGuard::Multi(m.lock().await?), String::new()),
        })
    }
}

enum RustCounterGuard {
    One(Guard),
    Multi(MultiGuard),
}

impl RustCounterGuard {
    async fn unlock(self) -> redisson_lock::Result<()> {
        match self {
            RustCounterGuard::One(g) => g.unlock().await.map(|_| ()),
            RustCounterGuard::Multi(g) => g.unlock().await,
        }
    }
}

/// [`mixed_counter_on`] lock `name` of `kind`.
pub async fn mixed_counter(
    env: &Env,
    no: usize,
    dir: Dir,
    kind: JavaKind,
    name: &str,
    tasks: (usize, usize, usize),
    gap_ms: u64,
) -> Result<Counted> {
    mixed_counter_on(env, no, dir, Target::Kind(kind, name), tasks, gap_ms).await
}

/// Runs `java_tasks` harness workers (`<kind>Counter`, no sleep inside) and `rust_tasks` Rust
/// owners, `rounds` rounds each, on `target`, the first language alone until its
/// first increment (J→R: Java first). Both sides pause `gap_ms` outside the lock between rounds
/// (0: none; a spin lock needs a gap, or the holder re-takes it before any polling waiter looks). Rust records are `rust:<task>[:t<token>]:<start>:<end>` (the
/// token for a fenced lock, as Java's `fencedCounter`). Checks the counter, the number of records
/// per language, that no two sections overlap, and that the lock passed at least
/// [`MIN_HANDOVERS`] times each way between the languages; the caller checks the rest.
pub async fn mixed_counter_on(
    env: &Env,
    no: usize,
    dir: Dir,
    target: Target<'_>,
    (java_tasks, rust_tasks, rounds): (usize, usize, usize),
    gap_ms: u64,
) -> Result<Counted> {
    let key = format!("{}:counter", target.key_base());
    let ikey = format!("{key}:intervals");
    env.raw.del(&[&key, &ikey]).await?;
    let t0 = Instant::now();
    let java_first = dir != Dir::RustHolds;
    let (mut java, mut rust) = (Vec::new(), Vec::new());
    for phase in 0..2 {
        if (phase == 0) == java_first {
            for i in 0..java_tasks {
                let worker = format!("s{no}{}w{i}", dir.tag());
                java.push(match target {
                    Target::Kind(kind, name) => {
                        env.java
                            .counter_with_gap(kind, &worker, name, &key, rounds as u64, 0, gap_ms)
                            .await?
                    }
                    Target::Multi(names) => {
                        let (names, rounds, gap) = (names.join(","), rounds.to_string(), gap_ms.to_string());
                        env.java
                            .send(&worker, "multiCounter", &[&names, &key, &rounds, "0", &gap])
                            .await?
                    }
                });
            }
        } else {
            for i in 0..rust_tasks {
                let lock = RustCounterLock::new(env, (no as u64) * 100_000 + 80_000 + i as u64, target)?;
                let raw = env.raw.clone();
                let (key, ikey) = (key.clone(), ikey.clone());
                let w = target.what();
                rust.push(tokio::spawn(async move {
                    for _ in 0..rounds {
                        let (g, tok) = lock.hold().await.map_err(|e| format!("rust {w}lock: {e}"))?;
                        let start = now_micros();
                        let n: i64 = raw
                            .get(&key)
                            .await?
                            .map(|v| v.parse::<i64>().map_err(|e| format!("counter `{v}`: {e}")))
                            .transpose()?
                            .unwrap_or(0);
                        raw.q::<()>(redis::cmd("SET").arg(&key).arg(n + 1)).await?;
                        let end = now_micros();
                        raw.q::<i64>(
                            redis::cmd("RPUSH")
                                .arg(&ikey)
                                .arg(format!("rust:{i}{tok}:{start}:{end}")),
                        )
                        .await?;
                        g.unlock().await.map_err(|e| format!("rust {w}unlock: {e}"))?;
                        if gap_ms > 0 {
                            tokio::time::sleep(Duration::from_millis(gap_ms)).await;
                        }
                    }
                    Ok::<(), String>(())
                }));
            }
        }
        if phase == 0 {
            until(
                Duration::from_secs(30),
                "the first language completed a round",
                || async { Ok(env.raw.get(&key).await?.is_some()) },
            )
            .await?;
        }
    }
    let limit = Duration::from_secs(240);
    for p in java {
        let done = p.wait(limit).await?.int()?;
        ensure!(done == rounds as i64, "a Java counter did {done} rounds");
    }
    for j in rust {
        tokio::time::timeout(limit, j)
            .await
            .map_err(|_| "rust counter timed out".to_string())?
            .map_err(|e| format!("rust counter task: {e}"))??;
    }
    let secs = t0.elapsed().as_secs_f64();
    let expected = (java_tasks + rust_tasks) * rounds;
    let total = env.raw.get(&key).await?;
    let records = env.raw.lrange(&ikey).await?;
    env.raw.del(&[&key, &ikey]).await?;
    let mut intervals: Vec<Interval> = records
        .iter()
        .map(|r| Interval::parse(r))
        .collect::<Result<_>>()?;
    intervals.sort_by_key(|i| (i.start, i.end));
    let is_java = |i: &Interval| i.who.starts_with("java:");
    let nj = intervals.iter().filter(|i| is_java(i)).count();
    ensure!(
        total.as_deref() == Some(&expected.to_string()),
        "counter is {total:?}, expected {expected} (lost updates)"
    );
    ensure!(
        intervals.len() == expected,
        "{} interval records, expected {expected}",
        intervals.len()
    );
    ensure!(
        nj == java_tasks * rounds && intervals.len() - nj == rust_tasks * rounds,
        "{nj} Java and {} Rust intervals",
        intervals.len() - nj
    );
    if let Some((x, y)) = find_overlap(&intervals) {
        return Err(format!("critical sections overlap: {x:?} and {y:?}"));
    }
    let mut handovers = (0, 0);
    for w in intervals.windows(2) {
        match (is_java(&w[0]), is_java(&w[1])) {
            (true, false) => handovers.0 += 1,
            (false, true) => handovers.1 += 1,
            _ => {}
        }
    }
    let run = Counted {
        intervals,
        secs,
        java_first,
        handovers,
    };
    let spin = matches!(target, Target::Kind(JavaKind::Spin, _));
    let least = if spin { SPIN_MIN_HANDOVERS } else { MIN_HANDOVERS };
    ensure!(
        handovers.0 >= least && handovers.1 >= least,
        "the lock passed between the languages too rarely (at least {least} each way expected: are waiters of one side {}?): {}",
        if spin { "polling" } else { "woken" },
        run.summary()
    );
    ensure!(
        !spin || run.secs <= SPIN_MAX_SECS,
        "the spin counter took {:.1} s (at most {SPIN_MAX_SECS} s expected: does a waiter stop polling?): {}",
        run.secs,
        run.summary()
    );
    Ok(run)
}
