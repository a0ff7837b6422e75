//! Redis as the model sees it: a sequential executor of whole scripts (a script's reads and
//! writes happen in one step, nothing interleaves), a logical clock in ticks, and keys that expire
//! when the clock reaches their deadline (`PEXPIRE` stores an absolute deadline, as Redis does and
//! as replication carries it). Data loss is a store that goes back: empty after a restart without
//! persistence, or the replica's copy, which misses the last script, after a failover.

use std::collections::BTreeMap;

/// A client of the model: its index in the configuration.
pub type ClientId = u8;

/// An attempt's or a request's id: unique in a run (`redisson_unlock_latch:{N}:<id>`).
pub type ReqId = u8;

/// An owner field's identity: the client that owns it and a serial. Redisson's `uuid:threadId` and
/// the crate's pinned owners keep serial 0 for the whole run; the crate's default owner is fresh
/// per acquisition (serial 1, 2, ...), so its field exists only if that acquisition was granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner {
    /// The client that owns the field.
    pub client: ClientId,
    /// 0 for a pinned owner, the acquisition's number for a fresh one.
    pub serial: u8,
}

/// A field of a lock hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    /// The read-write lock's `mode` field; its value is [`MODE_READ`] or [`MODE_WRITE`].
    Mode,
    /// An owner's field: `<client id>:<owner>` (an RLock, fair or fenced holder, or a reader).
    Holder(Owner),
    /// A writer's field: `<client id>:<owner>:write`.
    Writer(Owner),
}

/// `mode = read` in a read-write lock hash.
pub const MODE_READ: i64 = 0;
/// `mode = write` in a read-write lock hash.
pub const MODE_WRITE: i64 = 1;

/// The keys a model touches (one lock name `N` per model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// The lock hash `N`.
    Lock,
    /// `redisson_unlock_latch:{N}:<id>`: an unlock latch or an acquisition attempt's record.
    Latch(ReqId),
    /// The fencing token counter `redisson_lock_token:{N}`.
    Token,
    /// The fair queue `redisson_lock_queue:{N}`.
    Queue,
    /// The fair deadlines `redisson_lock_timeout:{N}`.
    Deadlines,
    /// A read hold's timeout key `{N}:<read field>:rwlock_timeout:<k>`.
    ReadTimeout(Owner, u8),
}

/// What a latch key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Latch {
    /// `cancelled`: a settled attempt that was not granted; a late copy changes nothing.
    Cancelled,
    /// An attempt's record: the hold count its grant produced.
    Count(i64),
    /// A fenced attempt's record `count:token`.
    CountToken(i64, i64),
    /// An unlock's first reply: `0`/`1`, or `none` (not held) as `None`.
    Reply(Option<i64>),
}

/// A value in the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A hash (a lock).
    Hash(BTreeMap<Field, i64>),
    /// A latch.
    Latch(Latch),
    /// An integer string (the token counter, a read timeout key's `1`).
    Int(i64),
    /// A list of owner fields (the fair queue).
    List(Vec<Owner>),
    /// A sorted set of owner fields (the fair deadlines, score in ticks).
    Zset(BTreeMap<Owner, i64>),
}

/// A key's value and its deadline (`None`: no TTL).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The value.
    pub value: Value,
    /// The tick at which the key is gone.
    pub expires: Option<u8>,
}

/// The store: every key that exists now.
pub type Store = BTreeMap<Key, Entry>;

/// The server: its store, the clock, and what a failover would bring back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Redis {
    /// Now, in ticks (every client reads the same clock: NTP-synchronised, as the fair lock needs).
    pub now: u8,
    /// The keys that exist.
    pub store: Store,
    /// The replica's copy: the store before the last script (kept only when failovers are
    /// modelled, so that other runs do not carry it).
    pub replica: Option<Store>,
    /// Data-loss events so far (restarts without persistence and failovers to a stale replica).
    pub epoch: u8,
}

impl Redis {
    /// An empty server at tick 0; `with_replica` keeps the replica's copy for failovers.
    pub fn new(with_replica: bool) -> Self {
        Redis {
            now: 0,
            store: Store::new(),
            replica: with_replica.then(Store::new),
            epoch: 0,
        }
    }

    /// One tick passes; keys whose deadline is reached are gone (Redis' lazy and active expiry
    /// together: no read can see an expired key).
    pub fn tick(&mut self) {
        self.now += 1;
        let now = self.now;
        self.store.retain(|_, e| e.expires.is_none_or(|t| t > now));
        if let Some(r) = &mut self.replica {
            r.retain(|_, e| e.expires.is_none_or(|t| t > now));
        }
    }

    /// Runs one whole script: the replica is left with the store as it was before it (a replica
    /// that has not received this script's writes yet).
    pub fn script<R>(&mut self, f: impl FnOnce(&mut Redis) -> R) -> R {
        let before = self.replica.is_some().then(|| self.store.clone());
        let reply = f(self);
        if let Some(b) = before {
            self.replica = Some(b);
        }
        reply
    }

    /// A restart without persistence: every key is gone.
    pub fn restart(&mut self) {
        self.store.clear();
        if let Some(r) = &mut self.replica {
            r.clear();
        }
        self.epoch += 1;
    }

    /// A failover to the replica, which misses the last script's writes.
    pub fn failover(&mut self) {
        if let Some(r) = &self.replica {
            self.store = r.clone();
        }
        self.epoch += 1;
    }

