//! Runs a configuration through stateright's breadth-first checker and writes what it found:
//! the numbers, each property's verdict and the counterexample paths, as Markdown.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use stateright::{Checker, Expectation, HasDiscoveries, Model, Path};

use crate::configs::Mutant;
use crate::model::{Action, Config, ProtocolModel, State};

/// A property's name, its expectation, and the path of its discovery (a counterexample for
/// `always`, a witness for `sometimes`).
pub type Verdict = (&'static str, Expectation, Option<Path<State, Action>>);

/// What one check found.
pub struct Outcome {
    /// The configuration.
    pub cfg: Config,
    /// States generated.
    pub states: usize,
    /// Unique states.
    pub unique: usize,
    /// The deepest path.
    pub max_depth: usize,
    /// Wall time.
    pub time: Duration,
    /// Per property: its name, expectation and the path of a discovery (a counterexample for
    /// `always`, a witness for `sometimes`).
    pub verdicts: Vec<Verdict>,
}

impl Outcome {
    /// The `always` properties with a counterexample.
    pub fn violations(&self) -> Vec<&'static str> {
        self.verdicts
            .iter()
            .filter(|(_, e, p)| *e == Expectation::Always && p.is_some())
            .map(|(n, _, _)| *n)
            .collect()
    }

    /// The `sometimes` properties never reached.
    pub fn unreached(&self) -> Vec<&'static str> {
        self.verdicts
            .iter()
            .filter(|(_, e, p)| *e == Expectation::Sometimes && p.is_none())
            .map(|(n, _, _)| *n)
            .collect()
    }

    /// The discovery for `name`.
    pub fn discovery(&self, name: &str) -> Option<&Path<State, Action>> {
        self.verdicts
            .iter()
            .find(|(n, _, _)| *n == name)
            .and_then(|(_, _, p)| p.as_ref())
    }
}

/// Checks `cfg` exhaustively (breadth first, every reachable state within its bounds).
pub fn check(cfg: &Config, threads: usize) -> Outcome {
    check_until(cfg, threads, None)
}

/// Checks a mutant until the checker finds a counterexample for the property it must break (or
/// has seen every state within its bounds).
pub fn check_mutant(m: &Mutant, threads: usize) -> Outcome {
    check_until(&m.cfg, threads, Some(m.breaks))
}

fn check_until(cfg: &Config, threads: usize, stop: Option<&'static str>) -> Outcome {
    let model = ProtocolModel { cfg: cfg.clone() };
    let props = model.properties();
    let start = Instant::now();
    let mut builder = model.checker().threads(threads);
    if let Some(name) = stop {
        builder = builder.finish_when(HasDiscoveries::AnyOf([name].into_iter().collect()));
    }
    if cfg.depth > 0 {
        builder = builder.target_max_depth(cfg.depth);
    }
    let checker = builder.spawn_bfs().join();
    let time = start.elapsed();
    let verdicts = props
        .iter()
        .map(|p| (p.name, p.expectation.clone(), checker.discovery(p.name)))
        .collect();
    Outcome {
        cfg: cfg.clone(),
        states: checker.state_count(),
        unique: checker.unique_state_count(),
        max_depth: checker.max_depth(),
        time,
        verdicts,
    }
}

/// One path as numbered actions.
pub fn trace(path: &Path<State, Action>) -> String {
    let mut out = String::new();
    for (i, a) in path.clone().into_actions().iter().enumerate() {
        let _ = writeln!(out, "{:>3}. {a:?}", i + 1);
    }
    out
}

fn bounds(cfg: &Config) -> String {
    let clients: Vec<String> = cfg
        .clients
        .iter()
        .map(|s| format!("{:?}/{:?}", s.flavor, s.role))
        .collect();
    format!(
        "clients {} ({}), TTL {} ticks, ticks 0..={}, network faults {}{}, data-loss events {}, crashes {}, shutdown {}, paths up to {} steps",
        cfg.clients.len(),
        clients.join(", "),
        cfg.ttl,
        cfg.max_ticks,
        cfg.faults,
        if cfg.duplicates { " (duplicated requests included)" } else { "" },
        cfg.losses,
        cfg.crashes,
        if cfg.shutdown { "yes" } else { "no" },
        if cfg.depth == 0 { "any number of".to_string() } else { cfg.depth.to_string() },
    )
}

