//! Model-based test: random sequences of acquire / re-enter / unlock / drop / expire /
//! force-unlock across several clients and owners, run against a real redis-server, with every
//! reply, every guard's state and the Redis state checked against a small reference model of
//! Redisson's lock semantics plus this crate's rules for holds (epochs: the holds of one owner
//! field share one fate; a hold known to be lost never sends anything; a deleted key ends every
//! client's holds on it, which each client learns from Redis within about one round trip).

mod common;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use common::{eventually, RedisServer};
use proptest::prelude::*;
use redis::AsyncCommands;
use redisson_lock::{Client, Error, LockGuard, Unlocked};

const LOCKS: [&str; 2] = ["m:a", "m:b"];
const CLIENTS: usize = 2;

#[derive(Clone, Debug)]
enum Op {
    /// `try_lock` by client `c` on lock `l`, with pinned owner `o` (1 or 2) or a fresh one (0),
    /// in watchdog mode or with a long lease.
    Acquire {
        c: usize,
        l: usize,
        o: u64,
        leased: bool,
    },
    /// `reenter` through guard number `g` (modulo the guards made so far).
    Reenter {
        g: usize,
    },
    Unlock {
        g: usize,
    },
    Drop {
        g: usize,
    },
    /// The key vanishes behind the clients' backs (expiry, eviction, a restart).
    Expire {
        l: usize,
    },
    ForceUnlock {
        c: usize,
        l: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..CLIENTS, 0..LOCKS.len(), 0..3u64, any::<bool>())
            .prop_map(|(c, l, o, leased)| Op::Acquire { c, l, o, leased }),
        2 => any::<usize>().prop_map(|g| Op::Reenter { g }),
        3 => any::<usize>().prop_map(|g| Op::Unlock { g }),
        2 => any::<usize>().prop_map(|g| Op::Drop { g }),
        1 => (0..LOCKS.len()).prop_map(|l| Op::Expire { l }),
        1 => (0..CLIENTS, 0..LOCKS.len()).prop_map(|(c, l)| Op::ForceUnlock { c, l }),
    ]
}

/// One owner field's holds as the client knows them.
#[derive(Clone, Debug)]
struct Epoch {
    id: u64,
    live: bool,
    holds: usize,
}

#[derive(Clone, Debug)]
struct GuardModel {
    c: usize,
    l: usize,
    field: String,
    epoch: u64,
}

#[derive(Default)]
struct Model {
    /// lock → field → count, as Redis should hold it.
    redis: Vec<BTreeMap<String, i64>>,
    /// (client, lock, field) → the field's current epoch.
    epochs: HashMap<(usize, usize, String), Epoch>,
    next_epoch: u64,
}

impl Model {
    fn new() -> Model {
        Model {
            redis: vec![BTreeMap::new(); LOCKS.len()],
            ..Model::default()
        }
    }

    /// Lock `l`'s key is gone: every client's holds on it are lost (Redis tells each client that
    /// tracks the key, and each reads its holds again).
    fn vanished(&mut self, l: usize) {
        for ((_, el, _), e) in self.epochs.iter_mut() {
            if *el == l {
                e.live = false;
            }
        }
    }

    fn live(&self, g: &GuardModel) -> bool {
        self.epochs
            .get(&(g.c, g.l, g.field.clone()))
            .is_some_and(|e| e.live && e.id == g.epoch)
    }

    /// Redis side of an acquire: the new count, or None when held by another field.
    fn redis_acquire(&mut self, l: usize, field: &str) -> Option<i64> {
        let h = &mut self.redis[l];
        if h.is_empty() || h.contains_key(field) {
            let c = h.entry(field.to_owned()).or_insert(0);
            *c += 1;
            Some(*c)
        } else {
            None
        }
    }

    /// Client side of a grant with Redis count `count`: returns the hold's epoch.
    fn grant(&mut self, c: usize, l: usize, field: &str, count: i64) -> u64 {
        let key = (c, l, field.to_owned());
        if let Some(e) = self.epochs.get_mut(&key) {
            if e.live && count == e.holds as i64 + 1 {
                e.holds += 1;
                return e.id;
            }
        }
        self.next_epoch += 1;
        let id = self.next_epoch;
        self.epochs.insert(
            key,
            Epoch {
                id,
                live: true,
                holds: 1,
            },
        );
        id
    }