    /// `EXISTS key`.
    pub fn exists(&self, key: Key) -> bool {
        self.store.contains_key(&key)
    }

    /// `DEL key`: whether it existed.
    pub fn del(&mut self, key: Key) -> bool {
        self.store.remove(&key).is_some()
    }

    /// `PTTL key`: -2 when missing, -1 without TTL, else the ticks left.
    pub fn pttl(&self, key: Key) -> i64 {
        match self.store.get(&key) {
            None => -2,
            Some(Entry { expires: None, .. }) => -1,
            Some(Entry { expires: Some(t), .. }) => i64::from(*t) - i64::from(self.now),
        }
    }

    /// `PEXPIRE key ticks` (a non-positive TTL deletes the key, as Redis does).
    pub fn pexpire(&mut self, key: Key, ticks: i64) {
        if ticks <= 0 {
            self.del(key);
            return;
        }
        let at = (i64::from(self.now) + ticks).min(i64::from(u8::MAX)) as u8;
        if let Some(e) = self.store.get_mut(&key) {
            e.expires = Some(at);
        }
    }

    /// `SET key value PX ticks` (no TTL when `ticks` is `None`).
    pub fn set(&mut self, key: Key, value: Value, ticks: Option<i64>) {
        let expires = ticks.map(|t| (i64::from(self.now) + t).min(i64::from(u8::MAX)) as u8);
        self.store.insert(key, Entry { value, expires });
    }

    /// `GET` of a latch key.
    pub fn latch(&self, id: ReqId) -> Option<Latch> {
        match self.store.get(&Key::Latch(id)) {
            Some(Entry {
                value: Value::Latch(l),
                ..
            }) => Some(*l),
            _ => None,
        }
    }

    /// `SET latch value PX ticks`.
    pub fn set_latch(&mut self, id: ReqId, value: Latch, ticks: i64) {
        self.set(Key::Latch(id), Value::Latch(value), Some(ticks));
    }

    /// `HGET key field` (a missing key reads as an empty hash).
    pub fn hget(&self, key: Key, field: Field) -> Option<i64> {
        match self.store.get(&key) {
            Some(Entry {
                value: Value::Hash(h),
                ..
            }) => h.get(&field).copied(),
            _ => None,
        }
    }

    /// `HLEN key`.
    pub fn hlen(&self, key: Key) -> usize {
        match self.store.get(&key) {
            Some(Entry {
                value: Value::Hash(h),
                ..
            }) => h.len(),
            _ => 0,
        }
    }

    /// The whole hash (`HGETALL`), empty when missing.
    pub fn hgetall(&self, key: Key) -> BTreeMap<Field, i64> {
        match self.store.get(&key) {
            Some(Entry {
                value: Value::Hash(h),
                ..
            }) => h.clone(),
            _ => BTreeMap::new(),
        }
    }

    /// `HSET key field value` (creates the key without a TTL when missing).
    pub fn hset(&mut self, key: Key, field: Field, value: i64) {
        let e = self.store.entry(key).or_insert(Entry {
            value: Value::Hash(BTreeMap::new()),
            expires: None,
        });
        if let Value::Hash(h) = &mut e.value {
            h.insert(field, value);
        }
    }

    /// `HINCRBY key field by`: the new value.
    pub fn hincrby(&mut self, key: Key, field: Field, by: i64) -> i64 {
        let v = self.hget(key, field).unwrap_or(0) + by;
        self.hset(key, field, v);
        v
    }

    /// `HDEL key field` (the key goes when its last field does).
    pub fn hdel(&mut self, key: Key, field: Field) {
        let mut empty = false;
        if let Some(Entry {
            value: Value::Hash(h),
            ..
        }) = self.store.get_mut(&key)
        {
            h.remove(&field);
            empty = h.is_empty();
        }
        if empty {
            self.del(key);
        }
    }

    /// `INCR key` (no TTL).
    pub fn incr(&mut self, key: Key) -> i64 {
        let v = match self.store.get(&key) {
            Some(Entry {
                value: Value::Int(i), ..
            }) => *i + 1,
            _ => 1,
        };
        self.set(key, Value::Int(v), None);
        v
    }

    /// The fair queue (`LRANGE 0 -1`), empty when missing.
    pub fn list(&self, key: Key) -> Vec<Owner> {
        match self.store.get(&key) {
            Some(Entry {
                value: Value::List(l),
                ..
            }) => l.clone(),
            _ => Vec::new(),
        }
    }

    /// Writes a whole list (an empty one deletes the key, as Redis does).
    pub fn set_list(&mut self, key: Key, list: Vec<Owner>) {
        if list.is_empty() {
            self.del(key);
        } else {
            self.set(key, Value::List(list), None);
        }
    }

    /// The deadlines zset, empty when missing.
    pub fn zset(&self, key: Key) -> BTreeMap<Owner, i64> {
        match self.store.get(&key) {
            Some(Entry {
                value: Value::Zset(z),
                ..
            }) => z.clone(),
            _ => BTreeMap::new(),
        }
    }

    /// Writes a whole zset (an empty one deletes the key).
    pub fn set_zset(&mut self, key: Key, z: BTreeMap<Owner, i64>) {
        if z.is_empty() {
            self.del(key);
        } else {
            self.set(key, Value::Zset(z), None);
        }
    }
}
