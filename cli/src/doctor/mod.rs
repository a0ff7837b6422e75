//! `doctor`: checks a deployment for what makes locks unsafe, one line per check.
//!
//! Every check reads what it can and judges it: `ok`, `warn` (worth knowing, never changes the
//! exit code), `FAIL` (unsafe: exit code 4) or `skip` (could not check: the server refused a
//! command the check needs, e.g. `CONFIG GET` renamed away by a managed service or `INFO` denied
//! to an ACL user; the line names the command refused; exit code 5 when nothing failed). Only a
//! failed connection is an error (exit code 1). The thresholds are documented in the README
//! ("Deployment checklist: `doctor`").
//!
//! Where: the node the options name (`--url`), the master the sentinels name (`--sentinel`), or,
//! in a Redis Cluster, that node for the checks of the connection and the client, and every
//! master for the server checks (version, eviction, persistence, replication, tracking table),
//! merged into one line each ([`merge`]).
//!
//! This file holds the runner: it connects, runs every check in a fixed order, prints one line per
//! check and a summary, and turns the verdicts into the exit code.

mod acl;
mod checks;

use serde_json::json;

use crate::render::Out;
use crate::target::{addr_str, Target, Topology};
use crate::{now_ms, Failure, Outcome};
use checks::Doctor;

/// A check's verdict.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub(crate) enum Status {
    Ok,
    Warn,
    /// Could not check: a command the check needs was refused.
    Skip,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Skip => "skip",
            Status::Fail => "fail",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Skip => "skip",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's line.
#[derive(Clone, Debug)]
pub(crate) struct Check {
    name: &'static str,
    status: Status,
    message: String,
    /// The commands the server refused that this check needed (`CONFIG GET`, `INFO`, ...).
    refused: Vec<String>,
}

fn check(name: &'static str, status: Status, message: impl Into<String>) -> Check {
    Check {
        name,
        status,
        message: message.into(),
        refused: Vec::new(),
    }
}

/// A check that could not be made: `refused` names the commands the server refused.
fn skipped(name: &'static str, refused: &[&str], message: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::Skip,
        message: message.into(),
        refused: refused.iter().map(|c| (*c).to_owned()).collect(),
    }
}

impl Check {
    /// Also records `commands` as refused (a check that judged what it could read anyway).
    fn refusing(mut self, commands: &[&str]) -> Check {
        for c in commands {
            if !self.refused.iter().any(|r| r == c) {
                self.refused.push((*c).to_owned());
            }
        }
        self
    }
}

/// What `doctor` is asked.
pub(crate) struct DoctorArgs {
    /// A lock name whose keys and channels the ACL check uses.
    pub(crate) name: String,
    /// Check this ACL user instead of the connected one (needs `ACL DRYRUN`).
    pub(crate) acl_user: Option<String>,
    /// Also probe what the synchronizers send on `name`'s keys.
    pub(crate) synchronizers: bool,
    /// Also probe what a grouped multi-lock sends on `name`'s keys (`name` its group).
    pub(crate) group: bool,
    /// Probe the objects of an entry of this map instead of `name`.
    pub(crate) map: Option<String>,
}

