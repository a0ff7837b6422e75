//! The trace from the model to the code it stands for: every Lua script a transition re-states,
//! with a fingerprint of the script's text when the model was last checked against it.
//! `tests/trace.rs` fails when a script changed (re-check the transition, then update the
//! fingerprint here) and when a path named in the model's comments does not exist.

/// A script the model re-states.
pub struct Script {
    /// Its path in the repository.
    pub path: &'static str,
    /// FNV-1a (64 bits) of its bytes, as checked.
    pub fingerprint: u64,
    /// The model's function(s) that stand for it.
    pub model: &'static str,
}

/// Every script the model re-states.
pub const SCRIPTS: &[Script] = &[
    Script {
        path: "lua/common/attempt.lua",
        fingerprint: 0xb0060c699951060a,
        model: "rlock::recorded, rlock::record (every acquire's record)",
    },
    Script {
        path: "lua/common/resolve_acquire.lua",
        fingerprint: 0x4d9ac8fe807ee493,
        model: "rlock::resolve_acquire (settling a pinned owner's attempt)",
    },
    Script {
        path: "lua/common/resolve_by_field.lua",
        fingerprint: 0xe794aae9a71dfe6b,
        model: "rlock::resolve_by_field (settling a fresh owner's attempt)",
    },
    Script {
        path: "lua/lock/acquire.lua",
        fingerprint: 0xf57b3db0e677c9fe,
        model: "rlock::acquire",
    },
    Script {
        path: "lua/lock/unlock.lua",
        fingerprint: 0x8a9a7de0995f4d86,
        model: "rlock::unlock",
    },
    Script {
        path: "lua/lock/renew_batch.lua",
        fingerprint: 0x95f21959e62d8fbc,
        model: "rlock::renew",
    },
    Script {
        path: "lua/common/extend_ttl.lua",
        fingerprint: 0x3f52a069321e14fc,
        model: "rlock::renew, rwlock::read_renew (the hash's TTL raised, never shortened; a key without one gets one)",
    },
    Script {
        path: "lua/fenced/acquire.lua",
        fingerprint: 0xa7ca421815208a91,
        model: "fenced::acquire",
    },
    Script {
        path: "lua/fair/acquire.lua",
        fingerprint: 0xcd6ac8cf00e9e656,
        model: "fair::acquire",
    },
    Script {
        path: "lua/fair/purge.lua",
        fingerprint: 0x2e32766cf2ae5705,
        model: "fair::purge_stale",
    },
    Script {
        path: "lua/fair/give_up.lua",
        fingerprint: 0xe97066a6be056a25,
        model: "fair::give_up",
    },
    Script {
        path: "lua/fair/unlock.lua",
        fingerprint: 0x7ee9048d73498b7f,
        model: "fair::unlock",
    },
    Script {
        path: "lua/rw/read_acquire.lua",
        fingerprint: 0xa6a1a45a03399f03,
        model: "rwlock::read_acquire",
    },
    Script {
        path: "lua/rw/write_acquire.lua",
        fingerprint: 0xb957a15ed3fb1cbf,
        model: "rwlock::write_acquire",
    },
    Script {
        path: "lua/rw/read_unlock.lua",
        fingerprint: 0xf425dba69be92f79,
        model: "rwlock::read_unlock",
    },
    Script {
        path: "lua/rw/write_unlock.lua",
        fingerprint: 0x906f22ee3e7904eb,
        model: "rwlock::write_unlock",
    },
    Script {
        path: "lua/rw/read_renew_batch.lua",
        fingerprint: 0x89d9af6792b3b5a1,
        model: "rwlock::read_renew",
    },
];

/// FNV-1a, 64 bits.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
