//! Network faults ([`NetFault`]) between the clients and the server, made by the target's proxy.

use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, RngExt};

use super::super::proxy::{Proxy, Stream, Toxic};
use super::{ms, Fault};

/// A network fault, made by the target's toxiproxy for a while and then taken away.
#[derive(Clone, Debug)]
pub enum NetFault {
    /// Every reply delayed `ms` ± `jitter_ms`.
    Latency { d: Duration, ms: u64, jitter_ms: u64 },
    /// Nothing passes either way; each connection is closed after `close_ms` (longer than the
    /// clients' command timeout): a stall, then a close. With `close_ms` 0 the connections stay
    /// open and silent (half-open) until the fault ends, and then what was held back is
    /// delivered, late: requests the clients gave up on run after all.
    Stall { d: Duration, close_ms: u64 },
    /// Connections are reset (RST) `after_ms` after data starts to flow: mid-pipeline.
    Reset { d: Duration, after_ms: u64 },
    /// Connections are closed once `bytes` of replies have passed: a reply cut in the middle,
    /// after the server ran the command.
    CutReplies { d: Duration, bytes: u64 },
    /// Requests and replies sliced into pieces of a few bytes.
    Slices { d: Duration },
    /// Replies limited to `kb_per_s`.
    Bandwidth { d: Duration, kb_per_s: u64 },
    /// The proxy down (connections closed, new ones refused), then up again.
    Down(Duration),
}

impl NetFault {
    pub(super) fn duration(&self) -> Duration {
        match self {
            NetFault::Latency { d, .. }
            | NetFault::Stall { d, .. }
            | NetFault::Reset { d, .. }
            | NetFault::CutReplies { d, .. }
            | NetFault::Slices { d }
            | NetFault::Bandwidth { d, .. }
            | NetFault::Down(d) => *d,
        }
    }

    pub(super) fn kind(&self) -> &'static str {
        match self {
            NetFault::Latency { .. } => "net-latency",
            NetFault::Stall { close_ms: 0, .. } => "net-half-open",
            NetFault::Stall { .. } => "net-stall-close",
            NetFault::Reset { .. } => "net-reset-peer",
            NetFault::CutReplies { .. } => "net-cut-replies",
            NetFault::Slices { .. } => "net-slicer",
            NetFault::Bandwidth { .. } => "net-bandwidth",
            NetFault::Down(_) => "net-proxy-down",
        }
    }

    /// Cuts connections or stalls them past a command timeout.
    pub(super) fn disrupts(&self) -> bool {
        matches!(
            self,
            NetFault::Stall { .. } | NetFault::Reset { .. } | NetFault::CutReplies { .. } | NetFault::Down(_)
        )
    }

    /// Makes the fault through `p` and takes it away again.
    pub async fn inject(&self, p: &Proxy) -> Result<String, String> {
        let d = self.duration();
        let ms = d.as_millis();
        match *self {
            NetFault::Latency { ms: l, jitter_ms, .. } => {
                p.with_toxics_for(&[Toxic::latency(Stream::Down, l, jitter_ms)], d)
                    .await?;
                Ok(format!("replies delayed {l} ± {jitter_ms} ms for {ms} ms"))
            }
            NetFault::Stall { close_ms, .. } => {
                let t = [
                    Toxic::timeout(Stream::Up, close_ms),
                    Toxic::timeout(Stream::Down, close_ms),
                ];
                p.with_toxics_for(&t, d).await?;
                Ok(if close_ms == 0 {
                    format!("no data either way for {ms} ms, connections left open (half-open), then the held-back data delivered")
                } else {
                    format!("no data either way, each connection closed after {close_ms} ms, for {ms} ms")
                })
            }
            NetFault::Reset { after_ms, .. } => {
                p.with_toxics_for(&[Toxic::reset_peer(Stream::Up, after_ms)], d)
                    .await?;
                Ok(format!(
                    "connections reset {after_ms} ms into their data, for {ms} ms"
                ))
            }
            NetFault::CutReplies { bytes, .. } => {
                p.with_toxics_for(&[Toxic::limit_data(Stream::Down, bytes)], d)
                    .await?;
                Ok(format!(
                    "connections closed after {bytes} bytes of replies, for {ms} ms"
                ))
            }
            NetFault::Slices { .. } => {
                let t = [
                    Toxic::slicer(Stream::Up, 4, 3, 20),
                    Toxic::slicer(Stream::Down, 4, 3, 20),
                ];
                p.with_toxics_for(&t, d).await?;
                Ok(format!(
                    "both ways sliced into 1-7 byte pieces 20 µs apart, for {ms} ms"
                ))
            }
            NetFault::Bandwidth { kb_per_s, .. } => {
                p.with_toxics_for(&[Toxic::bandwidth(Stream::Down, kb_per_s)], d)
                    .await?;
                Ok(format!("replies limited to {kb_per_s} KB/s for {ms} ms"))
            }
            NetFault::Down(_) => {
                p.down_for(d).await?;
                Ok(format!(
                    "proxy down for {ms} ms (connections closed, new ones refused), then up"
                ))
            }
        }
    }

    /// One of each network fault, in random order, with random parameters: latency 20 ± 20 ms
    /// for 2-4 s, a stall of 0.7-1.2 s closing each connection after 600-900 ms (the clients'
    /// command timeout is shorter) or leaving it half-open, resets 0-30 ms into the data for 200-500 ms, replies cut
    /// after 16-2048 bytes for 300-900 ms, slicing for 1.5-3 s, 16-64 KB/s for 1.5-3 s, and the
    /// proxy down for 300-1000 ms.
    pub fn round(rng: &mut impl Rng) -> Vec<Fault> {
        let mut v = vec![
            NetFault::Latency {
                d: ms(rng, 2_000, 4_000),
                ms: 20,
                jitter_ms: 20,
            },
            NetFault::Stall {
                d: ms(rng, 700, 1_200),
                close_ms: if rng.random_bool(0.5) {
                    0
                } else {
                    rng.random_range(600..=900)
                },
            },
            NetFault::Reset {
                d: ms(rng, 200, 500),
                after_ms: rng.random_range(0..=30),
            },
            NetFault::CutReplies {
                d: ms(rng, 300, 900),
                bytes: rng.random_range(16..=2_048),
            },
            NetFault::Slices {
                d: ms(rng, 1_500, 3_000),
            },
            NetFault::Bandwidth {
                d: ms(rng, 1_500, 3_000),
                kb_per_s: rng.random_range(16..=64),
            },
            NetFault::Down(ms(rng, 300, 1_000)),
        ];
        v.shuffle(rng);
        v.into_iter().map(Fault::Net).collect()
    }
}
