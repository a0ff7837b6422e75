//! What the server can do for the client, each probed with the command the client itself would
//! send (never read from a version number): RESP3 (the pub/sub connection's pushes), `CLIENT
//! TRACKINGINFO` (a cluster's tracking check) and sharded pub/sub (`SPUBLISH`/`SSUBSCRIBE`).

use super::{is_noperm, reason, Doctor};
use crate::doctor::{check, Check, Status};

/// How one probe came out.
enum Probe {
    Yes,
    /// The server does not know the command (an older version).
    No(String),
    /// The server knows it but this user may not run it.
    Denied,
}

impl Probe {
    fn of(r: redis::RedisResult<redis::Value>) -> Probe {
        match r {
            Ok(_) => Probe::Yes,
            Err(e) if is_noperm(&e) => Probe::Denied,
            Err(e) => Probe::No(reason(&e)),
        }
    }
}

impl Doctor {
    /// One line: which of the optional features the server has, and what the client does
    /// without each. A server without RESP3 is a warning (waiters then poll); the others only
    /// change how soon a cluster client learns of a loss or where unlock messages travel.
    pub(in crate::doctor) async fn features(&mut self) -> Check {
        const NAME: &str = "features";
        // `HELLO 3` switches this connection to RESP3; `HELLO 2` switches it back (redis-rs
        // reads both), so the checks after this one see the replies they expect
        let resp3 = Probe::of(
            redis::cmd("HELLO")
                .arg(3)
                .query_async::<redis::Value>(&mut self.conn)
                .await,
        );
        if matches!(resp3, Probe::Yes) {
            let _: redis::RedisResult<redis::Value> =
                redis::cmd("HELLO").arg(2).query_async(&mut self.conn).await;
        }
        let trackinginfo = Probe::of(
            redis::cmd("CLIENT")
                .arg("TRACKINGINFO")
                .query_async::<redis::Value>(&mut self.conn)
                .await,
        );
        let sharded = Probe::of(
            redis::cmd("PUBSUB")
                .arg("SHARDNUMSUB")
                .arg("redisson-lock:doctor")
                .query_async::<redis::Value>(&mut self.conn)
                .await,
        );
        let (status, message) = judge_features(&resp3, &trackinginfo, &sharded);
        check(NAME, status, message)
    }
}

/// The verdict and the line for the three probes.
fn judge_features(resp3: &Probe, trackinginfo: &Probe, sharded: &Probe) -> (Status, String) {
    let mut parts = Vec::new();
    let mut status = Status::Ok;
    parts.push(match resp3 {
        Probe::Yes => "RESP3 yes (waiters are woken by pushes)".to_owned(),
        // Redis 6 checks a bare `HELLO 3` against the user's rules; the client's own connections
        // send `HELLO 3 AUTH ...` (or connect as the default user), which is allowed
        Probe::Denied => {
            "RESP3 yes (a bare HELLO 3 is denied to this user; the client's HELLO 3 AUTH is not)".to_owned()
        }
        Probe::No(why) => {
            status = Status::Warn;
            format!("RESP3 no (HELLO 3 {why}; Redis < 6): waiters poll instead of being woken")
        }
    });
    parts.push(match trackinginfo {
        Probe::Yes => "CLIENT TRACKINGINFO yes".to_owned(),
        Probe::Denied => {
            "CLIENT TRACKINGINFO denied (in a cluster, connections the client replaces are noticed at the next renewal)"
                .to_owned()
        }
        Probe::No(_) => {
            "CLIENT TRACKINGINFO no (Redis < 6.2: in a cluster, connections the client replaces are noticed at the next renewal)"
                .to_owned()
        }
    });
    parts.push(match sharded {
        Probe::Yes => "sharded pub/sub yes".to_owned(),
        Probe::Denied => "sharded pub/sub denied (PUBSUB SHARDNUMSUB)".to_owned(),
        Probe::No(_) => {
            "sharded pub/sub no (Redis < 7: in a cluster, unlock messages go to every node, as Redisson's before 3.22)"
                .to_owned()
        }
    });
    (status, parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_resp3_is_a_warning() {
        let no = || Probe::No("failed: unknown command".into());
        let (s, m) = judge_features(&Probe::Yes, &Probe::Yes, &Probe::Yes);
        assert!(s == Status::Ok && m.starts_with("RESP3 yes"), "{m}");
        let (s, m) = judge_features(&Probe::Yes, &no(), &no());
        assert!(s == Status::Ok, "{m}");
        assert!(
            m.contains("TRACKINGINFO no") && m.contains("sharded pub/sub no"),
            "{m}"
        );
        let (s, m) = judge_features(&no(), &no(), &no());
        assert!(s == Status::Warn && m.contains("waiters poll"), "{m}");
        let (s, m) = judge_features(&Probe::Denied, &Probe::Denied, &Probe::Yes);
        assert!(s == Status::Ok && m.contains("TRACKINGINFO denied"), "{m}");
    }
}