    /// An unlock of a guard; the expected result.
    fn unlock(&mut self, g: &GuardModel) -> Result<Unlocked, ()> {
        if !self.live(g) {
            return Err(()); // stale: nothing sent
        }
        let key = (g.c, g.l, g.field.clone());
        let e = self.epochs.get_mut(&key).unwrap();
        let h = &mut self.redis[g.l];
        if e.holds == 1 {
            e.live = false;
            e.holds = 0;
            if h.contains_key(&g.field) {
                h.clear(); // the last hold: the key is deleted
                Ok(Unlocked::Released)
            } else {
                Err(())
            }
        } else {
            e.holds -= 1;
            match h.get_mut(&g.field) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    Ok(Unlocked::Partial)
                }
                Some(_) => {
                    h.clear();
                    e.live = false;
                    Ok(Unlocked::Released)
                }
                None => {
                    e.live = false;
                    Err(())
                }
            }
        }
    }
}

struct Real {
    clients: Vec<Client>,
    guards: Vec<Option<(LockGuard, GuardModel)>>,
}

async fn settle(clients: &[Client]) {
    for c in clients {
        let c = c.clone();
        eventually(Duration::from_secs(5), "queued releases are done", move || {
            let c = c.clone();
            async move { c.stats().queued_releases == 0 }
        })
        .await;
    }
}

/// Waits until every guard on lock `l` knows its hold is gone (the loss watch reports a
/// deleted key within about one round trip).
async fn learned(real: &Real, l: usize) {
    for (g, _) in real.guards.iter().flatten().filter(|(_, m)| m.l == l) {
        eventually(
            Duration::from_secs(5),
            "a guard on a deleted key knows it is lost",
            || async { !g.is_held() },
        )
        .await;
    }
}

async fn check(raw: &mut redis::aio::MultiplexedConnection, model: &Model, real: &Real, step: &str) {
    for (l, name) in LOCKS.iter().enumerate() {
        let got: BTreeMap<String, i64> = raw.hgetall(*name).await.unwrap();
        assert_eq!(got, model.redis[l], "{step}: Redis state of {name}");
        if !got.is_empty() {
            let ttl: i64 = raw.pttl(*name).await.unwrap();
            assert!(ttl > 0, "{step}: {name} has PTTL {ttl}");
        }
    }
    for (i, slot) in real.guards.iter().enumerate() {
        if let Some((g, m)) = slot {
            assert_eq!(
                g.is_held(),
                model.live(m),
                "{step}: guard {i} ({m:?}) state {:?}",
                g.state()
            );
        }
    }
}

