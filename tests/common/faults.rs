//! Fault injectors against a redis-server the test started (never anyone else's), a `Nemesis`
//! that runs a schedule of them in the background and records each fault's window, and a
//! sampler that watches lock keys for missing TTLs and extra owners.
//!
//! Every injector is a small async fn that returns once the fault's effect is over (a stopped
//! server was continued, a pause ran out, memory was restored), with a line describing what it
//! did, so `[start, end]` of the call is the fault's window.
//!
//! This file holds the [`Fault`] vocabulary, the schedule ([`spaced`]) and the [`Nemesis`]; the
//! rest is in `faults/` and re-exported here: [`target`] (the server under test, admin
//! connections, `INFO`), [`server`] (the injectors against the server process and its data),
//! [`net`] (network faults through the target's proxy), [`sampler`] (the TTL / owner sampler),
//! [`clock`] (steps of the machine's wall clock, by which Redis expires keys, seen as faults).
#![allow(dead_code)]

mod clock;
mod net;
mod sampler;
mod server;
mod target;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, RngExt};

use super::history::{now_ns, FaultRecord};

// Each test binary uses a different part (as `dead_code` above).
#[allow(unused_imports)]
pub use self::clock::{step_record, ClockWatch};
#[allow(unused_imports)]
pub use self::net::NetFault;
#[allow(unused_imports)]
pub use self::sampler::{Sampler, SamplerReport};
#[allow(unused_imports)]
pub use self::server::{
    busy_script, client_kill, client_pause, flushall, kill9_restart, oom_for, script_flush, sigstop_for,
    wrong_type, Foreign, Stopped,
};
#[allow(unused_imports)]
pub use self::target::{admin_conn, info_field, pid, Target};

/// One fault to inject.
#[derive(Clone, Debug)]
pub enum Fault {
    SigStop(Duration),
    ClientKillNormal,
    ClientKillPubsub,
    ClientPause {
        d: Duration,
        mode: &'static str,
    },
    BusyScript(Duration),
    ScriptFlush,
    Oom(Duration),
    WrongType {
        name: String,
        kind: Foreign,
        ttl: Duration,
    },
    /// kill -9 and restart without persistence (data loss).
    Restart,
    /// `FLUSHALL` (data loss).
    FlushAll,
    /// A fault of the network between the clients and the server (the target's proxy).
    Net(NetFault),
}

impl Fault {
    pub fn kind(&self) -> String {
        match self {
            Fault::SigStop(_) => "sigstop".into(),
            Fault::ClientKillNormal => "client-kill-normal".into(),
            Fault::ClientKillPubsub => "client-kill-pubsub".into(),
            Fault::ClientPause { mode, .. } => format!("client-pause-{}", mode.to_lowercase()),
            Fault::BusyScript(_) => "busy-script".into(),
            Fault::ScriptFlush => "script-flush".into(),
            Fault::Oom(_) => "oom".into(),
            Fault::WrongType { kind, .. } => format!("wrongtype-{kind:?}").to_lowercase(),
            Fault::Restart => "kill9-restart".into(),
            Fault::FlushAll => "flushall".into(),
            Fault::Net(n) => n.kind().into(),
        }
    }

    /// Erases every lock.
    pub fn data_loss(&self) -> bool {
        matches!(self, Fault::Restart | Fault::FlushAll)
    }

    /// Cuts the clients off the server long enough that a hold may run out.
    pub fn severs(&self) -> bool {
        matches!(self, Fault::Net(n) if n.disrupts())
    }

    /// The lock name whose data this fault overwrites.
    pub fn target(&self) -> Option<String> {
        match self {
            Fault::WrongType { name, .. } => Some(name.clone()),
            _ => None,
        }
    }

    /// Stalls Redis or cuts the connections renewals go through: a renewal due meanwhile fails
    /// and is retried later, so two of these within one watchdog trust window can legitimately
    /// cost a hold (see [`spaced`]).
    pub fn disrupts_renewal(&self) -> bool {
        matches!(
            self,
            Fault::SigStop(_)
                | Fault::ClientKillNormal
                | Fault::ClientPause { .. }
                | Fault::BusyScript(_)
                | Fault::Restart
        ) || matches!(self, Fault::Net(n) if n.disrupts())
    }

    /// How long the injector takes, about.
    pub fn planned(&self) -> Duration {
        match self {
            Fault::SigStop(d) | Fault::ClientPause { d, .. } | Fault::BusyScript(d) | Fault::Oom(d) => *d,
            Fault::WrongType { ttl, .. } => *ttl,
            Fault::Net(n) => n.duration(),
            _ => Duration::ZERO,
        }
    }

    /// Injects the fault; returns a description and, when the fault's effect began later than
    /// the call (after waiting for something), when it began (ns).
    pub async fn inject(&self, t: &Target) -> Result<(String, Option<u64>), String> {
        if let Fault::WrongType { name, kind, ttl } = self {
            let (d, at) = wrong_type(&t.url, name, *kind, *ttl, Duration::from_secs(8)).await?;
            return Ok((d, Some(at)));
        }
        let d = match self {
            Fault::SigStop(d) => sigstop_for(&t.url, *d).await,
            Fault::ClientKillNormal => client_kill(&t.url, "normal").await,
            Fault::ClientKillPubsub => client_kill(&t.url, "pubsub").await,
            Fault::ClientPause { d, mode } => client_pause(&t.url, *d, mode).await,
            Fault::BusyScript(d) => busy_script(&t.url, *d).await,
            Fault::ScriptFlush => script_flush(&t.url).await,
            Fault::Oom(d) => oom_for(&t.url, *d).await,
            Fault::WrongType { .. } => unreachable!(),
            Fault::Restart => kill9_restart(t).await,
            Fault::FlushAll => flushall(&t.url).await,
            Fault::Net(n) => match &t.proxy {
                Some(p) => n.inject(p).await,
                None => Err("a network fault needs the target's proxy".to_owned()),
            },
        }?;
        Ok((d, None))
    }

