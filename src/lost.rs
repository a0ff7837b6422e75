//! How a hold stands, as a value: held, released, or lost and why. What guards report, errors
//! carry and metrics count; it depends on nothing else in the crate.

/// Why a hold ended without the owner releasing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LostReason {
    /// Renewal found the owner's field gone: the lock expired, was force-unlocked, or Redis
    /// lost its data (restart, failover, eviction).
    OwnerGone,
    /// No renewal succeeded in time (Redis unreachable or too slow): the key may already have
    /// expired, so the hold can no longer be trusted.
    RenewalFailed,
    /// The lease given at acquisition ran out (no watchdog in lease mode).
    LeaseExpired,
    /// This client force-unlocked the lock.
    ForceUnlocked,
    /// The client shut down ([`Client::shutdown`](crate::Client::shutdown)) and released it.
    Shutdown,
}

impl std::fmt::Display for LostReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LostReason::OwnerGone => {
                "the owner's field is gone from the lock (expired, force-unlocked or Redis lost it)"
            }
            LostReason::RenewalFailed => "no renewal succeeded before the lease deadline",
            LostReason::LeaseExpired => "the lease ran out",
            LostReason::ForceUnlocked => "force-unlocked by this client",
            LostReason::Shutdown => "released by the client's shutdown",
        })
    }
}

/// The state of one hold as far as this process knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseState {
    /// Held: granted or renewed recently enough.
    Held,
    /// Lost; it never becomes `Held` again.
    Lost(LostReason),
    /// Released by its owner.
    Released,
}

/// How a client learns that a hold of its is lost ([`ClientStats::loss_signal`](crate::ClientStats::loss_signal)).
///
/// ```no_run
/// # fn demo(client: redisson_lock::Client) {
/// use redisson_lock::LossSignal;
/// if client.stats().loss_signal == LossSignal::Renewal {
///     println!("a lost lock is noticed at the next renewal only");
/// }
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LossSignal {
    /// At the next renewal only: tracking is off by configuration, not possible on this
    /// connection (RESP2, a cluster node's pub/sub), refused by the server, or the client shut down.
    Renewal,
    /// The server pushes a change of a held key on the pub/sub connection, within about one round
    /// trip; each renewal is pushed back too and read again.
    Tracking,
    /// The server pushes a change of a held key within about one round trip, tracked for a
    /// connection of the loss watch's own, which renews the held keys, so that the client's own
    /// renewals are not pushed back (servers that track only the keys a script reads: Redis 7.2+,
    /// Valkey; a single server, a Sentinel master or every master of a cluster).
    TrackingWithoutEcho,
}