async fn run(s: &RedisServer, ops: Vec<Op>) {
    let mut raw = s.conn().await;
    let _: () = redis::cmd("FLUSHALL").query_async(&mut raw).await.unwrap();
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        clients.push(Client::connect(&s.url()).await.unwrap());
    }
    let mut real = Real {
        clients,
        guards: Vec::new(),
    };
    let mut model = Model::new();
    for (n, op) in ops.into_iter().enumerate() {
        let step = format!("step {n} {op:?}");
        match op {
            Op::Acquire { c, l, o, leased } => {
                let handle = real.clients[c].lock(LOCKS[l]).unwrap();
                let handle = if o == 0 { handle } else { handle.with_owner(o) };
                let got = if leased {
                    handle
                        .try_lock_with_lease(Duration::ZERO, Duration::from_secs(120))
                        .await
                        .unwrap()
                } else {
                    handle.try_lock().await.unwrap()
                };
                let field = match (&got, o) {
                    (Some(g), _) => g.field().to_owned(),
                    (None, 0) => "<fresh>".to_owned(),
                    (None, o) => format!("{}:{o}", real.clients[c].id()),
                };
                let expect = model.redis_acquire(l, &field);
                assert_eq!(got.is_some(), expect.is_some(), "{step}: granted?");
                if let (Some(g), Some(count)) = (got, expect) {
                    let epoch = model.grant(c, l, &field, count);
                    real.guards.push(Some((g, GuardModel { c, l, field, epoch })));
                }
            }
            Op::Reenter { g } => {
                if real.guards.is_empty() {
                    continue;
                }
                let i = g % real.guards.len();
                let Some((guard, m)) = &real.guards[i] else {
                    continue;
                };
                let m = m.clone();
                let got = guard.reenter().await;
                if !model.live(&m) {
                    assert!(
                        matches!(got, Err(Error::NotHeld { .. })),
                        "{step}: stale re-entry {got:?}"
                    );
                } else {
                    match model.redis_acquire(m.l, &m.field) {
                        None => assert!(
                            matches!(got, Err(Error::NotHeld { .. })),
                            "{step}: refused {got:?}"
                        ),
                        Some(count) => {
                            let epoch = model.grant(m.c, m.l, &m.field, count);
                            if epoch == m.epoch {
                                let g2 = got.unwrap_or_else(|e| panic!("{step}: re-entry failed: {e}"));
                                real.guards.push(Some((g2, GuardModel { epoch, ..m })));
                            } else {
                                // a fresh grant, not a re-entry: given back at once
                                assert!(matches!(got, Err(Error::NotHeld { .. })), "{step}: {got:?}");
                                let fresh = GuardModel { epoch, ..m };
                                assert_eq!(model.unlock(&fresh), Ok(Unlocked::Released), "{step}: model");
                            }
                        }
                    }
                }
            }
            Op::Unlock { g } | Op::Drop { g } => {
                if real.guards.is_empty() {
                    continue;
                }
                let i = g % real.guards.len();
                let Some((guard, m)) = real.guards[i].take() else {
                    continue;
                };
                let expect = model.unlock(&m);
                if matches!(op, Op::Unlock { .. }) {
                    match (guard.unlock().await, expect) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b, "{step}"),
                        (Err(Error::NotHeld { .. }), Err(())) => {}
                        (got, want) => panic!("{step}: got {got:?}, model says {want:?}"),
                    }
                } else {
                    drop(guard);
                }
            }
            Op::Expire { l } => {
                let _: i64 = raw.del(LOCKS[l]).await.unwrap();
                model.redis[l].clear();
                model.vanished(l);
                learned(&real, l).await;
            }
            Op::ForceUnlock { c, l } => {
                let got = real.clients[c]
                    .lock(LOCKS[l])
                    .unwrap()
                    .force_unlock()
                    .await
                    .unwrap();
                assert_eq!(got, !model.redis[l].is_empty(), "{step}");
                model.redis[l].clear();
                if got {
                    model.vanished(l);
                    learned(&real, l).await;
                }
            }
        }
        settle(&real.clients).await;
        check(&mut raw, &model, &real, &step).await;
    }
    // the end: every live guard unlocks as the model says, and nothing is left anywhere
    for slot in real.guards.iter_mut() {
        if let Some((guard, m)) = slot.take() {
            let expect = model.unlock(&m);
            match (guard.unlock().await, expect) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "final unlock"),
                (Err(Error::NotHeld { .. }), Err(())) => {}
                (got, want) => panic!("final unlock: got {got:?}, model says {want:?}"),
            }
        }
    }
    settle(&real.clients).await;
    check(&mut raw, &model, &real, "end").await;
    for c in &real.clients {
        let st = c.stats();
        assert_eq!((st.renewing, st.holds), (0, 0), "client {} left {st:?}", c.id());
    }
}

#[test]
fn holds_follow_the_model() {
    use proptest::test_runner::{Config, TestError, TestRunner};
    let s = RedisServer::start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cases = std::env::var("MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let mut runner = TestRunner::new(Config {
        cases,
        max_shrink_iters: 200,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&proptest::collection::vec(op(), 1..40), |ops| {
        rt.block_on(run(&s, ops));
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, ops)) => panic!("model violated: {why}\nminimal sequence: {ops:#?}"),
        Err(e) => panic!("{e}"),
    }
}
