//! The deeper check (`scripts/model-check`): every model of `configs::deep()`, every mutant and
//! every finding, written to `model-check/REPORT.md`. Ignored by default (minutes, not seconds).

use std::fmt::Write as _;

use redisson_lock_model_check::configs;
use redisson_lock_model_check::properties::applies;
use redisson_lock_model_check::report::{
    check, check_mutant, finding_section, model_section, mutant_section, summary_row,
};

#[test]
#[ignore = "minutes: run by scripts/model-check"]
fn deep_check_writes_the_report() {
    let threads = std::env::var("MODEL_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Model check report\n\nWritten by `scripts/model-check` (`cargo test -p \
         redisson-lock-model-check --release --test deep -- --ignored`) from the run; do not edit \
         by hand. Breadth-first, exhaustive within each model's bounds (checker threads: {threads}). \
         What the model abstracts: `docs/guarantees.md`, \"Model-checked\".\n"
    );
    let mut failures = Vec::new();
    let _ = writeln!(
        md,
        "## The CI bound\n\nWhat `cargo test -p redisson-lock-model-check` checks (the same \
         models, paths of up to 10 steps, 11 for the fenced lock), timed here (checker threads: {threads}).\
         \n\n| model | states | unique | depth | time | verdict |\n|---|---|---|---|---|---|"
    );
    for cfg in configs::ci() {
        let o = check(&cfg, threads);
        if !o.violations().is_empty() {
            failures.push(format!("{} (CI bound): {:?}", cfg.name, o.violations()));
        }
        let _ = writeln!(md, "{}", summary_row(&o));
    }
    let _ = writeln!(md, "\n## Models (deep bound)\n");
    let mut deep_rows = Vec::new();
    for cfg in configs::deep() {
        let o = check(&cfg, threads);
        eprintln!("{}: {} states, {:.1} s", cfg.name, o.states, o.time.as_secs_f64());
        for v in o.violations() {
            failures.push(format!("{}: {v}", cfg.name));
        }
        for n in o.unreached().into_iter().filter(|n| applies(&cfg, n)) {
            failures.push(format!("{}: never reached {n}", cfg.name));
        }
        deep_rows.push(summary_row(&o));
        md.push_str(&model_section(&o));
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "Summary of the deep bound:\n\n| model | states | unique | depth | time | verdict |\n|---|---|---|---|---|---|\n{}\n",
        deep_rows.join("\n")
    );
    let _ = writeln!(md, "## Mutants\n\nEach must break the property it names.\n");
    for m in configs::mutants() {
        let o = check_mutant(&m, threads);
        if o.discovery(m.breaks).is_none() {
            failures.push(format!("{}: not caught", m.cfg.name));
        }
        md.push_str(&mutant_section(&m, &o));
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "## Findings in the protocol\n\nCounterexamples once found without any mutation, fixed since \
         (see `docs/guarantees.md`, \"Model-checked\"): each configuration must hold now.\n"
    );
    for f in configs::findings() {
        let o = check_mutant(&f, threads);
        if o.discovery(f.breaks).is_some() {
            failures.push(format!("{}: broken again", f.cfg.name));
        }
        md.push_str(&finding_section(&f, &o));
        md.push('\n');
    }
    let _ = writeln!(md, "## Verdict\n");
    if failures.is_empty() {
        let _ = writeln!(
            md,
            "Every property holds within the bounds above; every mutant is caught."
        );
    } else {
        for f in &failures {
            let _ = writeln!(md, "* FAILED: {f}");
        }
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/REPORT.md");
    std::fs::write(path, md).unwrap();
    assert!(failures.is_empty(), "{failures:?}");
}