    /// One of each fault that loses no data, in random order, with random durations:
    /// SIGSTOP 200–800 ms, both CLIENT KILLs, CLIENT PAUSE WRITE and ALL 200–800 ms, a busy
    /// script of ~1 s, SCRIPT FLUSH, OOM 400–900 ms, and a key of another type over `victim`
    /// for `poison_ttl` (string or list).
    pub fn non_data_loss_round(rng: &mut impl Rng, victim: &str, poison_ttl: Duration) -> Vec<Fault> {
        let mut v = vec![
            Fault::SigStop(ms(rng, 200, 800)),
            Fault::ClientKillNormal,
            Fault::ClientKillPubsub,
            Fault::ClientPause {
                d: ms(rng, 200, 800),
                mode: "WRITE",
            },
            Fault::ClientPause {
                d: ms(rng, 200, 800),
                mode: "ALL",
            },
            Fault::BusyScript(ms(rng, 900, 1100)),
            Fault::ScriptFlush,
            Fault::Oom(ms(rng, 400, 900)),
            Fault::WrongType {
                name: victim.to_owned(),
                kind: if rng.random_bool(0.5) {
                    Foreign::String
                } else {
                    Foreign::List
                },
                ttl: poison_ttl,
            },
        ];
        v.shuffle(rng);
        v
    }
}

/// A schedule entry: wait `after`, then inject `fault`.
#[derive(Clone, Debug)]
pub struct Step {
    pub after: Duration,
    pub fault: Fault,
}

/// A schedule of `faults` in this order, each `gap_ms` (random in the range) after the previous
/// one ended, and any two that disrupt renewals at least `spacing` apart (end to start). With a
/// `spacing` longer than the watchdog timeout, one trust window never sees two disruptions, so
/// a correct watchdog (renewing every timeout/3, a command timeout per try) loses no hold.
pub fn spaced(
    rng: &mut impl Rng,
    faults: Vec<Fault>,
    gap_ms: std::ops::RangeInclusive<u64>,
    spacing: Duration,
) -> Vec<Step> {
    let mut t = Duration::ZERO; // estimated end of the previous fault
    let mut last_disruption: Option<Duration> = None;
    let mut out = Vec::new();
    for fault in faults {
        let mut after = Duration::from_millis(rng.random_range(gap_ms.clone()));
        if let (true, Some(e)) = (fault.disrupts_renewal(), last_disruption) {
            let earliest = e + spacing;
            if t + after < earliest {
                after = earliest - t;
            }
        }
        t += after + fault.planned();
        if fault.disrupts_renewal() {
            last_disruption = Some(t);
        }
        out.push(Step { after, fault });
    }
    out
}

/// Runs a schedule of faults in a background task, one at a time, recording each one's window.
pub struct Nemesis {
    task: tokio::task::JoinHandle<Vec<FaultRecord>>,
    stop: Arc<AtomicBool>,
}

/// An injector that has not returned after this long is abandoned (recorded as an error).
const INJECT_LIMIT: Duration = Duration::from_secs(20);

impl Nemesis {
    /// Starts injecting `steps` against `target`; no fault starts after `until`.
    pub fn spawn(target: Target, steps: Vec<Step>, until: tokio::time::Instant) -> Nemesis {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let task = tokio::spawn(async move {
            let mut out = Vec::new();
            for step in steps {
                tokio::time::sleep(step.after).await;
                if stop2.load(Ordering::Relaxed) || tokio::time::Instant::now() >= until {
                    break;
                }
                let mut start = now_ns();
                let r = match tokio::time::timeout(INJECT_LIMIT, step.fault.inject(&target)).await {
                    Ok(r) => r,
                    Err(_) => Err(format!("injector did not return within {INJECT_LIMIT:?}")),
                };
                let end = now_ns();
                let (detail, error) = match r {
                    Ok((d, began)) => {
                        start = began.unwrap_or(start);
                        (d, None)
                    }
                    Err(e) => (format!("{:?}", step.fault), Some(e)),
                };
                out.push(FaultRecord {
                    kind: step.fault.kind(),
                    detail,
                    data_loss: step.fault.data_loss(),
                    target: step.fault.target(),
                    severs: step.fault.severs(),
                    start,
                    end,
                    error,
                });
            }
            out
        });
        Nemesis { task, stop }
    }

    /// Waits for the schedule to finish (or `until`), returning the faults injected.
    pub async fn join(self) -> Vec<FaultRecord> {
        self.task.await.expect("the nemesis task panicked")
    }

    /// Starts no further fault, waits for the current one to end.
    pub async fn stop(self) -> Vec<FaultRecord> {
        self.stop.store(true, Ordering::Relaxed);
        self.join().await
    }
}

fn ms(rng: &mut impl Rng, lo: u64, hi: u64) -> Duration {
    Duration::from_millis(rng.random_range(lo..=hi))
}
