//! Typed calls for every lock kind of the harness, and which Redisson version has which kind.
//!
//! The harness names its commands `<prefix><Op>`: `lock`/`tryLock` for `getLock`, `readLock`,
//! `writeUnlock` for `getReadWriteLock`, `fairTryLock` for `getFairLock` (all three in every
//! version), and `spinLock`, `fencedGetToken`, `nonReentrantTryLock`, `nonReentrantFairLock`
//! for the optional kinds of `src/main/resources/kinds.properties` (compiled into a jar only when its
//! Redisson version has them; otherwise they answer `java.lang.UnsupportedOperationException`
//! `unsupported: fenced lock needs Redisson 3.19.0+ ...`). [`JavaLock`] wraps one lock of one kind
//! on one harness worker; [`Harness::kinds`] and [`Harness::capabilities`] tell which kinds a jar has.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::{Harness, Pending, Response, Result};

/// Java calls that should answer at once.
const CMD: Duration = Duration::from_secs(10);
/// Blocking acquisitions (`lock`, `lockAndGetToken`).
const BLOCKING: Duration = Duration::from_secs(30);

/// `kinds.properties`, the one list of optional kinds and their first Redisson versions (shared
/// with build-harness.sh and Harness.java).
const KINDS_PROPERTIES: &str = include_str!("main/resources/kinds.properties");

/// A lock kind of the harness, with the commands it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JavaKind {
    /// `getLock` (every version).
    Lock,
    /// `getReadWriteLock(..).readLock()` (every version).
    Read,
    /// `getReadWriteLock(..).writeLock()` (every version).
    Write,
    /// `getSpinLock` (optional: `spin`).
    Spin,
    /// `getFencedLock` (optional: `fenced`).
    Fenced,
    /// `getNonReentrantLock` (optional: `nonReentrant`).
    NonReentrant,
    /// `getFairLock` (every version).
    Fair,
    /// `getNonReentrantFairLock` (optional: `nonReentrantFair`).
    NonReentrantFair,
}

impl JavaKind {
    /// Every kind, core first.
    pub const ALL: [JavaKind; 8] = [
        JavaKind::Lock,
        JavaKind::Read,
        JavaKind::Write,
        JavaKind::Fair,
        JavaKind::Spin,
        JavaKind::Fenced,
        JavaKind::NonReentrant,
        JavaKind::NonReentrantFair,
    ];

    /// The capability ids every harness lists first (`getLock`, `getReadWriteLock`,
    /// `getFairLock`: API of every Redisson version of the matrix).
    pub const CORE: [&'static str; 3] = ["lock", "readWrite", "fair"];

    /// The capability id the harness lists in `ready`, `hello` and `capabilities` (`kinds`).
    pub fn capability(self) -> &'static str {
        match self {
            JavaKind::Lock => "lock",
            JavaKind::Read | JavaKind::Write => "readWrite",
            JavaKind::Spin => "spin",
            JavaKind::Fenced => "fenced",
            JavaKind::NonReentrant => "nonReentrant",
            JavaKind::Fair => "fair",
            JavaKind::NonReentrantFair => "nonReentrantFair",
        }
    }

