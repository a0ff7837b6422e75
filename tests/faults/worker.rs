//! A worker process of the fault run: its part of the contention (hot, long and renewal roles),
//! driven by the parent over stdin and reporting its history over stdout.

use super::*;

/// A worker process's part of the run. Ignored (and a no-op without `FAULTS_ROLE=worker`): the
/// parent test runs it with `--exact worker::worker_process --ignored`.
#[test]
#[ignore = "a worker process of contention_under_faults, started by it"]
pub(super) fn worker_process() {
    if std::env::var(ROLE_VAR).as_deref() != Ok("worker") {
        return;
    }
    let env = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("worker: {k} not set"));
    let w = WorkerEnv {
        url: env("FAULTS_URL"),
        history: PathBuf::from(env("FAULTS_HISTORY")),
        seed: env("FAULTS_SEED").parse().unwrap(),
        process: env("FAULTS_PROCESS").parse().unwrap(),
        hot_tasks: env("FAULTS_HOT_TASKS").parse().unwrap(),
        long_tasks: env("FAULTS_LONG_TASKS").parse().unwrap(),
    };
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(worker_main(w));
}

pub(super) struct WorkerEnv {
    pub(super) url: String,
    pub(super) history: PathBuf,
    pub(super) seed: u64,
    pub(super) process: u32,
    pub(super) hot_tasks: usize,
    pub(super) long_tasks: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// Contended hot locks, 0–3 ms holds, every acquire method.
    Hot,
    /// Contended watchdog holds of 1.2–3.5 s: renewals under faults.
    Long,
    /// This process's own lock, held for the whole run (taken again after a loss): it is in
    /// every renewal batch (F30), and must survive every fault that loses no data (S3, F2).
    Renew,
    /// The lock the nemesis writes a key of another type over, held 4–6 s at a time (longer
    /// than the watchdog's trust window, so a renewal batch meets the foreign key for longer).
    Victim,
}

impl Role {
    pub(super) fn label(self) -> &'static str {
        match self {
            Role::Hot => "hot",
            Role::Long => "long",
            Role::Renew => "renew",
            Role::Victim => "victim",
        }
    }
}

pub(super) fn read_stdin_line() -> Option<String> {
    let mut s = String::new();
    match std::io::stdin().lock().read_line(&mut s) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(s.trim().to_owned()),
    }
}

/// Orders from the parent on the worker's stdin: `GO`, `STOP <CLOCK_MONOTONIC ns>`, then EOF
/// (exit). EOF before `STOP` (the parent died) stops at once.
pub(super) struct Control {
    pub(super) go: tokio::sync::watch::Receiver<bool>,
    pub(super) stop: tokio::sync::watch::Receiver<Option<u64>>,
    pub(super) eof: tokio::sync::watch::Receiver<bool>,
}

pub(super) fn read_control() -> Control {
    let (go_tx, go) = tokio::sync::watch::channel(false);
    let (stop_tx, stop) = tokio::sync::watch::channel(None);
    let (eof_tx, eof) = tokio::sync::watch::channel(false);
    std::thread::spawn(move || {
        while let Some(line) = read_stdin_line() {
            if line == "GO" {
                go_tx.send_replace(true);
            } else if let Some(t) = line.strip_prefix("STOP ").and_then(|t| t.parse().ok()) {
                stop_tx.send_replace(Some(t));
            }
        }
        go_tx.send_replace(true);
        stop_tx.send_if_modified(|s| {
            let unset = s.is_none();
            if unset {
                *s = Some(0);
            }
            unset
        });
        eof_tx.send_replace(true);
    });
    Control { go, stop, eof }
}

/// The stop time has come.
pub(super) fn stop_due(stop: &tokio::sync::watch::Receiver<Option<u64>>) -> bool {
    matches!(*stop.borrow(), Some(t) if now_ns() >= t)
}

/// Resolves at the stop time (once the parent has set one).
pub(super) async fn stop_signal(mut stop: tokio::sync::watch::Receiver<Option<u64>>) {
    let t = stop
        .wait_for(Option::is_some)
        .await
        .map(|v| v.unwrap_or(0))
        .unwrap_or(0);
    tokio::time::sleep_until(instant_at(t)).await;
}

