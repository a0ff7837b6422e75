//! The blocking facade offers every capability of the async API: each public method of the
//! async lock handle, guard, multi-lock and multi-guard (of any kind), of the client and of the
//! synchronizers (latch, semaphores, their guard) has a blocking twin of the same name. (The lock
//! constructors of both clients are generated from one list, `lock_kinds!`.) Read from the
//! sources, so a method added on one side only fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn src(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Public method names of each `impl ... <Type>...` block, by the type's name (`Lock`, `Guard`,
/// `RMultiLock`, `MultiGuard`).
fn methods(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("impl") {
            // `impl<K: ..> Lock<K> {`, `impl Guard<kinds::Write> {`, `impl RMultiLock {`; not
            // trait impls (`impl X for Y`)
            current = None;
            if line.contains(" for ") || !line.trim_end().ends_with('{') {
                continue;
            }
            let rest = rest.trim_start();
            let rest = if rest.starts_with('<') {
                // skip the generics of the impl
                let mut depth = 0;
                let mut end = 0;
                for (i, c) in rest.char_indices() {
                    match c {
                        '<' => depth += 1,
                        '>' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest[end..].trim_start()
            } else {
                rest
            };
            let name: String = rest
                .trim_start_matches("crate::")
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            current = Some(name);
        } else if line.starts_with('}') {
            current = None;
        } else if let Some(ty) = &current {
            let t = line.trim_start();
            for prefix in ["pub fn ", "pub async fn "] {
                if let Some(rest) = t.strip_prefix(prefix) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.entry(ty.clone()).or_default().insert(name);
                }
            }
        }
    }
    out
}

#[test]
fn every_async_capability_has_a_blocking_twin() {
    let mut sync_side: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in [
        "core/handle.rs",
        "core/guard.rs",
        "multi.rs",
        "kinds/fenced.rs",
        "kinds/spin.rs",
        "kinds/rw.rs",
        "kinds/fair.rs",
        "kinds/reentrant.rs",
        "kinds/non_reentrant.rs",
    ] {
        for (ty, names) in methods(&src(file)) {
            sync_side.entry(ty).or_default().extend(names);
        }
    }
    // the kinds' own abilities are read too
    for (ty, name) in [
        ("Lock", "lock_and_get_token"),
        ("Lock", "with_backoff"),
        ("Guard", "token"),
        ("Guard", "downgrade"),
        ("Guard", "reenter_with_lease"),
        ("MultiGuard", "lost"),
    ] {
        assert!(
            sync_side.get(ty).is_some_and(|n| n.contains(name)),
            "the reader missed {ty}::{name}"
        );
    }
    let mut blocking: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in ["blocking/mod.rs", "blocking/lock.rs", "blocking/multi.rs"] {
        for (ty, names) in methods(&src(file)) {
            blocking.entry(ty).or_default().extend(names);
        }
    }
    // the client and the synchronizers
    for file in [
        "client.rs",
        "count_down_latch.rs",
        "semaphore/plain.rs",
        "semaphore/guard.rs",
        "semaphore/expirable.rs",
    ] {
        for (ty, names) in methods(&src(file)) {
            sync_side.entry(ty).or_default().extend(names);
        }
    }
    for file in ["blocking/count_down_latch.rs", "blocking/semaphore.rs"] {
        for (ty, names) in methods(&src(file)) {
            blocking.entry(ty).or_default().extend(names);
        }
    }
    let mut missing = Vec::new();
    for ty in [
        "Lock",
        "Guard",
        "RMultiLock",
        "MultiGuard",
        "RReadWriteLock",
        "Client",
        "CountDownLatch",
        "Semaphore",
        "SemaphoreGuard",
        "PermitExpirableSemaphore",
    ] {
        let async_names = sync_side
            .get(ty)
            .unwrap_or_else(|| panic!("no public methods of `{ty}` found in the async sources"));
        let blocking_names = blocking.get(ty).cloned().unwrap_or_default();
        for name in async_names.difference(&blocking_names) {
            missing.push(format!("{ty}::{name}"));
        }
    }
    // on purpose: the command connection is an async object; blocking code reaches it through
    // `blocking::Client::as_async`
    missing.retain(|m| m != "Client::connection");
    assert!(
        missing.is_empty(),
        "async capabilities without a blocking twin: {missing:?}"
    );
}

/// The reader finds methods, and would see one missing.
#[test]
fn the_reader_sees_a_method_missing() {
    let text = "impl<K: AcquireKind> Lock<K> {\n    pub async fn lock(&self) {}\n    pub fn key(&self) {}\n}\nimpl Guard<kinds::Write> {\n    pub async fn downgrade(self) {}\n}\nimpl<K> Drop for Guard<K> {\n    fn drop(&mut self) {}\n}\n";
    let m = methods(text);
    assert_eq!(m["Lock"], ["key", "lock"].iter().map(|s| s.to_string()).collect());
    assert_eq!(m["Guard"], ["downgrade"].iter().map(|s| s.to_string()).collect());
    let blocking = methods("impl Lock<K> {\n    pub fn key(&self) {}\n}\n");
    assert!(!blocking["Lock"].contains("lock"));
}

/// The method names of each `pub trait <Name>` in `text`.
fn trait_methods(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("pub trait ") {
            current = Some(rest.chars().take_while(|c| c.is_alphanumeric()).collect());
        } else if line.starts_with('}') {
            current = None;
        } else if let (Some(t), Some(rest)) = (&current, line.trim_start().strip_prefix("fn ")) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.entry(t.clone()).or_default().insert(name);
        }
    }
    out
}

/// `AnyLock` and `AnyGuard` have blocking twins with the same methods (the blocking guard adds
/// `wait_lost`, as `blocking::Guard` does).
#[test]
fn the_any_lock_traits_have_blocking_twins() {
    let sync_side = trait_methods(&src("any.rs"));
    let blocking = trait_methods(&src("blocking/any.rs"));
    for t in ["AnyLock", "AnyGuard"] {
        let a = &sync_side[t];
        let b = &blocking[t];
        let missing: Vec<&String> = a.difference(b).collect();
        assert!(missing.is_empty(), "{t}: no blocking twin of {missing:?}");
        let extra: Vec<&String> = b.difference(a).filter(|m| *m != "wait_lost").collect();
        assert!(
            extra.is_empty(),
            "blocking {t} has {extra:?}, which the async one lacks"
        );
    }
}
