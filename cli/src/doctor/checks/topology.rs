//! The checks on where the locks live: replicas and failover, and a cluster's slot coverage.

use super::{parse_info, Doctor, Refused};
use crate::doctor::{check, skipped, Check, Status};

impl Doctor {
    pub(in crate::doctor) async fn replication(&mut self) -> Check {
        const NAME: &str = "replication";
        let Some(role) = self.role.as_ref().map(|(r, _)| r.clone()) else {
            return skipped(
                NAME,
                &["INFO", "ROLE"],
                format!(
                    "could not check replicas ({}; ROLE refused too)",
                    self.info_reason()
                ),
            );
        };
        if role == "slave" {
            let master = format!(
                "{}:{}",
                self.info("master_host").unwrap_or("?"),
                self.info("master_port").unwrap_or("?")
            );
            return check(
                NAME,
                Status::Warn,
                format!("this server is a replica of {master}: locks are taken on the master — run doctor against it"),
            );
        }
        let n = self.replicas().unwrap_or(0);
        let from_role: &[&str] = match self.info_refused() {
            Some(r) => &[r.command],
            None => &[],
        };
        if n == 0 {
            return check(
                NAME,
                Status::Ok,
                "master without replicas (no failover can lose a lock)",
            )
            .refusing(from_role);
        }
        match self.config("min-replicas-to-write").await {
            Ok(m) if m.trim() == "0" => check(
                NAME,
                Status::Warn,
                format!("{n} replica(s) and min-replicas-to-write 0: a failover to a replica that missed a lock write lets a second client take the lock — set min-replicas-to-write 1 (with min-replicas-max-lag), and have clients WAIT for a replica (Redisson does)"),
            ),
            Ok(m) => check(NAME, Status::Ok, format!("{n} replica(s), min-replicas-to-write {m}")),
            Err(why) => skipped(
                NAME,
                &[why.command],
                format!("{n} replica(s); could not check min-replicas-to-write ({why}): without it a failover can lose a lock (mind WAIT)"),
            ),
        }
        .refusing(from_role)
    }

    pub(in crate::doctor) async fn cluster(&mut self) -> Check {
        const NAME: &str = "cluster";
        let enabled = self.cluster_enabled();
        if enabled == Some(false) {
            return check(NAME, Status::Ok, "not a cluster (cluster_enabled 0)");
        }
        // INFO refused: CLUSTER INFO answers on a cluster node, and says "disabled" elsewhere
        let r: redis::RedisResult<String> = redis::cmd("CLUSTER")
            .arg("INFO")
            .query_async(&mut self.conn)
            .await;
        let info = match r {
            Ok(text) => parse_info(&text),
            Err(e) if enabled.is_none() && e.to_string().contains("cluster support disabled") => {
                return check(
                    NAME,
                    Status::Ok,
                    "not a cluster (CLUSTER INFO: cluster support disabled)",
                )
                .refusing(&self.info_refused().map(|r| vec![r.command]).unwrap_or_default())
            }
            Err(e) => {
                let cluster = Refused::new("CLUSTER INFO", &e);
                return match self.info_refused() {
                    Some(info) => skipped(
                        NAME,
                        &[info.command, cluster.command],
                        format!("could not check cluster mode or state ({info}; {cluster})"),
                    ),
                    None => skipped(
                        NAME,
                        &[cluster.command],
                        format!("cluster mode, but could not check the cluster's state ({cluster})"),
                    ),
                };
            }
        };
        let num = |k: &str| info.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let state = info.get("cluster_state").map(String::as_str).unwrap_or("?");
        let (assigned, ok, pfail, fail) = (
            num("cluster_slots_assigned"),
            num("cluster_slots_ok"),
            num("cluster_slots_pfail"),
            num("cluster_slots_fail"),
        );
        let size = num("cluster_size");
        if state != "ok" {
            check(
                NAME,
                Status::Fail,
                format!("cluster_state {state} ({assigned} of 16384 slots assigned, {fail} failing): locks in uncovered slots cannot be taken — fix the cluster"),
            )
        } else if assigned < 16384 {
            check(
                NAME,
                Status::Fail,
                format!("only {assigned} of 16384 slots assigned: locks in the others cannot be taken — assign every slot"),
            )
        } else if ok < assigned || pfail > 0 || fail > 0 {
            check(
                NAME,
                Status::Warn,
                format!("cluster_state ok but {pfail} slot(s) possibly failing and {fail} failing"),
            )
        } else {
            check(
                NAME,
                Status::Ok,
                format!("cluster_state ok, all 16384 slots covered by {size} master(s)"),
            )
        }
    }
}