/// The Markdown section of one model.
pub fn model_section(o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### {}\n", o.cfg.name);
    let _ = writeln!(s, "* Kind: {:?}; bounds: {}", o.cfg.kind, bounds(&o.cfg));
    let _ = writeln!(
        s,
        "* States explored {}, unique {}, max depth {}, time {:.1} s\n",
        o.states,
        o.unique,
        o.max_depth,
        o.time.as_secs_f64()
    );
    let _ = writeln!(s, "| property | kind | verdict |\n|---|---|---|");
    for (name, e, p) in &o.verdicts {
        let verdict = match (e, p) {
            (Expectation::Always, None) => "holds".to_string(),
            (Expectation::Always, Some(p)) => {
                format!("**VIOLATED** ({} steps)", p.clone().into_actions().len())
            }
            (_, Some(p)) => format!("reached ({} steps)", p.clone().into_actions().len()),
            (_, None) if !crate::properties::applies(&o.cfg, name) => {
                "n/a (no data-loss event within the bounds)".to_string()
            }
            (_, None) => "not reached".to_string(),
        };
        let _ = writeln!(s, "| {name} | {e:?} | {verdict} |");
    }
    for name in o.violations() {
        if let Some(p) = o.discovery(name) {
            let _ = writeln!(s, "\nCounterexample for \"{name}\":\n\n```text\n{}```", trace(p));
        }
    }
    s
}

/// A summary table row of one model: name, states, unique, depth, time, verdict.
pub fn summary_row(o: &Outcome) -> String {
    let unreached = o
        .unreached()
        .into_iter()
        .filter(|n| crate::properties::applies(&o.cfg, n))
        .count();
    let verdict = match (o.violations().len(), unreached) {
        (0, 0) => "all hold, all reachability checks reached".to_string(),
        (v, u) => format!("{v} violated, {u} not reached"),
    };
    format!(
        "| {} | {} | {} | {} | {:.1} s | {verdict} |",
        o.cfg.name,
        o.states,
        o.unique,
        o.max_depth,
        o.time.as_secs_f64()
    )
}

/// The Markdown section of one fixed finding: the configuration that once broke `breaks`, and
/// whether it holds now (the trace when it does not).
pub fn finding_section(f: &Mutant, o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "### {}
",
        f.cfg.name
    );
    let _ = writeln!(s, "* Bounds: {}", bounds(&f.cfg));
    let _ = writeln!(
        s,
        "* Once broke: \"{}\"; states explored {}, time {:.1} s",
        f.breaks,
        o.states,
        o.time.as_secs_f64()
    );
    match o.discovery(f.breaks) {
        None => {
            let _ = writeln!(s, "* Holds now (fixed).");
        }
        Some(p) => {
            let _ = writeln!(
                s,
                "* **Broken again.** Counterexample:\n\n```text\n{}```",
                trace(p)
            );
        }
    }
    s
}

/// The Markdown section of one mutant.
pub fn mutant_section(m: &Mutant, o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### {} ({:?})\n", m.cfg.name, m.cfg.mutation);
    let _ = writeln!(s, "* Bounds: {}", bounds(&m.cfg));
    let _ = writeln!(
        s,
        "* Must break: \"{}\"; states explored {}, time {:.1} s",
        m.breaks,
        o.states,
        o.time.as_secs_f64()
    );
    match o.discovery(m.breaks) {
        Some(p) => {
            let _ = writeln!(s, "* Caught. Counterexample:\n\n```text\n{}```", trace(p));
        }
        None => {
            let _ = writeln!(s, "* **NOT caught**");
        }
    }
    s
}
