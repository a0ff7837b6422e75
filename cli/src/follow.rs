//! What `watch` follows, kind by kind ([`Follow`]), and the words its lines share: below the
//! kinds' views (`crate::semaphore`, ...) and the loop that drives them (`crate::watch`).

use std::time::SystemTime;

use redisson_lock::{Connection, Error};

use crate::render::Out;
use crate::Failure;

/// The wall-clock time of day, for text lines.
pub(crate) fn clock() -> String {
    let s = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
    s.get(11..23).unwrap_or(&s).to_owned()
}

/// What one `watch` follows: its channels, what their messages mean, and its state.
pub(crate) trait Follow {
    /// `kind` of the `watching` line and its words; `None` for a lock (its kind changes as it is
    /// taken).
    fn kind(&self) -> Option<(&'static str, String)>;
    /// The channels to listen on, classic and sharded.
    fn channels(&self) -> Vec<String>;
    /// Channel patterns to listen on (classic only).
    fn patterns(&self) -> Vec<String> {
        Vec::new()
    }
    /// What `payload` on `channel` means.
    fn meaning(&self, channel: &str, payload: &str) -> String;
    /// Prints the state as first read.
    fn print_state(&self, out: &Out);
    /// Reads the state again and prints what changed.
    async fn sample(&mut self, conn: &mut Connection, out: &Out) -> Result<(), Error>;
    /// A failure of [`sample`](Follow::sample) that ends the watch, as one line.
    fn failure(&self, e: Error) -> Failure {
        e.into()
    }
}

/// What a message on a semaphore's channel `redisson_sc:{N}` means: a number of permits (the
/// count now available, or for some calls the number given back); waiters try to acquire.
pub(crate) fn semaphore_meaning(payload: &str) -> String {
    match payload.parse::<i64>() {
        Ok(n) => format!("{n} permit(s) available or given back: waiters try to acquire"),
        Err(_) => "not a number of permits (Redisson's waiters cannot read it)".to_owned(),
    }
}
