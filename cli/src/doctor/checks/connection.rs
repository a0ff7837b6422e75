//! The checks measured over the connection: the round trip to Redis, this machine's clock
//! against Redis' `TIME`, and whether the server tells clients when a held lock changes.

use std::time::{Duration, Instant};

use redisson_lock::LossSignal;

use super::{is_noperm, reason, Doctor, Refused};
use crate::doctor::{check, skipped, Check, Status};
use crate::now_ms;
use crate::render::fmt_ms;

/// Round trips above this are a warning: waits, renewals and releases all pay them.
const RTT_WARN: Duration = Duration::from_millis(50);
/// Round trips above this are a failure: a tenth of the default 30 s watchdog lease.
const RTT_FAIL: Duration = Duration::from_secs(3);
/// Clock offsets (this machine against Redis' `TIME`) above this are a warning.
const CLOCK_WARN_MS: i64 = 1_000;
/// Above this a failure: the default lease (30 s); fair-lock waiter deadlines written by this
/// machine are then off by more than a whole lease for every other client.
const CLOCK_FAIL_MS: i64 = 30_000;
/// PINGs whose median is the round trip.
const PINGS: usize = 10;

impl Doctor {
    pub(in crate::doctor) async fn round_trip(&mut self) -> Check {
        const NAME: &str = "round-trip";
        let mut samples = Vec::with_capacity(PINGS);
        for _ in 0..PINGS {
            let start = Instant::now();
            let r: redis::RedisResult<String> = redis::cmd("PING").query_async(&mut self.conn).await;
            if let Err(e) = r {
                return skipped(
                    NAME,
                    &["PING"],
                    format!("could not measure ({})", Refused::new("PING", &e)),
                );
            }
            samples.push(start.elapsed());
        }
        samples.sort();
        let median = samples[samples.len() / 2];
        let max = samples[samples.len() - 1];
        let (status, message) = judge_round_trip(median, max);
        check(NAME, status, message)
    }

    /// How soon a client learns that a lock it holds is gone: within about one round trip where
    /// the server allows `CLIENT TRACKING` (Redis 6+), else at the next renewal; and `path`, what
    /// a lock client connected here takes (or why none could be connected).
    pub(in crate::doctor) async fn loss_detection(&mut self, path: Result<LossSignal, String>) -> Check {
        const NAME: &str = "loss-detection";
        const RENEWAL: &str =
            "a lost lock is reported through lost() at the next renewal (within lock_watchdog_timeout / 3)";
        let on: redis::RedisResult<()> = redis::cmd("CLIENT")
            .arg("TRACKING")
            .arg("ON")
            .query_async(&mut self.conn)
            .await;
        match on {
            Ok(()) => {
                let off: redis::RedisResult<()> = redis::cmd("CLIENT")
                    .arg("TRACKING")
                    .arg("OFF")
                    .query_async(&mut self.conn)
                    .await;
                drop(off); // only this probe's connection was tracking
                const TRACKING: &str = "tracking: a deleted, flushed, expired or force-unlocked lock is reported through lost() within about one round trip";
                match path {
                    Ok(LossSignal::TrackingWithoutEcho) => check(
                        NAME,
                        Status::Ok,
                        format!("{TRACKING}, without the echo of the client's own renewals (a connection of the loss watch's own tracks the held keys: one more connection per client)"),
                    ),
                    Ok(LossSignal::Renewal) => check(
                        NAME,
                        Status::Warn,
                        format!("CLIENT TRACKING is allowed, but a lock client connected here runs renewal only (no RESP3 pub/sub connection): {RENEWAL}"),
                    ),
                    Ok(_) => check(
                        NAME,
                        Status::Ok,
                        format!("{TRACKING}; each renewal is pushed back and read again (on Redis 7.2+ or Valkey, single, Sentinel or cluster, with +client|id +client|trackinginfo, a connection of the client's own tracks without that echo)"),
                    ),
                    Err(why) => check(
                        NAME,
                        Status::Ok,
                        format!("{TRACKING} (the path a lock client takes is not known: connecting one failed: {why})"),
                    ),
                }
            }
            Err(e) if is_noperm(&e) => check(
                NAME,
                Status::Warn,
                format!("CLIENT TRACKING denied: {RENEWAL}; allow +client|tracking for a report within one round trip"),
            ),
            Err(e) => check(
                NAME,
                Status::Ok,
                format!("renewal only (CLIENT TRACKING {}; Redis < 6?): {RENEWAL}", reason(&e)),
            ),
        }
    }

