//! One watchdog per client: renews every watchdog-mode hold in batches (protocol §3.2).
//!
//! The registry maps (lock key, owner field) to the number of guards that hold it in watchdog
//! mode and the lease those guards observe. Registration happens synchronously when an
//! acquisition returns and removal synchronously before an unlock is sent, so a renewal can
//! never outlive the last unlock (the race behind Redisson #7272). Every `timeout / 3` the task
//! sends the batched renewal script: at most `batch size` keys per call (and one cluster slot per
//! call in cluster mode). A `0` reply means the owner's field is gone: the entry is dropped and its
//! guards learn the lock is lost. Errors are logged and renewal goes on; an entry that has not
//! been renewed by its deadline (`lease - margin` after the last success) is reported lost.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::config::Config;
use crate::conn::{slot_groups, Connection};
use crate::lease::{after, Lease, LeaseState, LostReason};
use crate::script;

/// How a hold is renewed: the two batched renewal scripts of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenewKind {
    /// `HEXISTS key field` → `PEXPIRE key` (RLock, write lock, and every RLock-shaped kind).
    Hash,
    /// A read hold: renew the owner's `rwlock_timeout` keys and the hash.
    Read,
}

struct Entry {
    count: usize,
    lease: Arc<Lease>,
    renew: RenewKind,
}

/// The owners of one lock that this client holds in watchdog mode. Almost always one, so that
/// case is stored inline (a map per lock would cost ~200 bytes per held lock).
enum Owners {
    One(Arc<str>, Entry),
    Many(HashMap<Arc<str>, Entry>),
}

impl Owners {
    fn get_mut(&mut self, field: &str) -> Option<&mut Entry> {
        match self {
            Owners::One(f, e) => (&**f == field).then_some(e),
            Owners::Many(m) => m.get_mut(field),
        }
    }

    /// Removes `field`; true when it was there. May leave an empty `Many`.
    fn remove(&mut self, field: &str) -> bool {
        match self {
            Owners::One(f, _) => {
                if &**f == field {
                    *self = Owners::Many(HashMap::new());
                    true
                } else {
                    false
                }
            }
            Owners::Many(m) => m.remove(field).is_some(),
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Owners::Many(m) if m.is_empty())
    }

    fn retain(
        &mut self,
        key: &Arc<str>,
        keep: &mut impl FnMut(&Arc<str>, &Arc<str>, &mut Entry) -> bool,
    ) -> usize {
        match self {
            Owners::One(f, e) => {
                if keep(key, f, e) {
                    0
                } else {
                    *self = Owners::Many(HashMap::new());
                    1
                }
            }
            Owners::Many(m) => {
                let before = m.len();
                m.retain(|f, e| keep(key, f, e));
                before - m.len()
            }
        }
    }
}

/// lock key → owner field → entry; lookups by `&str` allocate nothing.
#[derive(Default)]
struct Registry {
    locks: HashMap<Arc<str>, Owners>,
    len: usize,
}

impl Registry {
    fn get_mut(&mut self, key: &str, field: &str) -> Option<&mut Entry> {
        self.locks.get_mut(key)?.get_mut(field)
    }

    fn remove(&mut self, key: &str, field: &str) {
        if let Some(owners) = self.locks.get_mut(key) {
            if owners.remove(field) {
                self.len -= 1;
            }
            if owners.is_empty() {
                self.locks.remove(key);
            }
        }
    }

    fn entry_or_insert(
        &mut self,
        key: &Arc<str>,
        field: &Arc<str>,
        make: impl FnOnce() -> Entry,
    ) -> &mut Entry {
        let owners = match self.locks.entry(key.clone()) {
            std::collections::hash_map::Entry::Vacant(v) => {
                self.len += 1;
                return match v.insert(Owners::One(field.clone(), make())) {
                    Owners::One(_, e) => e,
                    Owners::Many(_) => unreachable!("just inserted One"),
                };
            }
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
        };
        if owners.get_mut(field).is_none() {
            self.len += 1;
            let mut map = match std::mem::replace(owners, Owners::Many(HashMap::new())) {
                Owners::One(f, e) => HashMap::from([(f, e)]),
                Owners::Many(m) => m,
            };
            map.insert(field.clone(), make());
            *owners = Owners::Many(map);
        }
        owners.get_mut(field).expect("present: found or just inserted")
    }

    /// Keeps the entries for which `keep` is true.
    fn retain(&mut self, mut keep: impl FnMut(&Arc<str>, &Arc<str>, &mut Entry) -> bool) {
        let mut removed = 0;
        self.locks.retain(|key, owners| {
            removed += owners.retain(key, &mut keep);
            !owners.is_empty()
        });
        self.len -= removed;
    }
}