    /// The command prefix (empty for the plain lock).
    pub fn prefix(self) -> &'static str {
        match self {
            JavaKind::Lock => "",
            JavaKind::Read => "read",
            JavaKind::Write => "write",
            JavaKind::Spin => "spin",
            JavaKind::Fenced => "fenced",
            JavaKind::NonReentrant => "nonReentrant",
            JavaKind::Fair => "fair",
            JavaKind::NonReentrantFair => "nonReentrantFair",
        }
    }

    /// The harness command of `op` (`"lock"`, `"tryLock"`, `"getToken"`, ...) for this kind:
    /// `tryLock`, `readTryLock`, `fencedGetToken`.
    pub fn command(self, op: &str) -> String {
        let prefix = self.prefix();
        if prefix.is_empty() {
            return op.to_owned();
        }
        let mut chars = op.chars();
        match chars.next() {
            Some(c) => format!("{prefix}{}{}", c.to_ascii_uppercase(), chars.as_str()),
            None => prefix.to_owned(),
        }
    }

    /// The `counter`-style command of this kind (`counter`, `spinCounter`, ...); the read-write
    /// lock has `rwcounter` instead (see [`Harness::rwcounter`]).
    pub fn counter_command(self) -> Option<String> {
        match self {
            JavaKind::Read | JavaKind::Write => None,
            k => Some(k.command("counter")),
        }
    }

    /// The first Redisson version with this kind (`None`: every version of the matrix).
    pub fn since(self) -> Option<String> {
        kind_table()
            .into_iter()
            .find(|k| k.id == self.capability())
            .map(|k| k.since)
    }
}

/// One optional kind of `kinds.properties`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionalKind {
    /// The capability id and command prefix (`fenced`).
    pub id: String,
    /// The first Redisson version that has it (`3.19.0`).
    pub since: String,
    /// Its name in messages (`fenced lock`).
    pub title: String,
}

/// The optional kinds of `kinds.properties`, in file order.
pub fn kind_table() -> Vec<OptionalKind> {
    parse_kind_table(KINDS_PROPERTIES)
}

fn parse_kind_table(text: &str) -> Vec<OptionalKind> {
    let props: BTreeMap<&str, &str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    props
        .get("kinds")
        .map(|ids| {
            ids.split_whitespace()
                .map(|id| OptionalKind {
                    id: id.to_owned(),
                    since: props
                        .get(format!("{id}.since").as_str())
                        .copied()
                        .unwrap_or("?")
                        .to_owned(),
                    title: props
                        .get(format!("{id}.title").as_str())
                        .copied()
                        .unwrap_or(id)
                        .to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The capability ids a harness for Redisson `version` must list: `lock`, `readWrite`, `fair`,
/// then every optional kind whose `since` is at most `version`.
pub fn expected_kinds(version: &str) -> Vec<String> {
    let mut kinds: Vec<String> = JavaKind::CORE.iter().map(|k| (*k).to_owned()).collect();
    kinds.extend(
        kind_table()
            .into_iter()
            .filter(|k| version_at_least(version, &k.since))
            .map(|k| k.id),
    );
    kinds
}

/// Whether dotted version `v` is at least `min`, comparing numeric components (`3.9.0` <
/// `3.15.0`; a missing component counts as 0; a suffix such as `-SNAPSHOT` is ignored).
pub fn version_at_least(v: &str, min: &str) -> bool {
    fn parts(v: &str) -> Vec<u64> {
        v.split(['.', '-'])
            .map_while(|p| {
                let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            })
            .collect()
    }
    let (a, b) = (parts(v), parts(min));
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i).copied().unwrap_or(0), b.get(i).copied().unwrap_or(0));
        if x != y {
            return x > y;
        }
    }
    true
}

/// An exception the harness reported (`ok:false`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JavaError {
    /// The fully qualified class, e.g. `java.lang.IllegalMonitorStateException`.
    pub class: String,
    /// The message.
    pub message: String,
}

impl JavaError {
    /// The class without its package (`IllegalMonitorStateException`).
    pub fn simple_class(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }

    /// Redisson's "not held" / "re-entered a non-reentrant lock" failure.
    pub fn is_illegal_monitor_state(&self) -> bool {
        self.class == "java.lang.IllegalMonitorStateException"
    }

    /// The harness' answer for a kind its Redisson version lacks.
    pub fn is_unsupported(&self) -> bool {
        self.class == "java.lang.UnsupportedOperationException" && self.message.starts_with("unsupported:")
    }
}

impl std::fmt::Display for JavaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.simple_class(), self.message)
    }
}

