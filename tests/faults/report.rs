//! The fault run's report (`tests/FAULT-REPORT.md`): what ran, what each scenario saw, and the
//! checker's verdicts, with repository-relative paths only.

use super::*;

pub(super) struct ReportInput<'a> {
    pub(super) mode: &'a Mode,
    pub(super) redis_version: &'a str,
    /// The network run's toxiproxy version.
    pub(super) toxiproxy: Option<&'a str>,
    pub(super) h: &'a History,
    pub(super) summary: &'a common::history::Summary,
    pub(super) overlaps_bad: &'a [&'a common::history::Overlap],
    pub(super) overlaps_ok: &'a [&'a common::history::Overlap],
    pub(super) unlocks: &'a [common::history::UnlockProblem],
    pub(super) losses: &'a [common::history::LossProblem],
    pub(super) sampler: &'a SamplerReport,
    pub(super) resources: &'a Resources,
    pub(super) failures: &'a [String],
    pub(super) run_dir: &'a Path,
    pub(super) wall: Duration,
    pub(super) java: &'a JavaFigures,
    pub(super) handoffs: &'a Handoffs,
    pub(super) excess_bad: &'a [Excess],
    pub(super) excess_ok: &'a [Excess],
    pub(super) reinits: &'a [ReinitProblem],
    pub(super) sem_figures: &'a BTreeMap<String, SemFigures>,
    pub(super) sem_checks: &'a [SemCheck],
}

/// `YYYY-MM-DD HH:MM UTC` from the system clock (civil-from-days, no date crate).
pub(super) fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// One line on the Java party: `skipped (no JDK ...)`, or its figures.
pub(super) fn java_line(j: &JavaFigures, s: &common::history::Summary) -> String {
    if j.skipped() {
        return j.status.clone();
    }
    let rounds: usize = j.workers.iter().map(|w| w.rounds).sum();
    format!(
        "Redisson {} ({} threads), {rounds} rounds, {} sections checked against {} Rust sections",
        j.version,
        j.workers.len(),
        s.by_party.get(Party::Java.label()).copied().unwrap_or(0),
        s.sections
    )
}

