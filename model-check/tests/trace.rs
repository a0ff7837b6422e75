//! Keeps the model's trace to the code honest: every `lua/...`, `src/...` and `examples/...` path
//! named in the model's sources exists in the repository, every Lua script named is in the
//! fingerprint table (and every table entry is named), and no script changed since the model
//! was checked against it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use redisson_lock_model_check::trace::{fingerprint, SCRIPTS};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Paths named in the model's sources: runs of `[a-z0-9_/.]` starting with `lua/`, `src/` or
/// `examples/`.
fn named_paths() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for prefix in ["lua/", "src/", "examples/"] {
            let mut rest = text.as_str();
            while let Some(i) = rest.find(prefix) {
                let before = rest[..i].chars().last();
                let tail = &rest[i..];
                let end = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "_/.".contains(c)))
                    .unwrap_or(tail.len());
                let path = tail[..end].trim_end_matches('.');
                // a path, not the end of another word (`model-check/src/`)
                if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '/') {
                    out.insert(path.to_string());
                }
                rest = &tail[end.max(1)..];
            }
        }
    }
    out
}

#[test]
fn every_path_the_model_names_exists() {
    let paths = named_paths();
    assert!(
        paths.iter().any(|p| p.ends_with(".lua")),
        "no Lua script named: {paths:?}"
    );
    assert!(
        paths.iter().any(|p| p.starts_with("src/")),
        "no client code named: {paths:?}"
    );
    let missing: Vec<_> = paths.iter().filter(|p| !repo().join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "the model names paths that do not exist: {missing:?}"
    );
}

#[test]
fn every_named_script_is_fingerprinted() {
    let named: BTreeSet<String> = named_paths()
        .into_iter()
        .filter(|p| p.ends_with(".lua"))
        .collect();
    let table: BTreeSet<String> = SCRIPTS.iter().map(|s| s.path.to_string()).collect();
    let unrecorded: Vec<_> = named.difference(&table).collect();
    let unnamed: Vec<_> = table.difference(&named).collect();
    assert!(
        unrecorded.is_empty(),
        "scripts the model names without a fingerprint in src/trace.rs: {unrecorded:?}"
    );
    assert!(
        unnamed.is_empty(),
        "fingerprinted scripts no transition names: {unnamed:?}"
    );
}

#[test]
fn no_modelled_script_changed() {
    let mut changed = Vec::new();
    for s in SCRIPTS {
        let bytes = std::fs::read(repo().join(s.path)).unwrap();
        let now = fingerprint(&bytes);
        if now != s.fingerprint {
            changed.push(format!(
                "{} changed: re-check the model transition {} and update the fingerprint in model-check/src/trace.rs to {now:#018x}",
                s.path, s.model
            ));
        }
    }
    assert!(changed.is_empty(), "{}", changed.join("\n"));
}