pub(super) async fn worker_main(w: WorkerEnv) {
    let client = Client::builder()
        .url(w.url.clone())
        .config(config())
        .build()
        .await
        .unwrap_or_else(|e| panic!("worker {}: connect to {}: {e}", w.process, w.url));
    let mut control = read_control();
    println!("FAULTS-READY {}", w.process);
    std::io::stdout().flush().unwrap();
    let _ = control.go.wait_for(|g| *g).await;
    let writer = Arc::new(HistoryWriter::create(&w.history));

    let mut roles = Vec::new();
    roles.extend(std::iter::repeat_n(Role::Hot, w.hot_tasks));
    roles.extend(std::iter::repeat_n(Role::Long, w.long_tasks));
    roles.push(Role::Renew);
    roles.push(Role::Victim);
    let mut tasks = Vec::new();
    for (i, role) in roles.into_iter().enumerate() {
        let ctx = TaskCtx {
            client: client.clone(),
            writer: writer.clone(),
            process: w.process,
            worker: i as u32,
            role,
            stop: control.stop.clone(),
            seed: w.seed ^ (u64::from(w.process) << 20) ^ ((i as u64) << 8),
        };
        tasks.push(tokio::spawn(task_loop(ctx)));
    }
    let mut counts = (0usize, 0usize);
    let mut panics = Vec::new();
    for t in tasks {
        match t.await {
            Ok((s, a)) => {
                counts.0 += s;
                counts.1 += a;
            }
            Err(e) => panics.push(e.to_string()),
        }
    }
    writer.flush();
    assert!(
        panics.is_empty(),
        "worker {}: tasks panicked: {panics:?}",
        w.process
    );

    // Leaks (L4): renewal entries, channels and waiters go back to 0 once every task is done
    // (cancelled acquisitions clean up in the background, so give that a moment).
    let at_end = client.stats();
    let settle = Instant::now();
    while busy(&client) && settle.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let st = client.stats();
    let line = serde_json::json!({
        "process": w.process,
        "renewing": st.renewing,
        "channels": st.channels,
        "waiters": st.waiters,
        "at_tasks_end": {"renewing": at_end.renewing, "channels": at_end.channels, "waiters": at_end.waiters},
        "settle_ms": settle.elapsed().as_millis() as u64,
        "sections": counts.0,
        "attempts": counts.1,
    });
    println!("FAULTS-STATS {line}");
    std::io::stdout().flush().unwrap();
    // Stay connected (and idle) while the parent checks Redis, until it closes our stdin.
    let _ = control.eof.wait_for(|e| *e).await;
    drop(client);
}

/// Whether the client still renews, subscribes or waits for anything.
pub(super) fn busy(client: &Client) -> bool {
    let s = client.stats();
    s.renewing + s.channels + s.waiters > 0
}

pub(super) struct TaskCtx {
    pub(super) client: Client,
    pub(super) writer: Arc<HistoryWriter>,
    pub(super) process: u32,
    pub(super) worker: u32,
    pub(super) role: Role,
    pub(super) stop: tokio::sync::watch::Receiver<Option<u64>>,
    pub(super) seed: u64,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Method {
    Lock,
    TryFor(Duration),
    Lease(Duration),
}

impl Method {
    pub(super) fn label(self) -> &'static str {
        match self {
            Method::Lock => "lock",
            Method::TryFor(_) => "try_lock_for",
            Method::Lease(_) => "lock_with_lease",
        }
    }
}