impl Response {
    /// The exception of a failed response (`None` when `ok`).
    pub fn java_error(&self) -> Option<JavaError> {
        (!self.ok).then(|| JavaError {
            class: self.error_class.clone().unwrap_or_default(),
            message: self.error.clone().unwrap_or_default(),
        })
    }

    /// A fencing token result: a number, or `null` for "not acquired".
    pub fn token(self) -> Result<Option<i64>> {
        let raw = self.raw.clone();
        let v = self.into_ok()?;
        match v {
            Value::Null => Ok(None),
            v => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("expected a token (number or null): {raw}")),
        }
    }
}

/// A typed answer with the harness' clocks: when the worker started the call and when it returned
/// (epoch ms, Java's 1 ms resolution).
#[derive(Clone, Debug, PartialEq)]
pub struct Answer<T> {
    /// The result.
    pub value: T,
    /// Epoch ms when the worker started the call.
    pub start_ms: f64,
    /// Epoch ms when it returned.
    pub ts_ms: f64,
}

impl<T> Answer<T> {
    /// The response's value (by `value`, which consumes it) with its clocks.
    fn of(r: Response, value: impl FnOnce(Response) -> Result<T>) -> Result<Answer<T>> {
        let (start_ms, ts_ms) = (r.start_ms, r.ts_ms);
        Ok(Answer {
            value: value(r)?,
            start_ms,
            ts_ms,
        })
    }
}

/// What a `...Unlock` returned: released, or Redisson's `IllegalMonitorStateException`.
#[derive(Clone, Debug, PartialEq)]
pub enum JavaUnlock {
    /// `unlock()` returned; the call's start and end (epoch ms).
    Released {
        /// Epoch ms when the worker started the unlock.
        start_ms: f64,
        /// Epoch ms when it returned.
        ts_ms: f64,
    },
    /// `IllegalMonitorStateException` (not held by this thread).
    NotHeld(JavaError),
}

impl JavaUnlock {
    /// Classifies an unlock response; any other exception is an `Err`.
    pub fn from_response(r: Response) -> Result<JavaUnlock> {
        match r.java_error() {
            Some(e) if e.is_illegal_monitor_state() => Ok(JavaUnlock::NotHeld(e)),
            Some(_) => Err(r.into_ok().err().unwrap_or_default()),
            None => Ok(JavaUnlock::Released {
                start_ms: r.start_ms,
                ts_ms: r.ts_ms,
            }),
        }
    }
}

/// What the harness supports (the `capabilities` command).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The bundled Redisson version.
    pub version: String,
    /// The kinds this jar has (`lock`, `readWrite`, then the optional ones compiled in).
    pub kinds: Vec<String>,
    /// The optional kinds it lacks, with the error their commands answer.
    pub unsupported: BTreeMap<String, String>,
}

impl Capabilities {
    /// Parses the `capabilities` result.
    pub fn parse(v: &Value) -> Result<Capabilities> {
        let kinds = parse_kinds(&v["kinds"]).ok_or_else(|| format!("capabilities without kinds: {v}"))?;
        let unsupported = match &v["unsupported"] {
            Value::Object(m) => m
                .iter()
                .map(|(k, e)| {
                    e.as_str()
                        .map(|e| (k.clone(), e.to_owned()))
                        .ok_or_else(|| format!("capabilities: unsupported.{k} is not a string: {v}"))
                })
                .collect::<Result<_>>()?,
            Value::Null => BTreeMap::new(),
            _ => return Err(format!("capabilities: unsupported is not an object: {v}")),
        };
        Ok(Capabilities {
            version: v["version"].as_str().unwrap_or("?").to_owned(),
            kinds,
            unsupported,
        })
    }

    /// Whether the jar has `kind`.
    pub fn supports(&self, kind: JavaKind) -> bool {
        self.kinds.iter().any(|k| k == kind.capability())
    }
}

/// A `kinds` array; `None` when absent or not an array of strings.
pub(crate) fn parse_kinds(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|k| k.as_str().map(str::to_owned))
        .collect()
}

