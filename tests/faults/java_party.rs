//! The fault run's Java party: real Redisson (the JVM harness of compat-tests/) contending for
//! the hot locks beside the Rust workers: how it joins the run and leaves it, and its figures.

use super::*;

/// Java worker threads, i.e. Redisson owners `<client id>:<thread id>`, each taking the hot locks
/// in turn with `lock()` (watchdog mode).
pub(super) const JAVA_WORKERS: usize = 2;
/// Java holds last 0..=3 ms, as the Rust hot tasks' do.
pub(super) const JAVA_MAX_HOLD_MS: u64 = 3;
/// From `java -jar` to the harness' ready line (0.5–1.3 s here).
pub(super) const JAVA_READY_LIMIT: Duration = Duration::from_secs(60);
/// How long the parent waits for the `contend` results after `stopContend` (a round waiting in
/// `lock()` finishes first).
pub(super) const JAVA_STOP_LIMIT: Duration = Duration::from_secs(30);
/// A run with Java must give it at least this many sections, and at least this many hand-overs
/// of a lock from Java to Rust and from Rust to Java, or the Java/Rust check covered nothing.
pub(super) const JAVA_MIN_SECTIONS: usize = 100;
pub(super) const JAVA_MIN_HANDOFFS: usize = 10;

/// Whether the Java party takes part, and with which JDK and jar.
pub(super) enum JavaPlan {
    Run(java::Harness),
    /// Why not (`no JDK ...` first).
    Skip(String),
}

/// A JDK and the harness jar ([`java::locate`]), or why the Java party cannot play.
pub(super) fn plan_java() -> JavaPlan {
    match java::locate() {
        Ok(h) => JavaPlan::Run(h),
        Err(why) => JavaPlan::Skip(why),
    }
}

/// Starts the harness JVM ([`Jvm`], killed on drop if it is still running: also when the test
/// fails or panics) with the workers' watchdog timeout; its stderr goes to `java.stderr`.
pub(super) fn spawn_java(h: &java::Harness, port: u16, run_dir: &Path) -> Result<Jvm, String> {
    let stderr = std::fs::File::create(run_dir.join("java.stderr")).map_err(|e| e.to_string())?;
    let url = format!("redis://127.0.0.1:{port}");
    let watchdog_ms = WATCHDOG.as_millis().to_string();
    let args = [
        "--url",
        &url,
        "--watchdog-ms",
        &watchdog_ms,
        "--exit-grace-ms",
        "3000",
    ];
    h.spawn(&args, Stdio::from(stderr))
}

/// One Java worker's `contend` summary.
#[derive(Clone, Debug, Default)]
pub(super) struct JavaWorker {
    pub(super) name: String,
    pub(super) thread_id: u64,
    pub(super) stopped: String,
    pub(super) elapsed_s: f64,
    pub(super) rounds: usize,
    pub(super) sections: usize,
}

/// What the Java party did, for the report (its anomalies are reported, not failed on).
#[derive(Clone, Debug, Default)]
pub(super) struct JavaFigures {
    /// `ran` or `skipped (...)` / `failed (...)`.
    pub(super) status: String,
    pub(super) ran: bool,
    pub(super) jar: String,
    pub(super) source: String,
    pub(super) version: String,
    pub(super) client_id: String,
    /// Clock samples: (CLOCK_MONOTONIC before the call, Java's `System.nanoTime()`, after).
    pub(super) clock: Vec<(u64, u64, u64)>,
    /// From `java -jar` to the ready line.
    pub(super) ready: Duration,
    /// How long after the warm-up began Java began contending (ns).
    pub(super) joined: u64,
    /// From `stopContend` to the last `contend` result.
    pub(super) stop: Duration,
    /// `exit` until the JVM was gone.
    pub(super) exit: Duration,
    pub(super) workers: Vec<JavaWorker>,
    /// Round outcome -> count (`released`, `partial`, `not-held`, `unlock-error`, `lock-error`).
    pub(super) outcomes: BTreeMap<String, usize>,
    /// `lock()` / `unlock()` / `getHoldCount()` + exception class -> count.
    pub(super) exceptions: BTreeMap<String, usize>,
    /// The first message of each of them.
    pub(super) exception_examples: BTreeMap<String, String>,
    /// Holds a `partial` round found left over and released (Redis counted an acquisition twice).
    pub(super) extra_holds: u64,
    /// The JVM's stderr: lines per log level, and a few distinct examples.
    pub(super) stderr_levels: BTreeMap<String, usize>,
    pub(super) stderr_examples: Vec<String>,
}

impl JavaFigures {
    pub(super) fn skipped(&self) -> bool {
        !self.ran
    }

    /// `System.nanoTime()` fell inside `[before, after]` of `CLOCK_MONOTONIC` in every sample.
    pub(super) fn clock_ok(&self) -> bool {
        !self.clock.is_empty() && self.clock.iter().all(|&(b, j, a)| b <= j && j <= a)
    }