/// One task: acquire, hold while watching for a loss, unlock, record; until told to stop.
/// Returns (sections, attempts without a section).
pub(super) async fn task_loop(ctx: TaskCtx) -> (usize, usize) {
    let mut rng = StdRng::seed_from_u64(ctx.seed);
    let names: Vec<String> = match ctx.role {
        Role::Hot => hot_names(),
        Role::Long => long_names(),
        Role::Renew => vec![renew_name(ctx.process)],
        Role::Victim => vec![VICTIM.to_owned()],
    };
    let (mut sections, mut attempts) = (0usize, 0usize);
    let mut seq: u64 = 0;
    while !stop_due(&ctx.stop) {
        seq += 1;
        // A fresh owner per acquisition (unique in this process; the client id makes it unique
        // across processes): a stale hold of an earlier iteration can never be re-entered, so
        // `Partial` can only come from one acquisition counted twice.
        let owner = ((u64::from(ctx.worker) + 1) << 32) | seq;
        let name = &names[rng.random_range(0..names.len())];
        let lock = ctx
            .client
            .lock(name)
            .expect("a valid lock name")
            .with_owner(owner);
        let method = match ctx.role {
            Role::Hot => match rng.random_range(0..100) {
                0..40 => Method::Lock,
                40..75 => Method::TryFor(Duration::from_millis(rng.random_range(20..=200))),
                _ => Method::Lease(LEASE),
            },
            _ => Method::Lock,
        };
        let acquire_start = now_ns();
        let acquire = async {
            match method {
                Method::Lock => lock.lock().await.map(Some),
                Method::TryFor(w) => lock.try_lock_for(w).await,
                Method::Lease(l) => lock.lock_with_lease(l).await.map(Some),
            }
        };
        let res = tokio::select! {
            r = acquire => Ok(r),
            _ = stop_signal(ctx.stop.clone()) => Err(AttemptResult::Cancelled),
            _ = tokio::time::sleep(ACQUIRE_LIMIT) => Err(AttemptResult::Hung),
        };
        let attempt = |outcome: AttemptResult| {
            Record::Attempt(Attempt {
                lock: name.clone(),
                process: ctx.process,
                worker: ctx.worker,
                role: ctx.role.label().into(),
                method: method.label().into(),
                start: acquire_start,
                end: now_ns(),
                wait_ms: match method {
                    Method::TryFor(w) => Some(w.as_millis() as u64),
                    _ => None,
                },
                outcome,
            })
        };
        let guard = match res {
            Err(outcome) => {
                ctx.writer.record(&attempt(outcome));
                attempts += 1;
                continue;
            }
            Ok(Ok(None)) => {
                ctx.writer.record(&attempt(AttemptResult::NotAcquired));
                attempts += 1;
                continue;
            }
            Ok(Err(e)) => {
                ctx.writer.record(&attempt(AttemptResult::Error {
                    message: e.to_string(),
                }));
                attempts += 1;
                // Redis may be down: do not spin
                tokio::time::sleep(Duration::from_millis(rng.random_range(10..=50))).await;
                continue;
            }
            Ok(Ok(Some(g))) => g,
        };
        let start = now_ns();
        let hold = match ctx.role {
            Role::Hot => Duration::from_micros(rng.random_range(0..=3_000)),
            Role::Long => Duration::from_millis(rng.random_range(1_200..=3_500)),
            Role::Renew => Duration::from_secs(3_600), // until the stop (or a loss)
            Role::Victim => Duration::from_millis(rng.random_range(4_000..=6_000)),
        };
        let lost_signal = guard.lost();
        let mut lost = tokio::select! {
            reason = lost_signal => Some(Loss { reason: format!("{reason:?}"), learned: now_ns() }),
            _ = tokio::time::sleep(hold) => None,
            _ = stop_signal(ctx.stop.clone()) => None,
        };
        if lost.is_none() {
            if let LeaseState::Lost(reason) = guard.state() {
                lost = Some(Loss {
                    reason: format!("{reason:?}"),
                    learned: now_ns(),
                });
            }
        }
        let end = now_ns();
        let unlock = match tokio::time::timeout(UNLOCK_LIMIT, guard.unlock()).await {
            Ok(Ok(Unlocked::Released)) => UnlockResult::Released,
            Ok(Ok(Unlocked::Partial)) => UnlockResult::Partial,
            Ok(Ok(other)) => UnlockResult::Error {
                message: format!("unexpected unlock result {other:?}"),
            },
            Ok(Err(Error::NotHeld { .. })) => UnlockResult::NotHeld,
            Ok(Err(e)) => UnlockResult::Error {
                message: e.to_string(),
            },
            Err(_) => UnlockResult::Hung,
        };
        let unlock_done = now_ns();
        ctx.writer.record(&Record::Section(Section {
            party: Party::Rust,
            lock: name.clone(),
            process: ctx.process,
            worker: ctx.worker,
            role: ctx.role.label().into(),
            method: method.label().into(),
            owner: format!("p{}:{owner}", ctx.process),
            acquire_start,
            start,
            end,
            unlock_done,
            unlock,
            lost,
        }));
        sections += 1;
        if ctx.role != Role::Hot {
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..=50))).await;
        }
    }
    (sections, attempts)
}