impl Harness {
    /// The kinds the jar listed in its `ready` line. A jar built before kinds were listed reports
    /// only the core kinds (`lock`, `readWrite`).
    pub fn kinds(&self) -> &[String] {
        &self.kinds
    }

    /// Whether the jar has `kind` (from the `ready` line).
    pub fn supports(&self, kind: JavaKind) -> bool {
        self.kinds.iter().any(|k| k == kind.capability())
    }

    /// The `capabilities` command (on `worker`).
    pub async fn capabilities(&self, worker: &str) -> Result<Capabilities> {
        let v = self.call(worker, "capabilities", &[], CMD).await?.into_ok()?;
        Capabilities::parse(&v)
    }

    /// Lock `name` of `kind`, as seen from harness worker `worker` (its thread is the owner).
    pub fn java_lock(&self, kind: JavaKind, worker: &str, name: &str) -> JavaLock<'_> {
        JavaLock {
            h: self,
            kind,
            worker: worker.to_owned(),
            name: name.to_owned(),
        }
    }

    /// Starts `<kind>Counter NAME KEY ROUNDS SLEEP_MS` on `worker` (the `counter` loop on a lock of
    /// `kind`; fenced records carry `:t<token>`, see [`crate::Interval::fence_token`]); its
    /// response is the number of rounds done.
    pub async fn counter(
        &self,
        kind: JavaKind,
        worker: &str,
        name: &str,
        key: &str,
        rounds: u64,
        sleep_ms: u64,
    ) -> Result<Pending> {
        let cmd = kind
            .counter_command()
            .ok_or_else(|| format!("no counter command for {kind:?} (use rwcounter)"))?;
        let (rounds, sleep) = (rounds.to_string(), sleep_ms.to_string());
        self.send(worker, &cmd, &[name, key, &rounds, &sleep]).await
    }

    /// [`Harness::counter`] with `GAP_MS`: after every round but the last the worker sleeps
    /// `gap_ms` outside the lock (`<kind>Counter NAME KEY ROUNDS SLEEP_MS GAP_MS`), so polling
    /// waiters of a spin lock find it free now and then.
    #[allow(clippy::too_many_arguments)]
    pub async fn counter_with_gap(
        &self,
        kind: JavaKind,
        worker: &str,
        name: &str,
        key: &str,
        rounds: u64,
        sleep_ms: u64,
        gap_ms: u64,
    ) -> Result<Pending> {
        let cmd = kind
            .counter_command()
            .ok_or_else(|| format!("no counter command for {kind:?} (use rwcounter)"))?;
        let (rounds, sleep, gap) = (rounds.to_string(), sleep_ms.to_string(), gap_ms.to_string());
        self.send(worker, &cmd, &[name, key, &rounds, &sleep, &gap]).await
    }

    /// Starts `rwcounter NAME KEY ROUNDS WRITE_PERCENT` on `worker`; its response is the number
    /// of writes.
    pub async fn rwcounter(
        &self,
        worker: &str,
        name: &str,
        key: &str,
        rounds: u64,
        write_percent: u64,
    ) -> Result<Pending> {
        let (rounds, pct) = (rounds.to_string(), write_percent.to_string());
        self.send(worker, "rwcounter", &[name, key, &rounds, &pct]).await
    }
}

/// Lock `name` of one kind on one harness worker: the typed commands. Every call runs on the
/// worker's thread, so Redisson's owner is `<clientId>:<worker thread id>`. Calls the kind lacks
/// (tokens on a spin lock) are refused here; calls the jar lacks answer
/// [`JavaError::is_unsupported`].
#[derive(Clone, Debug)]
pub struct JavaLock<'a> {
    h: &'a Harness,
    kind: JavaKind,
    worker: String,
    name: String,
}

fn ms_args<'s>(name: &'s str, opt: &'s [Option<String>]) -> Vec<&'s str> {
    std::iter::once(name)
        .chain(opt.iter().map_while(|o| o.as_deref()))
        .collect()
}