    pub(super) fn clock_line(&self) -> String {
        if self.clock.is_empty() {
            return "not checked".into();
        }
        let inside = self.clock.iter().filter(|&&(b, j, a)| b <= j && j <= a).count();
        let (b, j, a) = *self
            .clock
            .iter()
            .min_by_key(|&&(b, _, a)| a.saturating_sub(b))
            .unwrap();
        format!(
            "Java's `System.nanoTime()` fell inside [before, after] of this process' `CLOCK_MONOTONIC` in {inside}/{} samples \
             (tightest bracket {:.0} µs, Java's reading {:.0} µs after `before`): one clock",
            self.clock.len(),
            a.saturating_sub(b) as f64 / 1e3,
            j as f64 / 1e3 - b as f64 / 1e3
        )
    }
}

/// Waits for the harness' ready line and checks that Java's `System.nanoTime()` is this
/// process' `CLOCK_MONOTONIC` (five calls of `clock`, each bracketed by two readings).
pub(super) async fn java_start(j: &mut Jvm, jf: &mut JavaFigures, spawned: Instant) -> Result<(), String> {
    let (at, ready) = j.ready(JAVA_READY_LIMIT).await?;
    jf.ready = at - spawned;
    jf.version = ready["version"].as_str().unwrap_or("?").to_owned();
    jf.client_id = ready["clientId"].as_str().unwrap_or("?").to_owned();
    for _ in 0..5 {
        let before = now_ns();
        let r = j.call("ctl", "clock", Duration::from_secs(10)).await?;
        let after = now_ns();
        let java = r["nanoTime"]
            .as_u64()
            .ok_or_else(|| format!("`clock` without nanoTime: {r}"))?;
        jf.clock.push((before, java, after));
    }
    if !jf.clock_ok() {
        return Err(format!(
            "Java's System.nanoTime() is not CLOCK_MONOTONIC here, so Java and Rust sections cannot be compared: samples (before, java, after) {:?}",
            jf.clock
        ));
    }
    Ok(())
}