/// The report's section on the Java party.
pub(super) fn java_report(o: &mut String, r: &ReportInput<'_>) {
    let j = r.java;
    let _ = writeln!(o, "## Java party (real Redisson)\n");
    if j.skipped() {
        let _ = writeln!(
            o,
            "Java party: {}. Java/Rust mutual exclusion was not checked in this run{}.\n",
            j.status,
            if j.status.starts_with("skipped") {
                " (`CI=true` makes a missing JDK a failure)"
            } else {
                "; this fails the run"
            }
        );
        return;
    }
    let _ = writeln!(
        o,
        "Redisson {} (harness jar `{}`, from {}), client id `{}`; {} worker threads loop `getLock(NAME).lock()` (watchdog {:?}, \
         the Rust workers' `--watchdog-ms`) on a random `fault:hot:*` lock, hold it 0–{JAVA_MAX_HOLD_MS} ms, `unlock()`, then \
         `getHoldCount()` (a count left over is a `partial` round: the thread held the lock more than once, because Redisson \
         re-sent an acquire whose reply was lost, or because this `lock()` re-entered a hold left by an earlier round whose \
         `lock()` threw after it had run or whose `unlock()` failed; the extra holds are unlocked). They run through the warm-up and phase A (faults without data loss) and stop before phase B. \
         Their sections (from `lock()` returning to the `unlock()` call, `System.nanoTime()`) are checked for overlap with every \
         other section; their exceptions and unlock results are listed here, not judged.\n",
        j.version,
        j.jar,
        j.source,
        j.client_id,
        j.workers.len(),
        WATCHDOG,
    );
    let _ = writeln!(o, "* Clock: {}.", j.clock_line());
    let _ = writeln!(
        o,
        "* Timing: JVM start to ready {:.2} s (started with the Rust workers); Java began contending {:.2} s into the \
         {:?} warm-up; `stopContend` to the last result {:.2} s; `exit` {:.2} s.",
        j.ready.as_secs_f64(),
        j.joined as f64 / 1e9,
        r.mode.warmup,
        j.stop.as_secs_f64(),
        j.exit.as_secs_f64()
    );
    let (jr, rj) = (
        r.handoffs.between(Party::Java, Party::Rust),
        r.handoffs.between(Party::Rust, Party::Java),
    );
    let gap = |from, to| {
        r.handoffs
            .min_gap_ns
            .get(&(from, to))
            .map(|g| format!("{:.3} ms", *g as f64 / 1e6))
            .unwrap_or_else(|| "-".into())
    };
    let _ = writeln!(
        o,
        "* Hand-overs of a lock: Java → Rust {jr} (shortest gap {}), Rust → Java {rj} (shortest gap {}).",
        gap(Party::Java, Party::Rust),
        gap(Party::Rust, Party::Java)
    );
    let java_bad = r.overlaps_bad.iter().filter(|x| x.java_vs_rust(r.h)).count();
    let _ = writeln!(
        o,
        "* Overlaps of a Java section with a Rust section: {java_bad}; with another Java section: {}.\n",
        r.overlaps_bad
            .iter()
            .filter(|x| x.parties(r.h) == (Party::Java, Party::Java))
            .count()
    );
    let _ = writeln!(
        o,
        "| worker | thread | rounds | sections | stopped by | ran for |\n|---|---:|---:|---:|---|---:|"
    );
    for w in &j.workers {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {:.1} s |",
            w.name, w.thread_id, w.rounds, w.sections, w.stopped, w.elapsed_s
        );
    }
    let _ = writeln!(o);
    let mut outcomes = String::new();
    let _ = writeln!(outcomes, "| round outcome | count |\n|---|---:|");
    for (k, v) in &j.outcomes {
        let _ = writeln!(outcomes, "| {k} | {v} |");
    }
    o.push_str(&outcomes);
    let _ = writeln!(o);
    if j.extra_holds > 0 {
        let _ = writeln!(
            o,
            "`partial` rounds found {} extra holds in Redis (released by the harness).\n",
            j.extra_holds
        );
    }
    if j.exceptions.is_empty() {
        let _ = writeln!(o, "Java exceptions: none.\n");
    } else {
        let _ = writeln!(
            o,
            "| Java exception (call: class) | count | first message |\n|---|---:|---|"
        );
        for (k, v) in &j.exceptions {
            let m = j.exception_examples.get(k).map(String::as_str).unwrap_or("");
            let _ = writeln!(o, "| {k} | {v} | {} |", m.replace('|', "\\|").replace('\n', " "));
        }
        let _ = writeln!(o);
    }
    let levels: Vec<String> = j.stderr_levels.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(
        o,
        "JVM stderr (Redisson's log at WARN and above): {}{}\n",
        if levels.is_empty() {
            "empty".to_owned()
        } else {
            format!("{} lines", levels.join(", "))
        },
        if j.stderr_examples.is_empty() {
            String::new()
        } else {
            format!(
                "; e.g. {}",
                j.stderr_examples
                    .iter()
                    .map(|e| format!("`{}`", e.replace('`', "'")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    );
}

/// The report's section on the semaphores: what the tasks do, the figures per semaphore (the
/// most permits held at once against N, excesses), and the counts at the quiescent checks.
pub(super) fn semaphore_report(o: &mut String, r: &ReportInput<'_>) {
    let m = r.mode;
    let _ = writeln!(
        o,
        "## Semaphores
"
    );
    let _ = writeln!(
        o,
        "Per worker process {} tasks take permits of `{SEM}` (`Semaphore`, N = {SEM_PERMITS}: `acquire` 50 %, \
         `try_acquire_for(20–200 ms)` 50 %, 1 permit, 2 at 15 %; the guard `release().await`d 85 %, dropped 15 %) and {} of \
         `{XSEM}` (`PermitExpirableSemaphore`, N = {XSEM_PERMITS}: `acquire_with_lease({XSEM_LEASE:?})` 50 %, \
         `try_acquire_for(20–200 ms, {XSEM_LEASE:?})` 50 %; `release(id)` 70 %, `try_release(id)` 30 %), hold 0–3 ms. An \
         acquisition that finds no permits for {SEM_PATIENCE:?} is given up (settled by the client in the background); each \
         task re-runs `try_set_permits(N)` every {SEM_SETUP_EVERY:?} and after giving up (a no-op while the semaphore exists; \
         after data loss it sets it up again). Each holding is a section (from the acquire call's return to the release call \
         or the guard's drop): at no instant may they hold more than N permits; an excess is explained only by a data-loss \
         fault between an earlier holder's acquisition and the later ones' (for `{SEM}` also by permits from before the loss \
         given back into the count set up after it), and only in phase B.\n",
        m.sem_tasks, m.xsem_tasks
    );
    o.push_str(&semaphore_markdown(r.h, r.sem_figures));
    let _ = writeln!(
        o,
        "Counts read by the parent while no task held or was acquiring a permit and every worker's background work had \
         drained (and after the workers' `client.shutdown()`); after data loss a `Semaphore`'s count is undecidable (a permit \
         taken before the loss and given back after the set-up counts once more), so the parent leaves both at exactly N \
         after each check, and the last check judges the stretch after the data-loss faults:\n"
    );
    let _ = writeln!(
        o,
        "| when | semaphore | available | held under an id | expected | verdict | reset to N |\n|---|---|---:|---:|---:|---|---|"
    );
    for c in r.sem_checks {
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {} | {} | {} |",
            c.label,
            c.lock,
            c.available
                .map_or_else(|| "no count".to_owned(), |a| a.to_string()),
            c.acquired.map_or_else(|| "-".to_owned(), |a| a.to_string()),
            c.expected,
            c.verdict.replace('|', "\\|"),
            match c.reset_to {
                Some(_) => "yes",
                None => "no",
            }
        );
    }
    let _ = writeln!(o);
}

pub(super) fn render_report(r: &ReportInput<'_>) -> String {
    const LIST: usize = 25;
    let mut o = String::new();
    let m = r.mode;
    let _ = writeln!(
        o,
        "# {} run ({})\n\nGenerated by `tests/faults/` ({}) on {}; do not edit by hand. {}\n",
        if m.net { "Network-fault" } else { "Fault-injection" },
        match m.soak {
            Some(d) => format!("soak of {} min, the server's faults and the network's mixed", d.as_secs() / 60),
            None if m.full => "full".into(),
            None => "quick".into(),
        },
        match (m.full, m.net) {
            _ if m.soak.is_some() => "`scripts/soak [minutes]`, i.e. `FAULTS_SOAK_SECS=<s> cargo test --release --test faults contention_under_network_faults -- --nocapture`",
            (true, false) => "`scripts/faults`, i.e. `FAULTS_FULL=1 cargo test --release --test faults contention_under_faults -- --nocapture`",
            (true, true) => "`scripts/faults --network`, i.e. `FAULTS_FULL=1 cargo test --release --test faults contention_under_network_faults -- --nocapture`",
            (false, false) => "`cargo test --test faults contention_under_faults`",
            (false, true) => "`cargo test --test faults contention_under_network_faults`",
        },
        utc_now(),
        format_args!("Repeat the schedule with `FAULTS_SEED={}`.", m.seed)
    );
    let _ = writeln!(
        o,
        "redis-server {} on loopback, {} CPUs; {} worker processes × ({} hot + {} long + 1 renew + 1 victim + {} `{SEM}` + {} `{XSEM}`) tasks; \
         watchdog {:?}, command timeout {:?}, poll interval {:?}, `lock_with_lease({:?})`; phases: warm-up {:?}, \
         A (no data loss) {:?}, B (data loss) {:?}; wall time {:.1} s.{}\n",
        r.redis_version,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        m.processes,
        m.hot_tasks,
        m.long_tasks,
        m.sem_tasks,
        m.xsem_tasks,
        WATCHDOG,
        COMMAND_TIMEOUT,
        POLL_INTERVAL,
        LEASE,
        m.warmup,
        m.phase_a,
        m.phase_b,
        r.wall.as_secs_f64(),
        match r.toxiproxy {
            Some(v) => format!(
                " Every client, Rust and Java, connects through toxiproxy {v} (the nemesis and the checks go to redis-server directly)."
            ),
            None => String::new(),
        }
    );
    let _ = writeln!(
        o,
        "Locks: `fault:hot:0..{}` (0–3 ms holds; `lock()` 40 %, `try_lock_for(20–200 ms)` 35 %, `lock_with_lease` 25 %), \
         `fault:long:0..{}` (watchdog holds 1.2–3.5 s), `fault:renew:<process>` (one per process, held for the whole run and \
         taken again after a loss: in every renewal batch), `{VICTIM}` (held 4–6 s; the nemesis waits for a fresh hold and writes a string or list over it for {:?}).\n",
        HOT_LOCKS - 1,
        LONG_LOCKS - 1,
        POISON_TTL
    );
    let _ = writeln!(
        o,
        "Loss signal of the Rust workers (`ClientStats::loss_signal` when their tasks finished): {}.\n",
        if r.resources.loss_signals.is_empty() {
            "not reported".to_owned()
        } else {
            r.resources.loss_signals.join(", ")
        }
    );
    let steps = r.h.faults.iter().filter(|f| f.kind == "clock-step").count();
    let _ = writeln!(
        o,
        "Wall clock (by which Redis expires keys): compared with the monotonic clock every 5 ms through the run; {}.\n",
        match steps {
            0 => "no step of 100 ms or more".to_owned(),
            n => format!(
                "{n} step(s) of 100 ms or more, listed among the faults as `clock-step` (one forward by more than the \
                 command timeout erases every lock, as a restart does)"
            ),
        }
    );
    let _ = writeln!(o, "**Java party: {}.**\n", java_line(r.java, r.summary));
    let _ = writeln!(o, "## Verdict\n");
    if r.failures.is_empty() {
        let _ = writeln!(o, "**PASS**: no overlaps outside explained data loss, every unlock after one acquire `Released` (or explained), no unexplained losses, never more semaphore permits held than N outside explained data loss, every decidable semaphore count exactly N, no leaks.\n");
    } else {
        let _ = writeln!(o, "**FAIL**: {} problems.\n", r.failures.len());
        for f in r.failures.iter().take(60) {
            let _ = writeln!(o, "* {}", f.replace('\n', "\n  "));
        }
        if r.failures.len() > 60 {
            let _ = writeln!(o, "* ... and {} more", r.failures.len() - 60);
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "## Checks\n");
    let _ = writeln!(o, "| check | result |\n|---|---|");
    let _ = writeln!(
        o,
        "| (a) overlapping sections outside explained data loss | {} |",
        r.overlaps_bad.len()
    );
    let _ = writeln!(
        o,
        "| (a) of which a Java (Redisson) section and a Rust section{} | {} |",
        if r.java.ran {
            ""
        } else {
            " (no Java party in this run)"
        },
        r.overlaps_bad.iter().filter(|x| x.java_vs_rust(r.h)).count()
    );
    let _ = writeln!(
        o,
        "| (c) overlaps explained by data loss (phase B, a hold lost) | {} |",
        r.overlaps_ok.len()
    );
    let partial = r
        .unlocks
        .iter()
        .filter(|u| r.h.sections[u.section].unlock == UnlockResult::Partial)
        .count();
    let severed_unlocks = r.unlocks.iter().filter(|u| u.severed.is_some()).count();
    let severed_losses = r.losses.iter().filter(|l| l.severed.is_some()).count();
    let _ = writeln!(o, "| (b) unlock `Partial` after one acquire | {partial} |");
    let _ = writeln!(
        o,
        "| (b) other unexplained unlock results | {} |",
        r.unlocks.len() - partial - severed_unlocks
    );
    let _ = writeln!(
        o,
        "| (b) `NotHeld` after a network outage (or a stall longer than the watchdog covers) within a watchdog timeout (the hold ran out before the release got through: explained) | {severed_unlocks} |"
    );
    let _ = writeln!(
        o,
        "| (e) losses without a fault that erased the lock or cut the client off | {} |",
        r.losses.len() - severed_losses
    );
    let _ = writeln!(
        o,
        "| (e) losses signalled after a network outage (or a stall longer than the watchdog covers) in the trust window (explained) | {severed_losses} |"
    );
    let no_ttl = r.sampler.violations.iter().filter(|s| s.pttl == -1).count();
    let _ = writeln!(
        o,
        "| sampler: lock key without TTL / hash with 2+ owners ({} rounds, {} failed during faults) | {} / {} |",
        r.sampler.rounds,
        r.sampler.failed_rounds,
        no_ttl,
        r.sampler.violations.len() - no_ttl
    );
    let _ = writeln!(
        o,
        "| (s) semaphore permits held beyond N outside explained data loss | {} |",
        r.excess_bad.len()
    );
    let _ = writeln!(
        o,
        "| (s) semaphore excesses explained by data loss (phase B) | {} |",
        r.excess_ok.len()
    );
    let _ = writeln!(
        o,
        "| (s) semaphore created again without data loss | {} |",
        r.reinits.len()
    );
    let judged: Vec<&SemCheck> = r
        .sem_checks
        .iter()
        .filter(|c| !c.verdict.starts_with("not judged"))
        .collect();
    let _ = writeln!(
        o,
        "| (s) semaphore counts not N at a quiescent check or after shutdown ({} judged, {} undecidable) | {} |",
        judged.len(),
        r.sem_checks.len() - judged.len(),
        judged.iter().filter(|c| c.verdict != "ok").count()
    );
    let _ = writeln!(o);
    java_report(&mut o, r);
    semaphore_report(&mut o, r);
    let _ = writeln!(o, "## Counts\n");
    o.push_str(&summary_markdown(r.h, r.summary));
    let _ = writeln!(o, "### By fault kind\n");
    let _ = writeln!(
        o,
        "Each kind's windows (from the injector's start to 1 s after its end): what the Rust workers and the Redisson \
         party did in them, and the checker's findings that fall in them. Overlaps are counted where the later \
         section began; losses and `NotHeld` results where they were learned.\n"
    );
    let _ = writeln!(
        o,
        "| fault | injected | Rust sections begun | Rust acquire errors | Java sections begun | overlaps (unexplained) | losses / `NotHeld` explained by an outage | unexplained losses / unlock results |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut kinds: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in r.h.faults.iter().enumerate() {
        kinds.entry(f.kind.as_str()).or_default().push(i);
    }
    for (kind, idx) in &kinds {
        let inside = |t: u64| {
            idx.iter()
                .any(|&i| t >= r.h.faults[i].start && t <= r.h.faults[i].end + 1_000_000_000)
        };
        let begun = |p: Party| {
            r.h.sections
                .iter()
                .filter(|s| s.party == p && inside(s.start))
                .count()
        };
        let errors =
            r.h.attempts
                .iter()
                .filter(|a| inside(a.end) && matches!(a.outcome, AttemptResult::Error { .. }))
                .count();
        let overlaps = r
            .overlaps_bad
            .iter()
            .filter(|x| inside(r.h.sections[x.b].start))
            .count();
        let loss_at = |sec: usize| {
            let s = &r.h.sections[sec];
            s.lost.as_ref().map_or(s.unlock_done, |l| l.learned)
        };
        let explained = r
            .losses
            .iter()
            .filter(|l| l.severed.is_some() && inside(loss_at(l.section)))
            .count()
            + r.unlocks
                .iter()
                .filter(|u| u.severed.is_some() && inside(loss_at(u.section)))
                .count();
        let unexplained = r
            .losses
            .iter()
            .filter(|l| l.severed.is_none() && inside(loss_at(l.section)))
            .count()
            + r.unlocks
                .iter()
                .filter(|u| u.severed.is_none() && inside(loss_at(u.section)))
                .count();
        let _ = writeln!(
            o,
            "| {kind} | {} | {} | {errors} | {} | {overlaps} | {explained} | {unexplained} |",
            idx.len(),
            begun(Party::Rust),
            begun(Party::Java),
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "### Faults, in order\n");
    let _ = writeln!(
        o,
        "What the Rust workers saw of each: acquisitions that ended (with an error, or `try_lock_for` with nothing) \
         during the fault or within 1 s after it, and sections that began then.\n"
    );
    let _ = writeln!(o, "| # | phase | fault | acquire errors | not acquired | sections begun |\n|---:|---|---|---:|---:|---:|");
    for (i, f) in r.h.faults.iter().enumerate() {
        let phase = r.h.phase_at(f.start).map(|p| p.name.as_str()).unwrap_or("-");
        let during = |t: u64| t >= f.start && t <= f.end + 1_000_000_000;
        let ended = r.h.attempts.iter().filter(|a| during(a.end));
        let (mut errors, mut not_acquired) = (0, 0);
        for a in ended {
            match a.outcome {
                AttemptResult::Error { .. } => errors += 1,
                AttemptResult::NotAcquired => not_acquired += 1,
                _ => {}
            }
        }
        let begun =
            r.h.sections
                .iter()
                .filter(|s| s.party == Party::Rust && during(s.start))
                .count();
        let _ = writeln!(
            o,
            "| {} | {phase} | {} | {errors} | {not_acquired} | {begun} |",
            i + 1,
            r.h.describe_fault(i).replace('|', "\\|")
        );
    }
    let _ = writeln!(o);
    // `items`: the first `LIST` of `total` (describing an item is not cheap)
    let section = |o: &mut String, title: &str, total: usize, items: Vec<String>| {
        let _ = writeln!(o, "## {title} ({total})\n");
        if items.is_empty() {
            let _ = writeln!(o, "none\n");
            return;
        }
        for it in items.iter().take(LIST) {
            let _ = writeln!(o, "* {}", it.replace('\n', "\n  "));
        }
        if total > LIST {
            let _ = writeln!(o, "* ... and {} more", total - LIST);
        }
        let _ = writeln!(o);
    };
    section(
        &mut o,
        "Overlaps that fail the run",
        r.overlaps_bad.len(),
        r.overlaps_bad
            .iter()
            .take(LIST)
            .map(|x| x.describe(r.h))
            .collect(),
    );
    section(
        &mut o,
        "Overlaps explained by data loss",
        r.overlaps_ok.len(),
        r.overlaps_ok.iter().take(LIST).map(|x| x.describe(r.h)).collect(),
    );
    let describe_unlock = |x: &common::history::UnlockProblem| match x.severed {
        Some(f) => format!(
            "(explained: the network fault #{} cut the client off) {}",
            f + 1,
            x.describe(r.h)
        ),
        None => x.describe(r.h),
    };
    let describe_loss = |x: &common::history::LossProblem| match x.severed {
        Some(f) => format!(
            "(explained: the network fault #{} cut the client off) {}",
            f + 1,
            x.describe(r.h)
        ),
        None => x.describe(r.h),
    };
    section(
        &mut o,
        "Unlock problems (unexplained first)",
        r.unlocks.len(),
        sorted_unexplained_first(r.unlocks, |x| x.severed.is_some())
            .into_iter()
            .take(LIST)
            .map(describe_unlock)
            .collect(),
    );
    section(
        &mut o,
        "Losses not caused by data loss (unexplained first)",
        r.losses.len(),
        sorted_unexplained_first(r.losses, |x| x.severed.is_some())
            .into_iter()
            .take(LIST)
            .map(describe_loss)
            .collect(),
    );
    section(
        &mut o,
        "Semaphore excesses that fail the run",
        r.excess_bad.len(),
        r.excess_bad.iter().take(LIST).map(|x| x.describe(r.h)).collect(),
    );
    section(
        &mut o,
        "Semaphore excesses explained by data loss",
        r.excess_ok.len(),
        r.excess_ok.iter().take(LIST).map(|x| x.describe(r.h)).collect(),
    );
    section(
        &mut o,
        "Semaphores created again without data loss",
        r.reinits.len(),
        r.reinits.iter().take(LIST).map(|x| x.describe(r.h)).collect(),
    );
    let _ = writeln!(o, "## Resources (L4)\n");
    for l in &r.resources.lines {
        let _ = writeln!(o, "* {l}");
    }
    let _ = writeln!(
        o,
        "\nHistories: `{}` (kept when the run fails).",
        repo_path(r.run_dir)
    );
    // the report is committed: no absolute path of this checkout, also not in the failures'
    // messages (worker stderr files, the harness build script)
    o.replace(concat!(env!("CARGO_MANIFEST_DIR"), "/"), "")
}

/// `p` as the report shows it: relative to the repository root, or `…/<file name>` when it is
/// outside the repository (a jar from `$REDISSON_HARNESS_JAR`, a `CARGO_TARGET_DIR` elsewhere).
pub(super) fn repo_path(p: &Path) -> String {
    match p.strip_prefix(env!("CARGO_MANIFEST_DIR")) {
        Ok(rel) => rel.display().to_string(),
        Err(_) => format!(
            "…/{}",
            p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        ),
    }
}

/// `items` with those `explained` says are explained last.
fn sorted_unexplained_first<T>(items: &[T], explained: impl Fn(&T) -> bool) -> Vec<&T> {
    let (mut a, b): (Vec<&T>, Vec<&T>) = items.iter().partition(|x| !explained(x));
    a.extend(b);
    a
}