    pub(in crate::doctor) async fn clock(&mut self) -> Check {
        const NAME: &str = "clock";
        let before = now_ms() as i64;
        let r: redis::RedisResult<(String, String)> = redis::cmd("TIME").query_async(&mut self.conn).await;
        let after = now_ms() as i64;
        let (secs, micros) = match r {
            Ok(t) => t,
            Err(e) => {
                return skipped(
                    NAME,
                    &["TIME"],
                    format!("could not compare clocks ({})", Refused::new("TIME", &e)),
                )
            }
        };
        let (Ok(secs), Ok(micros)) = (secs.parse::<i64>(), micros.parse::<i64>()) else {
            return check(
                NAME,
                Status::Warn,
                format!("cannot compare clocks: TIME replied {secs:?} {micros:?}"),
            );
        };
        let redis_ms = secs * 1000 + micros / 1000;
        let offset = redis_ms - (before + after) / 2;
        let uncertainty = (after - before) / 2;
        let (status, message) = judge_clock(offset, uncertainty);
        check(NAME, status, message)
    }
}

/// The clock verdict for Redis' time minus ours (`offset_ms`), measured within ±`uncertainty_ms`.
fn judge_clock(offset_ms: i64, uncertainty_ms: i64) -> (Status, String) {
    // both clocks are read to the millisecond: 1ms more than the uncertainty is rounding
    let text = if offset_ms.abs() <= uncertainty_ms + 1 {
        format!("this machine's clock agrees with Redis' TIME (±{uncertainty_ms}ms)")
    } else {
        format!(
            "this machine's clock is {} {} Redis' TIME (±{uncertainty_ms}ms)",
            fmt_ms(offset_ms.unsigned_abs()),
            if offset_ms > 0 { "behind" } else { "ahead of" },
        )
    };
    let why = "fair-lock waiter deadlines are written in client epoch ms and read by every other client — sync clocks with NTP";
    if offset_ms.abs() > CLOCK_FAIL_MS {
        (
            Status::Fail,
            format!("{text}: more than {}s; {why}", CLOCK_FAIL_MS / 1000),
        )
    } else if offset_ms.abs() > CLOCK_WARN_MS {
        (
            Status::Warn,
            format!("{text}: more than {}s; {why}", CLOCK_WARN_MS / 1000),
        )
    } else {
        (Status::Ok, text)
    }
}

/// The round-trip verdict for the median and the slowest of the PINGs.
fn judge_round_trip(median: Duration, max: Duration) -> (Status, String) {
    let ms = |d: Duration| format!("{:.2}ms", d.as_secs_f64() * 1000.0);
    let text = format!("median {} over {PINGS} PINGs (max {})", ms(median), ms(max));
    if median > RTT_FAIL {
        (
            Status::Fail,
            format!("{text}: a large share of the 30 s watchdog lease goes to round trips — move the clients closer to Redis"),
        )
    } else if median > RTT_WARN {
        (
            Status::Warn,
            format!(
                "{text}: above {} — every acquire, renewal and release waits that long",
                fmt_ms(RTT_WARN.as_millis() as u64)
            ),
        )
    } else {
        (Status::Ok, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_and_round_trip_thresholds() {
        assert_eq!(judge_clock(0, 0).0, Status::Ok);
        assert!(judge_clock(3, 5).1.contains("agrees"));
        assert!(judge_clock(1, 0).1.contains("agrees"), "1ms is rounding");
        assert!(judge_clock(-1, 0).1.contains("agrees"), "1ms is rounding");
        assert!(judge_clock(2, 0).1.contains("2ms behind"));
        assert_eq!(judge_clock(1_000, 0).0, Status::Ok);
        let (status, text) = judge_clock(-1_500, 1);
        assert_eq!(status, Status::Warn);
        assert!(text.contains("1.500s ahead of"), "{text}");
        assert_eq!(judge_clock(30_001, 0).0, Status::Fail);
        assert!(judge_clock(45_000, 2).1.contains("behind"));
        let ms = Duration::from_millis;
        assert_eq!(judge_round_trip(ms(50), ms(80)).0, Status::Ok);
        assert_eq!(judge_round_trip(ms(51), ms(80)).0, Status::Warn);
        assert_eq!(judge_round_trip(ms(3_001), ms(4_000)).0, Status::Fail);
    }
}