/// Ends the `contend` loops (`stopContend`), collects their rounds as sections of the history
/// (party `java`, process `process`), and exits the JVM.
pub(super) async fn java_finish(
    j: &mut Jvm,
    seqs: &[(String, u64)],
    jf: &mut JavaFigures,
    process: u32,
) -> Result<Vec<Section>, String> {
    let asked = Instant::now();
    let stop = j.send("ctl", "stopContend")?;
    let mut sections = Vec::new();
    let deadline = asked + JAVA_STOP_LIMIT;
    let mut first_err = None;
    for (worker, (name, seq)) in seqs.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        let r = match j.response(*seq, left).await {
            Ok(r) => r,
            Err(e) => {
                first_err.get_or_insert(format!("{name}: {e}"));
                continue;
            }
        };
        let names: Vec<String> = r["names"]
            .as_array()
            .map(|a| a.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let field = r["field"].as_str().unwrap_or("?").to_owned();
        let rounds = r["rounds"].as_array().cloned().unwrap_or_default();
        let mut w = JavaWorker {
            name: name.clone(),
            thread_id: r["threadId"].as_u64().unwrap_or(0),
            stopped: r["stopped"].as_str().unwrap_or("?").to_owned(),
            elapsed_s: r["elapsed_ns"].as_u64().unwrap_or(0) as f64 / 1e9,
            rounds: rounds.len(),
            sections: 0,
        };
        for x in &rounds {
            let outcome = x["outcome"].as_str().unwrap_or("?").to_owned();
            *jf.outcomes.entry(outcome.clone()).or_default() += 1;
            if let Some(class) = x["errorClass"].as_str() {
                let call = if outcome == "lock-error" {
                    "lock()"
                } else {
                    "unlock()"
                };
                let key = format!("{call}: {class}");
                *jf.exceptions.entry(key.clone()).or_default() += 1;
                jf.exception_examples.entry(key).or_insert_with(|| {
                    x["error"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(200)
                        .collect()
                });
            }
            if let Some(class) = x["checkErrorClass"].as_str() {
                let key = format!("getHoldCount(): {class}");
                *jf.exceptions.entry(key.clone()).or_default() += 1;
                jf.exception_examples.entry(key).or_insert_with(|| {
                    x["checkError"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(200)
                        .collect()
                });
            }
            jf.extra_holds += x["extra"].as_u64().unwrap_or(0);
            let (Some(start), Some(end)) = (x["start_ns"].as_u64(), x["end_ns"].as_u64()) else {
                continue; // lock() threw: no section
            };
            let unlock = match outcome.as_str() {
                "released" => UnlockResult::Released,
                "partial" => UnlockResult::Partial,
                "not-held" => UnlockResult::NotHeld,
                _ => UnlockResult::Error {
                    message: format!(
                        "{}: {}",
                        x["errorClass"].as_str().unwrap_or("?"),
                        x["error"].as_str().unwrap_or("")
                    ),
                },
            };
            let k = x["lock"].as_u64().unwrap_or(u64::MAX) as usize;
            sections.push(Section {
                party: Party::Java,
                lock: names.get(k).cloned().unwrap_or_else(|| format!("?{k}")),
                process,
                worker: worker as u32,
                role: "java".into(),
                method: "lock".into(),
                owner: field.clone(),
                acquire_start: x["acquire_ns"].as_u64().unwrap_or(start),
                start,
                end,
                unlock_done: x["unlock_ns"].as_u64().unwrap_or(end),
                unlock,
                lost: None,
                sem: None,
            });
            w.sections += 1;
        }
        jf.workers.push(w);
    }
    jf.stop = asked.elapsed();
    let _ = j.response(stop, Duration::from_secs(5)).await;
    let exiting = Instant::now();
    let exited = j.exit(Duration::from_secs(10)).await;
    jf.exit = exiting.elapsed();
    if let Some(e) = first_err {
        return Err(e);
    }
    exited.map_err(|e| format!("exit: {e}"))?;
    Ok(sections)
}

/// Lines per log level of the JVM's stderr (slf4j-simple: `[thread] LEVEL logger - message`),
/// and up to five distinct WARN/ERROR lines.
pub(super) fn java_stderr(path: &Path, jf: &mut JavaFigures) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for line in text.lines() {
        let level = ["ERROR", "WARN", "INFO", "DEBUG"]
            .into_iter()
            .find(|l| line.contains(&format!("] {l} ")))
            .unwrap_or("other (stack traces, ...)");
        *jf.stderr_levels.entry(level.to_owned()).or_default() += 1;
        if matches!(level, "ERROR" | "WARN") && jf.stderr_examples.len() < 5 {
            let gist: String = line
                .split_once("] ")
                .map_or(line, |(_, r)| r)
                .chars()
                .take(160)
                .collect();
            if !jf
                .stderr_examples
                .iter()
                .any(|e| e.chars().take(60).eq(gist.chars().take(60)))
            {
                jf.stderr_examples.push(gist);
            }
        }
    }
}

/// Java joins during the warm-up, as soon as the JVM is ready (its start costs the run nothing
/// unless it outlasts the warm-up), and contends for the hot locks on `JAVA_WORKERS` threads
/// until `stopContend` at the end of phase A (the budget only bounds a run whose parent went
/// away without closing stdin). Checks that the JVM becomes ready and shares this machine's
/// `CLOCK_MONOTONIC` (`java_start`), and that every `contend` command is sent; each failure is
/// a failure of the run, and a JVM that failed to start is killed.
pub(super) async fn java_joins(run: &mut Run) {
    if let Some(j) = run.java.as_mut() {
        if let Err(e) = java_start(j, &mut run.java_figures, run.java_spawned).await {
            run.java_figures.status = format!("failed ({e})");
            run.failures.push(format!(
                "Java party: {e}; its stderr:\n{}",
                tail(&run.run_dir.join("java.stderr"), 15)
            ));
            run.java = None; // killed
        }
    }
    if let Some(j) = run.java.as_mut() {
        run.java_figures.joined = now_ns().saturating_sub(run.t0);
        let budget_ms = run.a_end.saturating_sub(now_ns()) / 1_000_000 + JAVA_STOP_LIMIT.as_millis() as u64;
        let contend = format!(
            "contend {} 0 {JAVA_MAX_HOLD_MS} {budget_ms}",
            hot_names().join(",")
        );
        for i in 0..JAVA_WORKERS {
            let name = format!("j{i}");
            match j.send(&name, &contend) {
                Ok(seq) => run.java_seqs.push((name, seq)),
                Err(e) => run.failures.push(format!("Java party: {e}")),
            }
        }
    }
}

/// The Java party leaves before the data-loss faults: its `contend` loops stop, their rounds
/// become the history file `java.jsonl` (party `java`), the JVM exits (killed if it does not),
/// and its stderr is summarized. A Java party that fails to stop or report is a failure.
pub(super) async fn java_leaves(run: &mut Run) {
    let Some(mut j) = run.java.take() else {
        return;
    };
    let jf = &mut run.java_figures;
    match java_finish(&mut j, &run.java_seqs, jf, run.mode.processes as u32).await {
        Ok(sections) => {
            let p = run.run_dir.join("java.jsonl");
            let w = HistoryWriter::create(&p);
            for s in sections {
                w.record(&Record::Section(s));
            }
            w.flush();
            run.java_file = Some(p);
            jf.ran = true;
            jf.status = "ran".into();
        }
        Err(e) => {
            jf.status = format!("failed ({e})");
            run.failures.push(format!("Java party: {e}"));
        }
    }
    drop(j); // killed if still running
    java_stderr(&run.run_dir.join("java.stderr"), jf);
}