pub(crate) async fn doctor(target: &Target, out: &Out, args: DoctorArgs) -> Result<Outcome, Failure> {
    let topology = target.topology().await?;
    let node = topology.node().clone();
    let url_user = node.redis_settings().username().map(str::to_owned);
    let conn = target.raw_conn(&node).await?;
    let mut d = Doctor::new(conn, addr_str(node.addr())).await;
    // the server checks of every other master of a cluster
    let mut others = Vec::new();
    if let Topology::Cluster { masters, .. } = &topology {
        for m in masters.iter().filter(|m| m.addr() != node.addr()) {
            let c = target.raw_conn(m).await?;
            others.push(Doctor::new(c, addr_str(m.addr())).await);
        }
    }
    // the seed of a cluster may be a replica: then only the masters' server checks count
    let seed_is_master = !matches!(topology, Topology::Cluster { .. }) || d.is_master() != Some(false);

    let mut per_node: Vec<(String, Vec<Check>)> = Vec::new();
    for x in std::iter::once(&mut d)
        .filter(|_| seed_is_master)
        .chain(others.iter_mut())
    {
        per_node.push((
            x.addr().to_owned(),
            vec![
                x.version(),
                x.eviction().await,
                x.persistence().await,
                x.replication().await,
                x.tracking_table().await,
            ],
        ));
    }
    let server: Vec<Check> = (0..5)
        .map(|i| {
            merge(
                per_node
                    .iter()
                    .map(|(at, checks)| (at.clone(), checks[i].clone()))
                    .collect(),
            )
        })
        .collect();

    // the loss signal's path, asked of a lock client connected as a service's would be (its
    // set-up writes and deletes a probe key, `redisson_lock_probe:{<client id>}:*`)
    let path = match target.connect(true).await {
        Ok(session) => {
            let path = session.client.stats().loss_signal;
            let _ = session.client.shutdown().await;
            Ok(path)
        }
        Err(e) => Err(e.0),
    };
    let checks = vec![
        server[0].clone(),
        server[1].clone(),
        server[2].clone(),
        server[3].clone(),
        d.cluster().await,
        d.one_address(&topology).await,
        d.round_trip().await,
        d.clock().await,
        d.loss_detection(path).await,
        server[4].clone(),
        d.features().await,
        d.acl(&args, url_user.as_deref()).await,
    ];

    for c in &checks {
        out.emit(
            json!({
                "check": c.name,
                "status": c.status.as_str(),
                "message": c.message,
                "refused": c.refused,
                "ts_ms": now_ms(),
            }),
            || format!("{}  {}: {}", c.status.label(), c.name, c.message),
        );
    }
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let (fails, warns, skips, oks) = (
        count(Status::Fail),
        count(Status::Warn),
        count(Status::Skip),
        count(Status::Ok),
    );
    // each refused command with the checks it left unmade, and those made another way
    let mut refused: Vec<(String, Vec<&str>, Vec<&str>)> = Vec::new();
    for c in &checks {
        for r in &c.refused {
            let at = match refused.iter().position(|(cmd, _, _)| cmd == r) {
                Some(i) => i,
                None => {
                    refused.push((r.clone(), Vec::new(), Vec::new()));
                    refused.len() - 1
                }
            };
            if c.status == Status::Skip {
                refused[at].1.push(c.name);
            } else {
                refused[at].2.push(c.name);
            }
        }
    }
    let refused_json: serde_json::Map<String, serde_json::Value> = refused
        .iter()
        .map(|(cmd, skipped, around)| (cmd.clone(), json!({"skipped": skipped, "worked_around": around})))
        .collect();
    out.emit(
        json!({
            "event": "summary",
            "fail": fails,
            "warn": warns,
            "skip": skips,
            "ok": oks,
            "refused": refused_json,
            "where": topology.describe(),
            "ts_ms": now_ms(),
        }),
        || {
            let mut s = format!(
                "{fails} check(s) failed, {warns} warning(s), {skips} could not be checked, {oks} ok ({})",
                topology.describe()
            );
            if !refused.is_empty() {
                let parts: Vec<String> = refused
                    .iter()
                    .map(|(cmd, skipped, around)| {
                        let mut what = Vec::new();
                        if !skipped.is_empty() {
                            what.push(format!("skipped {}", skipped.join(", ")));
                        }
                        if !around.is_empty() {
                            what.push(format!("read another way in {}", around.join(", ")));
                        }
                        format!("{cmd} ({})", what.join("; "))
                    })
                    .collect();
                s.push_str(&format!("; refused by the server: {}", parts.join("; ")));
            }
            s
        },
    );
    Ok(if fails > 0 {
        Outcome::Unsafe
    } else if skips > 0 {
        Outcome::Unchecked
    } else {
        Outcome::Done
    })
}

/// One line for a server check made on every master of a cluster: the worst verdict; the message
/// once when every master says the same, else each master's (prefixed with its address).
fn merge(mut checks: Vec<(String, Check)>) -> Check {
    if checks.len() == 1 {
        return checks.remove(0).1;
    }
    let Some((_, first)) = checks.first().cloned() else {
        return check("?", Status::Skip, "no master to check");
    };
    let status = checks.iter().map(|(_, c)| c.status).max().unwrap_or(Status::Ok);
    let mut refused: Vec<String> = Vec::new();
    for (_, c) in &checks {
        for r in &c.refused {
            if !refused.contains(r) {
                refused.push(r.clone());
            }
        }
    }
    let same = checks
        .iter()
        .all(|(_, c)| c.message == first.message && c.status == first.status);
    let message = if same {
        format!("every master ({}): {}", checks.len(), first.message)
    } else {
        checks
            .iter()
            .map(|(at, c)| format!("{at} {}: {}", c.status.as_str(), c.message))
            .collect::<Vec<_>>()
            .join("; ")
    };
    Check {
        name: first.name,
        status,
        message,
        refused,
    }
}