pub(crate) struct Watchdog {
    shared: Arc<Shared>,
}

struct Shared {
    entries: Mutex<Registry>,
    timeout: Duration,
    margin: Duration,
}

impl Watchdog {
    /// Starts the watchdog task on the current runtime. It ends when the `Watchdog` is dropped.
    pub(crate) fn start(conn: Connection, config: &Config) -> Watchdog {
        let shared = Arc::new(Shared {
            entries: Mutex::new(Registry::default()),
            timeout: config.lock_watchdog_timeout,
            margin: config.lease_margin(config.lock_watchdog_timeout),
        });
        let task = Task {
            shared: Arc::downgrade(&shared),
            conn,
            period: config.lock_watchdog_timeout / 3,
            batch: config.watchdog_batch_size,
            command_timeout: config.command_timeout,
            timeout_ms: config.lock_watchdog_timeout.as_millis().max(1) as u64,
        };
        tokio::spawn(task.run());
        Watchdog { shared }
    }

    /// Adds one watchdog-mode hold of `field` on `key`, granted by a request sent at `sent_at`.
    pub(crate) fn register(
        &self,
        key: &Arc<str>,
        field: &Arc<str>,
        renew: RenewKind,
        sent_at: Instant,
    ) -> Arc<Lease> {
        let mut entries = self.shared.entries.lock();
        let e = entries.entry_or_insert(key, field, || Entry {
            count: 0,
            renew,
            lease: Arc::new(Lease::new(
                after(sent_at, self.shared.timeout - self.shared.margin),
                LostReason::RenewalFailed,
            )),
        });
        e.count += 1;
        e.lease
            .renewed(after(sent_at, self.shared.timeout - self.shared.margin));
        e.lease.clone()
    }

    /// Removes one hold; `lease` (when given) must be the one the guard observes, so a guard of
    /// an entry that was already lost and replaced does not remove its successor's count.
    pub(crate) fn unregister(&self, key: &str, field: &str, lease: Option<&Arc<Lease>>) {
        let mut entries = self.shared.entries.lock();
        if let Some(e) = entries.get_mut(key, field) {
            if lease.is_some_and(|l| !Arc::ptr_eq(l, &e.lease)) {
                return;
            }
            e.count -= 1;
            if e.count == 0 {
                e.lease.set(LeaseState::Released);
                entries.remove(key, field);
            }
        }
    }

    /// Drops every entry of `key` (force unlock), reporting `reason` to their guards.
    pub(crate) fn remove_key(&self, key: &str, reason: LostReason) {
        self.shared.entries.lock().retain(|k, _, e| {
            if &**k == key {
                e.lease.set(LeaseState::Lost(reason));
                false
            } else {
                true
            }
        });
    }

    /// Number of (key, owner) entries being renewed.
    pub(crate) fn len(&self) -> usize {
        self.shared.entries.lock().len
    }
}

struct Task {
    shared: Weak<Shared>,
    conn: Connection,
    period: Duration,
    batch: usize,
    command_timeout: Duration,
    timeout_ms: u64,
}

struct Item {
    key: Arc<str>,
    field: Arc<str>,
    lease: Arc<Lease>,
    renew: RenewKind,
}

impl Task {
    async fn run(self) {
        let mut tick = tokio::time::interval(self.period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(shared) = self.shared.upgrade() else {
                return;
            };
            let items = Self::collect(&shared);
            if items.is_empty() {
                continue;
            }
            self.renew(&shared, items).await;
        }
    }

    /// Takes a snapshot of live entries; entries past their deadline are reported lost.
    fn collect(shared: &Shared) -> Vec<Item> {
        let mut items = Vec::new();
        shared.entries.lock().retain(|key, field, e| match e.lease.state() {
            LeaseState::Held => {
                items.push(Item {
                    key: key.clone(),
                    field: field.clone(),
                    lease: e.lease.clone(),
                    renew: e.renew,
                });
                true
            }
            state => {
                tracing::warn!(key = %key, field = %field, ?state, "lock lost: no renewal succeeded before the lease deadline");
                false
            }
        });
        items
    }

