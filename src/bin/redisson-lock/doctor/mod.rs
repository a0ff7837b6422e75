//! `doctor`: checks a deployment for what makes locks unsafe, one line per check.
//!
//! Every check reads what it can and degrades to a warning naming what it could not read (an ACL
//! user is often denied `CONFIG GET` or `INFO`); only a failed connection is an error. The
//! thresholds are documented in the README ("Deployment checklist: `doctor`").
//!
//! This file holds the runner: it connects, runs every check in a fixed order, prints one line per
//! check and a summary, and turns a failed check into the exit code.

mod acl;
mod checks;

use std::time::Duration;

use serde_json::json;

use crate::render::Out;
use crate::{check_scheme, now_ms, redact, Failure, Outcome};
use checks::Doctor;

/// Connection and per-command timeout.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A check's verdict.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's line.
pub(crate) struct Check {
    name: &'static str,
    status: Status,
    message: String,
}

fn check(name: &'static str, status: Status, message: impl Into<String>) -> Check {
    Check {
        name,
        status,
        message: message.into(),
    }
}

/// What `doctor` is asked.
pub(crate) struct DoctorArgs {
    /// A lock name whose keys and channels the ACL check uses.
    pub(crate) name: String,
    /// Check this ACL user instead of the connected one (needs `ACL DRYRUN`).
    pub(crate) acl_user: Option<String>,
}

pub(crate) async fn doctor(url: &str, out: &Out, args: DoctorArgs) -> Result<Outcome, Failure> {
    check_scheme(url)?;
    let client =
        redis::Client::open(url).map_err(|e| Failure(format!("invalid redis URL {}: {e}", redact(url))))?;
    let url_user = client
        .get_connection_info()
        .redis_settings()
        .username()
        .map(str::to_owned);
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(TIMEOUT))
        .set_response_timeout(Some(TIMEOUT));
    let conn = client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| Failure(format!("cannot connect to {}: {e}", redact(url))))?;
    let mut d = Doctor::new(conn).await;

    let mut checks = Vec::new();
    checks.push(d.version());
    checks.push(d.eviction().await);
    checks.push(d.persistence().await);
    checks.push(d.replication().await);
    checks.push(d.cluster().await);
    checks.push(d.round_trip().await);
    checks.push(d.clock().await);
    checks.push(d.loss_detection().await);
    checks.push(d.features().await);
    checks.push(d.acl(&args, url_user.as_deref()).await);

    for c in &checks {
        out.emit(
            json!({"check": c.name, "status": c.status.as_str(), "message": c.message, "ts_ms": now_ms()}),
            || format!("{}  {}: {}", c.status.label(), c.name, c.message),
        );
    }
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (fails, warns) = (count(Status::Fail), count(Status::Warn));
    out.emit(
        json!({"event": "summary", "fail": fails, "warn": warns, "ok": count(Status::Ok), "ts_ms": now_ms()}),
        || {
            format!(
                "{} check(s) failed, {} warning(s), {} ok",
                fails,
                warns,
                count(Status::Ok)
            )
        },
    );
    Ok(if fails > 0 { Outcome::Unsafe } else { Outcome::Done })
}
