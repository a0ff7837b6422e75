//! A worker process of the fault run: its part of the contention (hot, long, renewal and victim
//! locks, and the permits of two semaphores), driven by the parent over stdin and reporting its
//! history over stdout.

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
        sem_tasks: env("FAULTS_SEM_TASKS").parse().unwrap(),
        xsem_tasks: env("FAULTS_XSEM_TASKS").parse().unwrap(),
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
    pub(super) sem_tasks: usize,
    pub(super) xsem_tasks: usize,
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
    /// Permits of the `Semaphore` `SEM` (guards: released, or dropped).
    Sem,
    /// Permits of the `PermitExpirableSemaphore` `XSEM` (ids with a lease, released by id).
    XSem,
}

impl Role {
    pub(super) fn label(self) -> &'static str {
        match self {
            Role::Hot => "hot",
            Role::Long => "long",
            Role::Renew => "renew",
            Role::Victim => "victim",
            Role::Sem => "sem",
            Role::XSem => "xsem",
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

/// Orders from the parent on the worker's stdin: `GO`, `SEMPAUSE` / `SEMRESUME` (any number of
/// times), `STOP <CLOCK_MONOTONIC ns>`, then EOF (exit). EOF before `STOP` (the parent died)
/// stops at once.
pub(super) struct Control {
    pub(super) go: tokio::sync::watch::Receiver<bool>,
    pub(super) stop: tokio::sync::watch::Receiver<Option<u64>>,
    pub(super) eof: tokio::sync::watch::Receiver<bool>,
    /// The semaphore tasks are to pause (`SEMPAUSE`) until `SEMRESUME`.
    pub(super) pause: tokio::sync::watch::Receiver<bool>,
}

pub(super) fn read_control() -> Control {
    let (go_tx, go) = tokio::sync::watch::channel(false);
    let (stop_tx, stop) = tokio::sync::watch::channel(None);
    let (eof_tx, eof) = tokio::sync::watch::channel(false);
    let (pause_tx, pause) = tokio::sync::watch::channel(false);
    std::thread::spawn(move || {
        while let Some(line) = read_stdin_line() {
            if line == "GO" {
                go_tx.send_replace(true);
            } else if line == "SEMPAUSE" {
                pause_tx.send_replace(true);
            } else if line == "SEMRESUME" {
                pause_tx.send_replace(false);
            } else if let Some(t) = line.strip_prefix("STOP ").and_then(|t| t.parse().ok()) {
                stop_tx.send_replace(Some(t));
            }
        }
        pause_tx.send_replace(false);
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
    Control { go, stop, eof, pause }
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
    roles.extend(std::iter::repeat_n(Role::Sem, w.sem_tasks));
    roles.extend(std::iter::repeat_n(Role::XSem, w.xsem_tasks));
    let parked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for (i, role) in roles.into_iter().enumerate() {
        let ctx = TaskCtx {
            client: client.clone(),
            writer: writer.clone(),
            process: w.process,
            worker: i as u32,
            role,
            stop: control.stop.clone(),
            pause: control.pause.clone(),
            parked: parked.clone(),
            seed: w.seed ^ (u64::from(w.process) << 20) ^ ((i as u64) << 8),
        };
        tasks.push(match role {
            Role::Sem | Role::XSem => tokio::spawn(sem_task_loop(ctx)),
            _ => tokio::spawn(task_loop(ctx)),
        });
    }
    let pauses = tokio::spawn(pause_manager(
        client.clone(),
        w.process,
        control.pause.clone(),
        parked,
        w.sem_tasks + w.xsem_tasks,
    ));
    let idle = tokio::spawn(idle_marks(client.clone(), writer.clone(), w.process));
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
    pauses.abort();
    let _ = pauses.await;
    idle.abort();
    let _ = idle.await;
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
    let settle_ms = settle.elapsed().as_millis() as u64;
    // Then a graceful shutdown, which waits for the background work (permits given back by
    // dropped guards, acquisitions abandoned in flight settled and what Redis granted them given
    // back): the parent's semaphore checks come after it. Taken after the counters above, so a
    // renewal that should have stopped by itself is not hidden by the shutdown's releases.
    let down = Instant::now();
    let shutdown = match tokio::time::timeout(Duration::from_secs(30), client.shutdown()).await {
        Ok(Ok(())) => "ok".to_owned(),
        Ok(Err(e)) => format!("error: {e}"),
        Err(_) => "did not return within 30 s".to_owned(),
    };
    let line = serde_json::json!({
        "process": w.process,
        "loss_signal": format!("{:?}", st.loss_signal),
        "renewing": st.renewing,
        "channels": st.channels,
        "waiters": st.waiters,
        "queued_releases": st.queued_releases,
        "at_tasks_end": {"renewing": at_end.renewing, "channels": at_end.channels, "waiters": at_end.waiters, "queued_releases": at_end.queued_releases},
        "settle_ms": settle_ms,
        "shutdown": shutdown,
        "shutdown_ms": down.elapsed().as_millis() as u64,
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
    /// `SEMPAUSE` / `SEMRESUME` (semaphore tasks only).
    pub(super) pause: tokio::sync::watch::Receiver<bool>,
    /// Semaphore tasks parked by a pause.
    pub(super) parked: Arc<std::sync::atomic::AtomicUsize>,
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
        Role::Sem | Role::XSem => unreachable!("sem_task_loop"),
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
                sem: None,
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
            Role::Sem | Role::XSem => unreachable!("sem_task_loop"),
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
            sem: None,
        }));
        sections += 1;
        if ctx.role != Role::Hot {
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..=50))).await;
        }
    }
    (sections, attempts)
}

