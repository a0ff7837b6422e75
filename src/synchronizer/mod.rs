//! The machinery shared by the synchronizers (count-down latch, semaphores): they are not lock
//! kinds (no owner field, no hold to renew), but they reuse the client's connection, pub/sub hub,
//! latch janitor, background work and writes applied once ([`crate::once`]) through two pieces:
//!
//! - [`wait`]: waiting for a state in Redis on the client's one wait loop ([`crate::waiting`],
//!   the locks' too), with the synchronizers' metrics;
//! - [`pending`]: an acquisition whose reply may be lost: settled through its attempt latch, and
//!   what it took given back when nobody is left to use it.
//!
//! A synchronizer supplies its scripts and what "done" means; the waiting and the retries are
//! the locks' own, the rest is written once here.

pub(crate) mod pending;
pub(crate) mod wait;
