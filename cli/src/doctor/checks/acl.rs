//! The `acl` check: may the user run every command the locks send, on a lock's keys and channels?
//! Asked with ACL DRYRUN, else by the connected user itself through the checker script.

use redis::Value;

use super::{is_noperm, parse_version, reason, Doctor};
use crate::doctor::acl::{
    checker_argv, checker_verdicts, judge_acl, probes, rule_for, Probe, SelfCheck, Targets, Verdict, CHECKER,
};
use crate::doctor::{check, skipped, Check, DoctorArgs, Status};

impl Doctor {
    pub(in crate::doctor) async fn acl(&mut self, args: &DoctorArgs, url_user: Option<&str>) -> Check {
        const NAME: &str = "acl";
        let cluster = self.cluster_enabled() == Some(true);
        let sharded = cluster
            && self
                .version
                .as_deref()
                .and_then(parse_version)
                .is_some_and(|v| v >= (7, 0, 0));
        let targets = match &args.map {
            Some(map) => Targets::map_entry(map),
            None => Targets::name(&args.name, args.synchronizers, args.group),
        };
        let probes = probes(&targets, sharded);
        // denied to most users; then the URL's user, else `default`
        let whoami = redis::cmd("ACL")
            .arg("WHOAMI")
            .query_async::<String>(&mut self.conn)
            .await
            .ok();
        let connected = whoami
            .or_else(|| url_user.map(str::to_owned))
            .unwrap_or_else(|| "default".to_owned());
        let user = args.acl_user.clone().unwrap_or_else(|| connected.clone());

        // 1. ACL DRYRUN (Redis 7.0+, needs the admin's +acl|dryrun): exact, with the reason.
        let mut verdicts = Vec::with_capacity(probes.len());
        let mut dryrun_error = None;
        for p in &probes {
            let mut cmd = redis::cmd("ACL");
            cmd.arg("DRYRUN").arg(&user);
            for a in &p.args {
                cmd.arg(a);
            }
            match cmd.query_async::<Value>(&mut self.conn).await {
                Ok(reply) => verdicts.push(p.dryrun_verdict(reply)),
                Err(e) => {
                    dryrun_error = Some(e);
                    break;
                }
            }
        }
        let method;
        if let Some(e) = dryrun_error {
            if args.acl_user.as_ref().is_some_and(|u| *u != connected) {
                return skipped(
                    NAME,
                    &["ACL DRYRUN"],
                    format!("could not check user `{user}`: ACL DRYRUN refused: {} (run doctor as an admin, or as `{user}` without --acl-user)", reason(&e)),
                );
            }
            // 2. The user checks itself: a script asks redis.acl_check_cmd (Redis 7.0+) for
            //    every probe; the script runs through SCRIPT LOAD + EVALSHA like the locks'.
            match self.self_check(&probes).await {
                Ok(v) => {
                    verdicts = v;
                    method = "redis.acl_check_cmd in a script";
                }
                Err(SelfCheck::Denied(denied)) => {
                    return check(
                        NAME,
                        Status::Fail,
                        format!(
                            "user `{user}` may not run {} (the locks run their scripts with EVALSHA, loading them with SCRIPT LOAD) — add {}; the commands inside the scripts could not be checked",
                            denied.join(" or "),
                            denied.iter().map(|d| rule_for(d)).collect::<Vec<_>>().join(" ")
                        ),
                    )
                }
                Err(SelfCheck::Unsupported(why)) => {
                    return skipped(
                        NAME,
                        &["ACL DRYRUN"],
                        format!("could not check user `{user}`'s permissions: ACL DRYRUN refused: {} and {why}", reason(&e)),
                    )
                }
            }
        } else {
            method = "ACL DRYRUN";
        }

        let (status, message) = judge_acl(&user, &targets.subject, method, &probes, &verdicts);
        check(NAME, status, message)
    }

    /// Runs the checker script as the connected user.
    async fn self_check(&mut self, probes: &[Probe]) -> Result<Vec<Verdict>, SelfCheck> {
        let argv = checker_argv(probes);
        let mut denied = Vec::new();
        let load: redis::RedisResult<String> = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(CHECKER)
            .query_async(&mut self.conn)
            .await;
        let reply: Option<redis::RedisResult<Value>> = match load {
            Ok(sha) => {
                let r = redis::cmd("EVALSHA")
                    .arg(&sha)
                    .arg(0)
                    .arg(&argv)
                    .query_async::<Value>(&mut self.conn)
                    .await;
                match r {
                    Err(e) if is_noperm(&e) => {
                        denied.push("EVALSHA".to_owned());
                        None
                    }
                    other => Some(other),
                }
            }
            Err(e) if is_noperm(&e) => {
                denied.push("SCRIPT LOAD".to_owned());
                // is EVALSHA allowed? a script that cannot exist answers NOSCRIPT if so
                let r = redis::cmd("EVALSHA")
                    .arg("0000000000000000000000000000000000000000")
                    .arg(0)
                    .query_async::<Value>(&mut self.conn)
                    .await;
                if matches!(&r, Err(e) if is_noperm(e)) {
                    denied.push("EVALSHA".to_owned());
                }
                None
            }
            Err(e) => Some(Err(e)),
        };
        let reply = match reply {
            Some(r) => r,
            // EVAL is not what the locks use, but it can still run the checker
            None => {
                let r = redis::cmd("EVAL")
                    .arg(CHECKER)
                    .arg(0)
                    .arg(&argv)
                    .query_async::<Value>(&mut self.conn)
                    .await;
                match r {
                    Err(e) if is_noperm(&e) => return Err(SelfCheck::Denied(denied)),
                    other => other,
                }
            }
        };
        let reply =
            reply.map_err(|e| SelfCheck::Unsupported(format!("the checker script {}", reason(&e))))?;
        checker_verdicts(probes, reply, &denied)
    }
}
