//! An exhaustive model check of redisson-lock's distributed protocol with
//! [stateright](https://docs.rs/stateright): Redis runs whole scripts one at a time on a
//! discrete clock with key expiry; clients (Redisson-like and this crate's, with fresh and pinned
//! owners) send requests whose replies may be lost, late, duplicated or never applied; Redis may
//! lose data (a restart without persistence, a failover to a replica missing the last script).
//! The properties are the promises of `docs/guarantees.md`; the mutants show that each bites.
//!
//! Nothing here talks to Redis: the scripts are re-stated as functions of the model's store, and
//! each names the Lua file and client code it stands for (`tests/trace.rs` keeps those names
//! and the scripts' fingerprints honest).
//!
//! Why stateright: it is Rust, so the model lives in this workspace beside the code it mirrors
//! and needs no JVM or TLA+ toolchain; its `Model` trait takes `always`, `sometimes` and
//! `eventually` properties; its breadth-first checker returns the shortest counterexample path
//! for a failing property; and a check is an ordinary `cargo test`.
#![deny(missing_docs)]

pub mod client;
pub mod configs;
pub mod fair;
pub mod fenced;
pub mod model;
mod network;
pub mod properties;
pub mod redis;
pub mod report;
pub mod rlock;
pub mod rwlock;
mod step;
pub mod trace;

pub use model::{Action, Config, Kind, Mutation, ProtocolModel, State};