    async fn renew(&self, shared: &Shared, items: Vec<Item>) {
        let (hash, read): (Vec<Item>, Vec<Item>) =
            items.into_iter().partition(|i| i.renew == RenewKind::Hash);
        let hash_groups = slot_groups(hash, self.conn.is_cluster(), |it| &it.key);
        let hash_calls = hash_groups
            .iter()
            .flat_map(|g| g.chunks(self.batch))
            .map(|chunk| async move {
                let mut inv = script::LOCK_RENEW_BATCH.prepare_invoke();
                inv.arg(self.timeout_ms);
                for it in chunk {
                    inv.key(&*it.key).arg(&*it.field);
                }
                let refs: Vec<&Item> = chunk.iter().collect();
                self.send(&inv, refs).await
            });
        // read holds: one (hash, key prefix) pair per lock with all of this client's fields on it
        let mut read_locks: Vec<Vec<Item>> = Vec::new();
        {
            let mut index: HashMap<Arc<str>, usize> = HashMap::new();
            for it in read {
                let i = *index.entry(it.key.clone()).or_insert_with(|| {
                    read_locks.push(Vec::new());
                    read_locks.len() - 1
                });
                read_locks[i].push(it);
            }
        }
        let read_groups = slot_groups(read_locks, self.conn.is_cluster(), |lock| &lock[0].key);
        let read_calls = read_groups
            .iter()
            .flat_map(|g| g.chunks(self.batch))
            .map(|locks| async move {
                let mut inv = script::RW_READ_RENEW_BATCH.prepare_invoke();
                inv.arg(self.timeout_ms);
                let mut refs = Vec::new();
                for lock in locks {
                    inv.key(&*lock[0].key)
                        .key(crate::name::rw_key_prefix(&lock[0].key));
                    inv.arg(lock.len());
                    for it in lock {
                        inv.arg(&*it.field);
                        refs.push(it);
                    }
                }
                self.send(&inv, refs).await
            });
        let (a, b) = futures::future::join(
            futures::future::join_all(hash_calls),
            futures::future::join_all(read_calls),
        )
        .await;
        for (refs, sent_at, res) in a.into_iter().chain(b) {
            match res {
                Ok(flags) if flags.len() == refs.len() => {
                    let until = after(sent_at, shared.timeout - shared.margin);
                    for (it, flag) in refs.iter().zip(flags) {
                        if flag == 1 {
                            it.lease.renewed(until);
                            tracing::trace!(key = %it.key, field = %it.field, "renewed");
                        } else {
                            Self::lost(shared, it);
                        }
                    }
                }
                Ok(flags) => tracing::warn!(
                    expected = refs.len(),
                    got = flags.len(),
                    "renewal reply has the wrong length; will retry"
                ),
                Err(e) => {
                    tracing::warn!(error = %e, locks = refs.len(), "lock renewal failed; will retry")
                }
            }
        }
    }

    async fn send<'a>(
        &self,
        inv: &redis::ScriptInvocation<'_>,
        refs: Vec<&'a Item>,
    ) -> (Vec<&'a Item>, Instant, crate::Result<Vec<i64>>) {
        let sent_at = Instant::now();
        let res = script::run(&self.conn, self.command_timeout, &refs[0].key, inv).await;
        (refs, sent_at, res)
    }

    fn lost(shared: &Shared, it: &Item) {
        let mut entries = shared.entries.lock();
        if let Some(e) = entries.get_mut(&it.key, &it.field) {
            if Arc::ptr_eq(&e.lease, &it.lease) {
                entries.remove(&it.key, &it.field);
            }
        }
        drop(entries);
        it.lease.set(LeaseState::Lost(LostReason::OwnerGone));
        tracing::warn!(key = %it.key, field = %it.field, "lock lost: renewal found the owner's field gone");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            count: 1,
            lease: Arc::new(Lease::new(Instant::now(), LostReason::RenewalFailed)),
            renew: RenewKind::Hash,
        }
    }

    #[test]
    fn registry_counts_entries_across_locks() {
        let mut r = Registry::default();
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let (f1, f2): (Arc<str>, Arc<str>) = ("c:1".into(), "c:2".into());
        r.entry_or_insert(&a, &f1, entry);
        r.entry_or_insert(&a, &f2, entry);
        r.entry_or_insert(&b, &f1, entry).count += 1;
        r.entry_or_insert(&b, &f1, || unreachable!("exists"));
        assert_eq!(r.len, 3);
        assert_eq!(r.get_mut("b", "c:1").map(|e| e.count), Some(2));
        r.remove("a", "c:1");
        r.remove("a", "nope");
        assert_eq!(r.len, 2);
        r.retain(|k, _, _| &**k != "a");
        assert_eq!(r.len, 1);
        assert!(r.get_mut("a", "c:2").is_none());
        r.remove("b", "c:1");
        assert_eq!(r.len, 0);
        assert!(r.locks.is_empty(), "empty locks are dropped");
    }
}