/// Answers `SEMPAUSE`: once every semaphore task is parked (its holding released, its
/// acquisition dropped) and the client's background work has drained (permits of dropped guards
/// given back, abandoned acquisitions settled and their grants given back), prints
/// `FAULTS-SEMPAUSED <json>`; the parent then reads the semaphores and sends `SEMRESUME`.
pub(super) async fn pause_manager(
    client: Client,
    process: u32,
    mut pause: tokio::sync::watch::Receiver<bool>,
    parked: Arc<std::sync::atomic::AtomicUsize>,
    sem_tasks: usize,
) {
    use std::sync::atomic::Ordering;
    loop {
        if pause.wait_for(|p| *p).await.is_err() {
            return;
        }
        let began = Instant::now();
        while parked.load(Ordering::SeqCst) < sem_tasks && began.elapsed() < PAUSE_LIMIT {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let parked_ms = began.elapsed().as_millis() as u64;
        let n_parked = parked.load(Ordering::SeqCst);
        // the semaphore tasks are parked: no new background work of theirs can start, so once the
        // count of background jobs is 0, theirs are done (the lock tasks' may start again)
        while client.stats().queued_releases > 0 && began.elapsed() < PAUSE_LIMIT {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let queued = client.stats().queued_releases;
        let line = serde_json::json!({
            "process": process,
            "parked": n_parked,
            "tasks": sem_tasks,
            "parked_ms": parked_ms,
            "drained_ms": began.elapsed().as_millis() as u64,
            "queued_releases": queued,
            "ok": n_parked == sem_tasks && queued == 0,
        });
        println!("FAULTS-SEMPAUSED {line}");
        std::io::stdout().flush().unwrap();
        if pause.wait_for(|p| !*p).await.is_err() {
            return;
        }
    }
}

/// Waits out a pause of the semaphore tasks (or the stop), counted as parked meanwhile.
async fn park(ctx: &TaskCtx, pause: &mut tokio::sync::watch::Receiver<bool>) {
    use std::sync::atomic::Ordering;
    ctx.parked.fetch_add(1, Ordering::SeqCst);
    tokio::select! {
        _ = pause.wait_for(|p| !*p) => {}
        _ = stop_signal(ctx.stop.clone()) => {}
    }
    ctx.parked.fetch_sub(1, Ordering::SeqCst);
}

/// What a semaphore acquisition got.
enum Permit {
    Guard(redisson_lock::SemaphoreGuard),
    Id(redisson_lock::PermitId),
}

/// One semaphore task: set the semaphore up when due (`try_set_permits(N)`, a no-op while it
/// exists; recorded when it created it), acquire, hold 0–3 ms, give back, record; parks while
/// the parent pauses the semaphore tasks; until told to stop. Returns (sections, attempts
/// without a section).
pub(super) async fn sem_task_loop(ctx: TaskCtx) -> (usize, usize) {
    let mut rng = StdRng::seed_from_u64(ctx.seed);
    let (name, kind, capacity) = match ctx.role {
        Role::Sem => (SEM, SemKind::Semaphore, SEM_PERMITS),
        _ => (XSEM, SemKind::Expirable, XSEM_PERMITS),
    };
    let sem = ctx.client.semaphore(name).expect("a valid semaphore name");
    let xsem = ctx
        .client
        .permit_expirable_semaphore(name)
        .expect("a valid semaphore name");
    let mut pause = ctx.pause.clone();
    let (mut sections, mut attempts) = (0usize, 0usize);
    let mut last_setup: Option<Instant> = None;
    let mut seq: u64 = 0;
    while !stop_due(&ctx.stop) {
        if *pause.borrow() {
            park(&ctx, &mut pause).await;
            continue;
        }
        // After data loss the semaphore is gone (and an acquisition waits for ever): set it up
        // again now and then, and after an acquisition that found no permits for a while.
        if last_setup.is_none_or(|t| t.elapsed() >= SEM_SETUP_EVERY) {
            let start = now_ns();
            let set = async {
                match kind {
                    SemKind::Semaphore => sem.try_set_permits(i64::from(capacity)).await,
                    SemKind::Expirable => xsem.try_set_permits(i64::from(capacity)).await,
                }
            };
            let created = tokio::select! {
                r = set => matches!(r, Ok(true)),
                _ = stop_signal(ctx.stop.clone()) => false,
            };
            if created {
                ctx.writer.record(&Record::Reinit(common::history::Reinit {
                    lock: name.to_owned(),
                    by: format!("p{}/w{}", ctx.process, ctx.worker),
                    start,
                    end: now_ns(),
                }));
            }
            last_setup = Some(Instant::now());
        }
        seq += 1;
        let permits: u32 = if kind == SemKind::Semaphore && rng.random_bool(0.15) {
            2
        } else {
            1
        };
        let wait = Duration::from_millis(rng.random_range(20..=200));
        let waits_forever = rng.random_bool(0.5);
        let method = match (kind, waits_forever) {
            (SemKind::Semaphore, true) => "acquire",
            (SemKind::Semaphore, false) => "try_acquire_for",
            (SemKind::Expirable, true) => "acquire_with_lease",
            (SemKind::Expirable, false) => "try_acquire_for",
        };
        let info = Sem {
            kind,
            permits,
            capacity,
        };
        let acquire_start = now_ns();
        let acquire = async {
            let n = u64::from(permits);
            match (kind, waits_forever) {
                (SemKind::Semaphore, true) => sem.acquire(n).await.map(|g| Some(Permit::Guard(g))),
                (SemKind::Semaphore, false) => {
                    sem.try_acquire_for(n, wait).await.map(|g| g.map(Permit::Guard))
                }
                (SemKind::Expirable, true) => xsem
                    .acquire_with_lease(XSEM_LEASE)
                    .await
                    .map(|g| Some(Permit::Id(g.forget()[0]))),
                (SemKind::Expirable, false) => xsem
                    .try_acquire_for(wait, Some(XSEM_LEASE))
                    .await
                    .map(|g| g.map(|g| Permit::Id(g.forget()[0]))),
            }
        };
        let res = tokio::select! {
            r = acquire => Ok(r),
            _ = stop_signal(ctx.stop.clone()) => Err(AttemptResult::Cancelled),
            _ = pause.wait_for(|p| *p) => Err(AttemptResult::GaveUp),
            _ = tokio::time::sleep(SEM_PATIENCE) => {
                last_setup = None; // no permits for a while: the semaphore may be gone
                Err(AttemptResult::GaveUp)
            }
        };
        let attempt = |outcome: AttemptResult| {
            Record::Attempt(Attempt {
                lock: name.to_owned(),
                process: ctx.process,
                worker: ctx.worker,
                role: ctx.role.label().into(),
                method: method.into(),
                start: acquire_start,
                end: now_ns(),
                wait_ms: (!waits_forever).then_some(wait.as_millis() as u64),
                outcome,
                sem: Some(info),
            })
        };
        let permit = match res {
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
            Ok(Ok(Some(p))) => p,
        };
        let start = now_ns();
        tokio::time::sleep(Duration::from_micros(rng.random_range(0..=3_000))).await;
        let end = now_ns();
        let (owner, unlock) = match permit {
            Permit::Guard(g) if rng.random_bool(0.15) => {
                drop(g); // given back in the background
                (format!("p{}:{seq}", ctx.process), UnlockResult::Dropped)
            }
            Permit::Guard(g) => (
                format!("p{}:{seq}", ctx.process),
                match tokio::time::timeout(UNLOCK_LIMIT, g.release()).await {
                    Ok(Ok(())) => UnlockResult::Released,
                    Ok(Err(e)) => UnlockResult::Error {
                        message: e.to_string(),
                    },
                    Err(_) => UnlockResult::Hung,
                },
            ),
            Permit::Id(id) => {
                let r = if rng.random_bool(0.3) {
                    match tokio::time::timeout(UNLOCK_LIMIT, xsem.try_release(id)).await {
                        Ok(Ok(true)) => UnlockResult::Released,
                        Ok(Ok(false)) => UnlockResult::NotHeld,
                        Ok(Err(e)) => UnlockResult::Error {
                            message: e.to_string(),
                        },
                        Err(_) => UnlockResult::Hung,
                    }
                } else {
                    match tokio::time::timeout(UNLOCK_LIMIT, xsem.release(id)).await {
                        Ok(Ok(())) => UnlockResult::Released,
                        Ok(Err(Error::NotHeld { .. })) => UnlockResult::NotHeld,
                        Ok(Err(e)) => UnlockResult::Error {
                            message: e.to_string(),
                        },
                        Err(_) => UnlockResult::Hung,
                    }
                };
                (format!("p{}:{id}", ctx.process), r)
            }
        };
        let unlock_done = now_ns();
        ctx.writer.record(&Record::Section(Section {
            party: Party::Rust,
            lock: name.to_owned(),
            process: ctx.process,
            worker: ctx.worker,
            role: ctx.role.label().into(),
            method: method.into(),
            owner,
            acquire_start,
            start,
            end,
            unlock_done,
            unlock,
            lost: None,
            sem: Some(info),
        }));
        sections += 1;
        // a pause between holdings: contended enough (the tasks of every process want more
        // permits than there are), without taking the CPU from the lock tasks
        tokio::time::sleep(Duration::from_micros(rng.random_range(1_000..=5_000))).await;
    }
    (sections, attempts)
}

/// Records an `Idle` marker whenever the client's background queue is seen empty (every 100 ms):
/// the semaphore checker then knows that every give-back queued before it had applied.
pub(super) async fn idle_marks(client: Client, writer: Arc<HistoryWriter>, process: u32) {
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let from = now_ns();
        let queued = client.stats().queued_releases;
        let to = now_ns();
        if queued == 0 {
            writer.record(&Record::Idle(common::history::Idle { process, from, to }));
        }
    }
}
