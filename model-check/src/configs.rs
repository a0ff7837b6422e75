//! The checked configurations: the bounded ones `cargo test` runs, the deeper ones of
//! `scripts/model-check`, and the mutants with the property each must break.

use crate::client::{Flavor, Role, Spec};
use crate::model::{Config, Kind, Mutation};
use crate::properties::*;

fn spec(flavor: Flavor, role: Role, reentries: u8, polls: u8) -> Spec {
    Spec {
        flavor,
        role,
        acquisitions: 1,
        reentries,
        polls,
    }
}

fn java() -> Spec {
    spec(Flavor::Java, Role::Plain, 0, 1)
}

fn fresh() -> Spec {
    spec(Flavor::Fresh, Role::Plain, 0, 1)
}

fn pinned() -> Spec {
    spec(Flavor::Pinned, Role::Plain, 1, 0)
}

fn base(name: &'static str, kind: Kind, clients: Vec<Spec>) -> Config {
    Config {
        name,
        kind,
        clients,
        ttl: 2,
        max_ticks: 4,
        faults: 1,
        losses: 0,
        duplicates: false,
        crashes: 0,
        shutdown: false,
        fair_wait: 2,
        depth: 0,
        mutation: Mutation::None,
    }
}

/// The bounded models `cargo test -p redisson-lock-model-check` checks: every path of up to 10
/// steps (11 for the fenced lock, whose stale holder needs one more).
pub fn ci() -> Vec<Config> {
    let mut all = vec![
        Config {
            losses: 1,
            ..base(
                "rlock: Java vs fresh owner, a data loss",
                Kind::RLock,
                vec![java(), fresh()],
            )
        },
        Config {
            faults: 2,
            ..base(
                "rlock: pinned re-entrant vs fresh owner",
                Kind::RLock,
                vec![pinned(), fresh()],
            )
        },
        Config {
            shutdown: true,
            crashes: 1,
            ..base(
                "rlock: fresh vs fresh, shutdown and crash",
                Kind::RLock,
                vec![fresh(), fresh()],
            )
        },
        Config {
            losses: 1,
            ..base(
                "fenced: Java vs fresh owner, a data loss",
                Kind::Fenced,
                vec![java(), fresh()],
            )
        },
        Config {
            crashes: 1,
            ..base(
                "fair: fresh vs Java waiter, a crash",
                Kind::Fair,
                vec![fresh(), java()],
            )
        },
        base(
            "rw: fresh writer vs fresh reader vs Java reader",
            Kind::ReadWrite,
            vec![
                spec(Flavor::Fresh, Role::Write, 0, 1),
                spec(Flavor::Fresh, Role::Read, 0, 0),
                spec(Flavor::Java, Role::Read, 0, 0),
            ],
        ),
    ];
    for c in &mut all {
        c.depth = if c.kind == Kind::Fenced { 11 } else { 10 };
    }
    all
}

/// The deeper models of `scripts/model-check`: the same models, every path of up to 12 steps.
pub fn deep() -> Vec<Config> {
    ci().into_iter().map(|c| Config { depth: 12, ..c }).collect()
}

/// Configurations that once showed a counterexample of the protocol itself (not a mutant), each
/// with the property it broke, which must hold now: a connection layer that sends an attempt
/// twice, one copy run after the other's grant was settled and released (fixed: settling marks
/// the latch whether or not it finds a grant). `cargo test` keeps it fixed (`tests/findings.rs`).
pub fn findings() -> Vec<Mutant> {
    vec![Mutant {
        cfg: Config {
            duplicates: true,
            faults: 1,
            depth: 12,
            ..base(
                "finding: a late duplicate of a fresh owner's attempt",
                Kind::RLock,
                vec![fresh()],
            )
        },
        breaks: LATE_GRANT_RELEASED,
    }]
}

/// A mutant: a configuration with a mutation, and the property it must break.
pub struct Mutant {
    /// The configuration.
    pub cfg: Config,
    /// The property the checker must find a counterexample for.
    pub breaks: &'static str,
}

/// Every mutant (paths of up to 14 steps; the checker stops at the first counterexample).
pub fn mutants() -> Vec<Mutant> {
    let mut all = vec![
        Mutant {
            cfg: Config {
                mutation: Mutation::NoUnlockLatch,
                faults: 2,
                ..base("mutant: no unlock latch", Kind::RLock, vec![pinned()])
            },
            breaks: UNLOCK_ONCE,
        },
        Mutant {
            cfg: Config {
                mutation: Mutation::NoUnlockLatch,
                faults: 2,
                ..base("mutant: no unlock latch (guards)", Kind::RLock, vec![pinned()])
            },
            breaks: ONE_GUARD_ONE_HOLD,
        },
        Mutant {
            cfg: Config {
                mutation: Mutation::TrustLateGrant,
                ..base(
                    "mutant: trusting a late grant",
                    Kind::RLock,
                    vec![fresh(), fresh()],
                )
            },
            breaks: MUTUAL_EXCLUSION,
        },
        Mutant {
            cfg: Config {
                mutation: Mutation::RenewAfterRelease,
                faults: 0,
                ..base(
                    "mutant: renewing after release",
                    Kind::RLock,
                    vec![fresh(), fresh()],
                )
            },
            breaks: MUTUAL_EXCLUSION,
        },
        Mutant {
            cfg: Config {
                mutation: Mutation::WriteOnlyFence,
                faults: 0,
                max_ticks: 3,
                ..base(
                    "mutant: write-only fence check",
                    Kind::Fenced,
                    vec![fresh(), fresh()],
                )
            },
            breaks: STALE_TOKEN_REFUSED,
        },
        Mutant {
            cfg: Config {
                mutation: Mutation::NoSettleMarker,
                faults: 1,
                ..base("mutant: settle without a marker", Kind::RLock, vec![fresh()])
            },
            breaks: LATE_GRANT_RELEASED,
        },
        Mutant {
            cfg: Config {
                mutation: Mutation::FairNoPurge,
                faults: 0,
                ..base(
                    "mutant: fair queue without purge",
                    Kind::Fair,
                    vec![spec(Flavor::Fresh, Role::Plain, 0, 0); 3],
                )
            },
            breaks: FAIR_NO_DEAD_HEAD,
        },
    ];
    for m in &mut all {
        m.cfg.depth = 14;
    }
    all
}