impl JavaLock<'_> {
    /// The kind.
    pub fn kind(&self) -> JavaKind {
        self.kind
    }

    /// The worker name.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// The lock name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends `<prefix><Op> NAME ARGS...` and waits up to `limit` (any response, ok or not).
    pub async fn call(&self, op: &str, args: &[&str], limit: Duration) -> Result<Response> {
        let mut all = vec![self.name.as_str()];
        all.extend_from_slice(args);
        self.h
            .call(&self.worker, &self.kind.command(op), &all, limit)
            .await
    }

    /// Sends `<prefix><Op> NAME ARGS...` without waiting.
    pub async fn send(&self, op: &str, args: &[&str]) -> Result<Pending> {
        let mut all = vec![self.name.as_str()];
        all.extend_from_slice(args);
        self.h.send(&self.worker, &self.kind.command(op), &all).await
    }

    fn need(&self, kind: JavaKind, what: &str) -> Result<()> {
        if self.kind == kind {
            Ok(())
        } else {
            Err(format!(
                "{what} is a {kind:?} lock call; this is a {:?} lock",
                self.kind
            ))
        }
    }

    /// `lock()` / `lock(LEASE, ms)`; waits up to 30 s.
    pub async fn lock(&self, lease_ms: Option<u64>) -> Result<Answer<()>> {
        Answer::of(self.lock_response(lease_ms).await?, |r| r.into_ok().map(drop))
    }

    /// `lock()` / `lock(LEASE, ms)`, returning the raw response (for the expected failures: a
    /// non-reentrant lock re-entered answers `IllegalMonitorStateException`).
    pub async fn lock_response(&self, lease_ms: Option<u64>) -> Result<Response> {
        let lease = [lease_ms.map(|l| l.to_string())];
        self.h
            .call(
                &self.worker,
                &self.kind.command("lock"),
                &ms_args(&self.name, &lease),
                BLOCKING,
            )
            .await
    }

    /// Starts a blocking `lock()` (watchdog mode) in the background.
    pub async fn start_lock(&self) -> Result<Pending> {
        self.send("lock", &[]).await
    }

    /// `tryLock()` / `tryLock(WAIT, ms)` / `tryLock(WAIT, LEASE, ms)` (a lease needs a wait).
    pub async fn try_lock(&self, wait_ms: Option<u64>, lease_ms: Option<u64>) -> Result<Answer<bool>> {
        Answer::of(self.try_lock_response(wait_ms, lease_ms).await?, Response::bool)
    }

    /// [`JavaLock::try_lock`], returning the raw response.
    pub async fn try_lock_response(&self, wait_ms: Option<u64>, lease_ms: Option<u64>) -> Result<Response> {
        if wait_ms.is_none() && lease_ms.is_some() {
            return Err("tryLock with a lease needs a wait time".into());
        }
        let opt = [wait_ms.map(|w| w.to_string()), lease_ms.map(|l| l.to_string())];
        let limit = Duration::from_millis(wait_ms.unwrap_or(0)) + CMD;
        self.h
            .call(
                &self.worker,
                &self.kind.command("tryLock"),
                &ms_args(&self.name, &opt),
                limit,
            )
            .await
    }

    /// `unlock()`: released, or not held.
    pub async fn unlock(&self) -> Result<JavaUnlock> {
        JavaUnlock::from_response(self.call("unlock", &[], CMD).await?)
    }

    /// `forceUnlock()`: whether a lock was deleted.
    pub async fn force_unlock(&self) -> Result<Answer<bool>> {
        Answer::of(self.call("forceUnlock", &[], CMD).await?, Response::bool)
    }

    /// `getHoldCount()`.
    pub async fn hold_count(&self) -> Result<i64> {
        self.call("holdCount", &[], CMD).await?.int()
    }

    /// `isLocked()`.
    pub async fn is_locked(&self) -> Result<bool> {
        self.call("isLocked", &[], CMD).await?.bool()
    }

    /// `isHeldByCurrentThread()`.
    pub async fn is_held_by_thread(&self) -> Result<bool> {
        self.call("isHeldByThread", &[], CMD).await?.bool()
    }

    /// `remainTimeToLive()` (ms; -1 = no TTL, -2 = no key).
    pub async fn remain_ttl(&self) -> Result<i64> {
        self.call("remainTTL", &[], CMD).await?.int()
    }

    /// Fenced: `lockAndGetToken()` / `lockAndGetToken(LEASE, ms)`; the token. Note: Redisson's
    /// synchronous `lockAndGetToken(lease, unit)` drops the lease (the lock is held in watchdog
    /// mode; 3.24.3, 3.52.0 and 4.7.0 alike, see README.md).
    pub async fn lock_and_get_token(&self, lease_ms: Option<u64>) -> Result<Answer<i64>> {
        self.need(JavaKind::Fenced, "lockAndGetToken")?;
        let lease = [lease_ms.map(|l| l.to_string())];
        let r = self
            .h
            .call(
                &self.worker,
                &self.kind.command("lockAndGetToken"),
                &ms_args(&self.name, &lease),
                BLOCKING,
            )
            .await?;
        Answer::of(r, |r| {
            let raw = r.raw.clone();
            r.token()?
                .ok_or_else(|| format!("lockAndGetToken returned null: {raw}"))
        })
    }

    /// Fenced: `tryLockAndGetToken(0, ms)` (one attempt; Redisson's argument-less
    /// `tryLockAndGetToken()` passes wait -1) / `(WAIT, ms)` / `(WAIT, LEASE, ms)`; the token, or
    /// `None` when not acquired.
    pub async fn try_lock_and_get_token(
        &self,
        wait_ms: Option<u64>,
        lease_ms: Option<u64>,
    ) -> Result<Answer<Option<i64>>> {
        self.need(JavaKind::Fenced, "tryLockAndGetToken")?;
        if wait_ms.is_none() && lease_ms.is_some() {
            return Err("tryLockAndGetToken with a lease needs a wait time".into());
        }
        let opt = [wait_ms.map(|w| w.to_string()), lease_ms.map(|l| l.to_string())];
        let limit = Duration::from_millis(wait_ms.unwrap_or(0)) + CMD;
        let r = self
            .h
            .call(
                &self.worker,
                &self.kind.command("tryLockAndGetToken"),
                &ms_args(&self.name, &opt),
                limit,
            )
            .await?;
        Answer::of(r, Response::token)
    }

    /// Fenced: `getToken()`, the last token handed out (0 before the first acquisition).
    pub async fn get_token(&self) -> Result<i64> {
        self.need(JavaKind::Fenced, "getToken")?;
        let r = self.call("getToken", &[], CMD).await?;
        let raw = r.raw.clone();
        r.token()?.ok_or_else(|| format!("getToken returned null: {raw}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(line: &str) -> Response {
        Response::parse(line).unwrap()
    }

    #[test]
    fn command_names() {
        assert_eq!(JavaKind::Lock.command("tryLock"), "tryLock");
        assert_eq!(JavaKind::Read.command("lock"), "readLock");
        assert_eq!(JavaKind::Write.command("isHeldByThread"), "writeIsHeldByThread");
        assert_eq!(JavaKind::Spin.command("tryLock"), "spinTryLock");
        assert_eq!(
            JavaKind::Fenced.command("lockAndGetToken"),
            "fencedLockAndGetToken"
        );
        assert_eq!(JavaKind::NonReentrant.command("unlock"), "nonReentrantUnlock");
        assert_eq!(JavaKind::Fair.command("tryLock"), "fairTryLock");
        assert_eq!(JavaKind::NonReentrantFair.command("lock"), "nonReentrantFairLock");
        assert_eq!(
            JavaKind::NonReentrantFair.counter_command().as_deref(),
            Some("nonReentrantFairCounter")
        );
        assert_eq!(JavaKind::Fair.since(), None);
        assert_eq!(JavaKind::NonReentrantFair.since().as_deref(), Some("4.4.0"));
        assert_eq!(JavaKind::Lock.counter_command().as_deref(), Some("counter"));
        assert_eq!(
            JavaKind::Fenced.counter_command().as_deref(),
            Some("fencedCounter")
        );
        assert_eq!(JavaKind::Read.counter_command(), None);
        assert_eq!(JavaKind::Write.capability(), "readWrite");
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_at_least("3.19.0", "3.19.0"));
        assert!(version_at_least("3.24.3", "3.19.0"));
        assert!(!version_at_least("3.17.7", "3.19.0"));
        assert!(version_at_least("3.17.7", "3.15.0"));
        assert!(
            !version_at_least("3.9.1", "3.15.0"),
            "3.9 < 3.15, not a string compare"
        );
        assert!(version_at_least("4.7.0", "4.4.0"));
        assert!(!version_at_least("3.52.0", "4.4.0"));
        assert!(version_at_least("4.4", "4.4.0"));
        assert!(!version_at_least("4.4.0-SNAPSHOT", "4.4.1"));
        assert!(version_at_least("4.10.0", "4.4.0"));
    }

    #[test]
    fn kind_table_and_expected_kinds() {
        let t = kind_table();
        let ids: Vec<(&str, &str)> = t.iter().map(|k| (k.id.as_str(), k.since.as_str())).collect();
        assert_eq!(
            ids,
            [
                ("spin", "3.15.0"),
                ("fenced", "3.19.0"),
                ("nonReentrant", "4.4.0"),
                ("nonReentrantFair", "4.4.0")
            ]
        );
        assert_eq!(t[1].title, "fenced lock");
        assert_eq!(t[3].title, "non-reentrant fair lock");
        assert_eq!(expected_kinds("3.17.7"), ["lock", "readWrite", "fair", "spin"]);
        assert_eq!(
            expected_kinds("3.24.3"),
            ["lock", "readWrite", "fair", "spin", "fenced"]
        );
        assert_eq!(
            expected_kinds("4.7.0"),
            [
                "lock",
                "readWrite",
                "fair",
                "spin",
                "fenced",
                "nonReentrant",
                "nonReentrantFair"
            ]
        );
        assert_eq!(JavaKind::Fenced.since().as_deref(), Some("3.19.0"));
        assert_eq!(JavaKind::Lock.since(), None);
        let custom = parse_kind_table("# c\nkinds = a  b\na.since=1.2.3\n\nb.title = bee lock\n");
        assert_eq!(custom[0].since, "1.2.3");
        assert_eq!(custom[0].title, "a");
        assert_eq!(custom[1].since, "?");
        assert_eq!(custom[1].title, "bee lock");
    }

    #[test]
    fn capabilities_parsing() {
        let v: Value = serde_json::from_str(
            r#"{"version":"3.17.7","kinds":["lock","readWrite","spin"],"unsupported":{"fenced":"unsupported: fenced lock needs Redisson 3.19.0+ (this harness is built with Redisson 3.17.7)"}}"#,
        )
        .unwrap();
        let c = Capabilities::parse(&v).unwrap();
        assert_eq!(c.version, "3.17.7");
        assert!(c.supports(JavaKind::Spin) && c.supports(JavaKind::Read));
        assert!(!c.supports(JavaKind::Fenced) && !c.supports(JavaKind::NonReentrant));
        assert!(c.unsupported["fenced"].starts_with("unsupported: fenced lock needs Redisson 3.19.0+"));
        let bad: Value = serde_json::from_str(r#"{"version":"1","kinds":[1]}"#).unwrap();
        assert!(Capabilities::parse(&bad).is_err());
        let bad: Value = serde_json::from_str(r#"{"kinds":[],"unsupported":[]}"#).unwrap();
        assert!(Capabilities::parse(&bad).is_err());
    }

    #[test]
    fn tokens_and_errors() {
        let t = resp(
            r#"{"seq":1,"worker":"w1","cmd":"fencedTryLockAndGetToken","ok":true,"result":7,"error":null,"errorClass":null,"threadId":19,"ts_ms":5,"start_ms":4}"#,
        );
        assert_eq!(t.java_error(), None);
        assert_eq!(t.token().unwrap(), Some(7));
        let refused = resp(
            r#"{"seq":2,"worker":"w2","cmd":"fencedTryLockAndGetToken","ok":true,"result":null,"error":null,"errorClass":null,"threadId":20,"ts_ms":5,"start_ms":4}"#,
        );
        assert_eq!(refused.token().unwrap(), None);
        let wrong = resp(
            r#"{"seq":3,"worker":"w2","cmd":"fencedGetToken","ok":true,"result":"x","error":null,"errorClass":null,"threadId":20,"ts_ms":5,"start_ms":4}"#,
        );
        assert!(wrong.token().is_err());
        let nr = resp(
            r#"{"seq":4,"worker":"w1","cmd":"nonReentrantLock","ok":false,"result":null,"error":"Lock 'N' is non-reentrant and is already held by thread 24","errorClass":"java.lang.IllegalMonitorStateException","threadId":19,"ts_ms":5,"start_ms":4}"#,
        );
        let e = nr.java_error().unwrap();
        assert!(e.is_illegal_monitor_state() && !e.is_unsupported());
        assert_eq!(
            e.to_string(),
            "IllegalMonitorStateException: Lock 'N' is non-reentrant and is already held by thread 24"
        );
        assert!(nr.token().is_err());
        let un = resp(
            r#"{"seq":5,"worker":"w1","cmd":"fencedGetToken","ok":false,"result":null,"error":"unsupported: fenced lock needs Redisson 3.19.0+ (this harness is built with Redisson 3.17.7)","errorClass":"java.lang.UnsupportedOperationException","threadId":19,"ts_ms":5,"start_ms":4}"#,
        );
        assert!(un.java_error().unwrap().is_unsupported());
    }

    #[test]
    fn unlock_outcomes() {
        let ok = resp(
            r#"{"seq":1,"worker":"w1","cmd":"spinUnlock","ok":true,"result":null,"error":null,"errorClass":null,"threadId":19,"ts_ms":12,"start_ms":10}"#,
        );
        assert_eq!(
            JavaUnlock::from_response(ok).unwrap(),
            JavaUnlock::Released {
                start_ms: 10.0,
                ts_ms: 12.0
            }
        );
        let not_held = resp(
            r#"{"seq":2,"worker":"w1","cmd":"spinUnlock","ok":false,"result":null,"error":"attempt to unlock lock, not locked by current thread by node id: x thread-id: 19","errorClass":"java.lang.IllegalMonitorStateException","threadId":19,"ts_ms":12,"start_ms":10}"#,
        );
        assert!(matches!(
            JavaUnlock::from_response(not_held).unwrap(),
            JavaUnlock::NotHeld(e) if e.message.starts_with("attempt to unlock lock")
        ));
        let other = resp(
            r#"{"seq":3,"worker":"w1","cmd":"spinUnlock","ok":false,"result":null,"error":"boom","errorClass":"org.redisson.client.RedisException","threadId":19,"ts_ms":12,"start_ms":10}"#,
        );
        let err = JavaUnlock::from_response(other).unwrap_err();
        assert!(
            err.contains("org.redisson.client.RedisException") && err.contains("boom"),
            "{err}"
        );
    }

    #[test]
    fn optional_arguments_stop_at_the_first_gap() {
        let opt = [Some("5".to_owned()), None];
        assert_eq!(ms_args("L", &opt), ["L", "5"]);
        let opt = [None, Some("5".to_owned())];
        assert_eq!(ms_args("L", &opt), ["L"]);
    }
}
