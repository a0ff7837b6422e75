//! History files: each process appends its records to a JSON-lines file, and the checkers read
//! every process' file into one [`History`], which also describes its entries for messages.

use std::fmt::Write as _;
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use super::{Attempt, FaultRecord, Idle, Phase, Quiesce, Record, Reinit, Sample, Section, UnlockResult};

/// Appends records to a JSON-lines file (shared by the tasks of one process).
pub struct HistoryWriter {
    out: Mutex<BufWriter<std::fs::File>>,
}

impl HistoryWriter {
    pub fn create(path: &Path) -> HistoryWriter {
        let f = std::fs::File::create(path)
            .unwrap_or_else(|e| panic!("create history file {}: {e}", path.display()));
        HistoryWriter {
            out: Mutex::new(BufWriter::new(f)),
        }
    }

    pub fn record(&self, r: &Record) {
        let line = serde_json::to_string(r).expect("serialize a history record");
        let mut out = self.out.lock().unwrap();
        writeln!(out, "{line}").expect("write the history file");
    }

    pub fn flush(&self) {
        self.out.lock().unwrap().flush().expect("flush the history file");
    }
}

/// Everything recorded in one run, from every process.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub sections: Vec<Section>,
    pub attempts: Vec<Attempt>,
    pub faults: Vec<FaultRecord>,
    pub phases: Vec<Phase>,
    pub samples: Vec<Sample>,
    pub reinits: Vec<Reinit>,
    pub quiesces: Vec<Quiesce>,
    pub idles: Vec<Idle>,
}

impl History {
    pub fn push(&mut self, r: Record) {
        match r {
            Record::Section(s) => self.sections.push(s),
            Record::Attempt(a) => self.attempts.push(a),
            Record::Fault(f) => self.faults.push(f),
            Record::Phase(p) => self.phases.push(p),
            Record::Sample(s) => self.samples.push(s),
            Record::Reinit(r) => self.reinits.push(r),
            Record::Quiesce(q) => self.quiesces.push(q),
            Record::Idle(i) => self.idles.push(i),
        }
    }

    /// Reads JSON-lines files; a line that does not parse fails (with file and line number).
    pub fn load(paths: &[impl AsRef<Path>]) -> History {
        let mut h = History::default();
        for p in paths {
            let p = p.as_ref();
            let f =
                std::fs::File::open(p).unwrap_or_else(|e| panic!("open history file {}: {e}", p.display()));
            for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
                let line = line.unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
                if line.trim().is_empty() {
                    continue;
                }
                let r: Record = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("{}:{}: bad history line ({e}): {line}", p.display(), i + 1));
                h.push(r);
            }
        }
        h.sort();
        h
    }

    /// Orders everything by time.
    pub fn sort(&mut self) {
        self.sections.sort_by_key(|s| (s.start, s.process, s.worker));
        self.attempts.sort_by_key(|a| (a.start, a.process, a.worker));
        self.faults.sort_by_key(|f| f.start);
        self.phases.sort_by_key(|p| p.start);
        self.samples.sort_by_key(|s| s.time);
        self.reinits.sort_by_key(|r| r.start);
        self.quiesces.sort_by_key(|q| q.start);
        self.idles.sort_by_key(|i| (i.process, i.from));
    }

    /// The origin for printed times: the first phase, fault or acquisition.
    pub fn t0(&self) -> u64 {
        let mut t = u64::MAX;
        if let Some(p) = self.phases.iter().map(|p| p.start).min() {
            t = t.min(p);
        }
        if let Some(s) = self.sections.iter().map(|s| s.acquire_start).min() {
            t = t.min(s);
        }
        if let Some(f) = self.faults.iter().map(|f| f.start).min() {
            t = t.min(f);
        }
        if t == u64::MAX {
            0
        } else {
            t
        }
    }

    /// The phase that contains `t`.
    pub fn phase_at(&self, t: u64) -> Option<&Phase> {
        self.phases.iter().find(|p| p.start <= t && t <= p.end)
    }

    /// Faults whose window `[start, end + slack]` meets `[from, to]`.
    pub fn faults_in(&self, from: u64, to: u64, slack: u64) -> Vec<usize> {
        self.faults
            .iter()
            .enumerate()
            .filter(|(_, f)| f.start <= to && f.end.saturating_add(slack) >= from)
            .map(|(i, _)| i)
            .collect()
    }

    /// Seconds since [`History::t0`], for messages.
    pub fn at(&self, t: u64) -> String {
        let t0 = self.t0();
        if t >= t0 {
            format!("t+{:.6}s", (t - t0) as f64 / 1e9)
        } else {
            format!("t-{:.6}s", (t0 - t) as f64 / 1e9)
        }
    }

    pub fn describe_section(&self, s: &Section) -> String {
        let mut out = format!(
            "{} {} ({} {}) owner {} acquire {} section [{} .. {}] unlock {} at {}",
            s.lock,
            s.holder(),
            s.role,
            s.method,
            s.owner,
            self.at(s.acquire_start),
            self.at(s.start),
            self.at(s.end),
            match &s.unlock {
                UnlockResult::Error { message } => format!("error `{message}`"),
                other => other.label().to_owned(),
            },
            self.at(s.unlock_done),
        );
        if let Some(l) = &s.lost {
            let _ = write!(out, ", lost ({}) learned at {}", l.reason, self.at(l.learned));
        }
        if let Some(sem) = &s.sem {
            let _ = write!(out, ", {} of {} permits", sem.permits, sem.capacity);
        }
        out
    }

    pub fn describe_fault(&self, i: usize) -> String {
        let f = &self.faults[i];
        let mut out = format!(
            "{} [{} .. {}, {:.0} ms] {}",
            f.kind,
            self.at(f.start),
            self.at(f.end),
            (f.end - f.start) as f64 / 1e6,
            f.detail
        );
        if let Some(e) = &f.error {
            let _ = write!(out, " (injector error: {e})");
        }
        out
    }

    pub fn describe_faults(&self, idx: &[usize]) -> String {
        if idx.is_empty() {
            "none".to_owned()
        } else {
            idx.iter()
                .map(|&i| self.describe_fault(i))
                .collect::<Vec<_>>()
                .join("; ")
        }
    }
}
