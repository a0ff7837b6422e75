//! The pub/sub hub under stress and failure: short waits leave nothing subscribed, a wait never
//! overruns its budget behind another waiter's slow SUBSCRIBE, and an unhealthy pub/sub
//! connection makes waiters poll (with backoff) instead of spending every wait in SUBSCRIBE.
//!
//! Slow pub/sub is simulated with a TCP proxy in front of the pub/sub connection only: the lock
//! commands go straight to redis-server, so attempts stay fast while SUBSCRIBE hangs. A frozen
//! proxy delays (never drops) what the client sends, which keeps the RESP stream in order.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{eventually, init_tracing, RedisServer};
use redisson_lock::{Client, Config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A loopback TCP proxy to one redis-server that can hold back client → server bytes and counts
/// the SUBSCRIBE commands clients send through it.
struct Proxy {
    port: u16,
    frozen: watch::Sender<bool>,
    subscribes: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

/// Counts `SUBSCRIBE` commands (not `UNSUBSCRIBE`) in a RESP byte stream cut into chunks.
#[derive(Default)]
struct SubscribeCounter {
    tail: Vec<u8>,
}

impl SubscribeCounter {
    const NEEDLE: &'static [u8] = b"\r\nSUBSCRIBE\r\n";

    fn feed(&mut self, chunk: &[u8]) -> usize {
        let mut window = std::mem::take(&mut self.tail);
        let old = window.len();
        window.extend_from_slice(chunk);
        let n = window
            .windows(Self::NEEDLE.len())
            .enumerate()
            .filter(|(i, w)| i + Self::NEEDLE.len() > old && w.eq_ignore_ascii_case(Self::NEEDLE))
            .count();
        let keep = window.len().saturating_sub(Self::NEEDLE.len() - 1);
        self.tail = window[keep..].to_vec();
        n
    }
}

impl Proxy {
    async fn start(upstream: u16) -> Proxy {
        Self::start_with_latency(upstream, Duration::ZERO).await
    }

    /// Every client → server chunk is forwarded `latency` after it was read (in order).
    async fn start_with_latency(upstream: u16, latency: Duration) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (frozen, _) = watch::channel(false);
        let subscribes = Arc::new(AtomicUsize::new(0));
        let (f, count) = (frozen.clone(), subscribes.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((inbound, _)) = listener.accept().await else {
                    return;
                };
                let outbound = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
                let (mut ci, mut co) = inbound.into_split();
                let (mut si, mut so) = outbound.into_split();
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
                let count = count.clone();
                // reads (and counts) everything the client sends, frozen or not
                tokio::spawn(async move {
                    let mut counter = SubscribeCounter::default();
                    let mut buf = vec![0u8; 16 * 1024];
                    loop {
                        let n = match ci.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        count.fetch_add(counter.feed(&buf[..n]), Ordering::SeqCst);
                        if tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                });
                // forwards it in order, after the latency and while not frozen
                let mut gate = f.subscribe();
                tokio::spawn(async move {
                    while let Some((read_at, chunk)) = rx.recv().await {
                        tokio::time::sleep_until((read_at + latency).into()).await;
                        if gate.wait_for(|frozen| !*frozen).await.is_err() {
                            return;
                        }
                        if so.write_all(&chunk).await.is_err() {
                            return;
                        }
                    }
                });
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut si, &mut co).await;
                });
            }
        });
        Proxy {
            port,
            frozen,
            subscribes,
            task,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn freeze(&self) {
        self.frozen.send_replace(true);
    }

    fn thaw(&self) {
        self.frozen.send_replace(false);
    }

    fn subscribes(&self) -> usize {
        self.subscribes.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.frozen.send_replace(false);
        self.task.abort();
    }
}

/// A client whose lock commands go straight to `s` and whose pub/sub connection goes through
/// `proxy`.
async fn client_via_proxy(s: &RedisServer, proxy: &Proxy, config: Config) -> Client {
    let direct = redis::Client::open(s.url()).unwrap();
    let conn = direct.get_connection_manager().await.unwrap();
    Client::builder()
        .connection(conn)
        .pubsub_client(redis::Client::open(proxy.url()).unwrap())
        .config(config)
        .build()
        .await
        .expect("connect")
}

async fn server_channels(raw: &mut redis::aio::MultiplexedConnection) -> Vec<String> {
    redis::cmd("PUBSUB")
        .arg("CHANNELS")
        .query_async(raw)
        .await
        .unwrap()
}

async fn numsub(raw: &mut redis::aio::MultiplexedConnection, channels: &[String]) -> Vec<(String, i64)> {
    redis::cmd("PUBSUB")
        .arg("NUMSUB")
        .arg(channels)
        .query_async(raw)
        .await
        .unwrap()
}

/// Waits until neither the server nor the client has anything subscribed.
async fn assert_nothing_left(s: &RedisServer, client: &Client, limit: Duration) {
    let raw = s.conn().await;
    eventually(limit, "no channel subscribed on the server", || {
        let mut raw = raw.clone();
        async move { server_channels(&mut raw).await.is_empty() }
    })
    .await;
    eventually(limit, "no local channel or waiter left", || {
        let c = client.clone();
        async move {
            let st = c.stats();
            st.channels == 0 && st.waiters == 0
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn short_waits_leave_no_subscription_behind() {
    init_tracing();
    let s = RedisServer::start();
    // a few ms of latency on the waiters' pub/sub connection: most 1-7 ms waits give up while
    // their SUBSCRIBE is on its way
    let proxy = Proxy::start_with_latency(s.port, Duration::from_millis(3)).await;
    let holder = Client::connect(&s.url()).await.unwrap();
    let waiter = client_via_proxy(&s, &proxy, Config::default()).await;
    let mut raw = s.conn().await;

    let names: Vec<String> = (0..20).map(|i| format!("leak:{i}")).collect();
    let mut guards = Vec::new();
    for n in &names {
        guards.push(holder.lock(n).unwrap().with_owner(1).lock().await.unwrap());
    }

    // rounds 0-2: waits that time out; round 3: acquisitions whose futures are dropped
    for round in 0..4u64 {
        let mut tasks = Vec::new();
        for i in 0..200u64 {
            let lock = waiter
                .lock(&names[(i % 20) as usize])
                .unwrap()
                .with_owner(2 + i + 1000 * round);
            let wait = Duration::from_millis(1 + i % 7);
            tasks.push(tokio::spawn(async move {
                if round < 3 {
                    lock.try_lock_for(wait).await.map(|g| g.is_some())
                } else {
                    let cancelled = tokio::time::timeout(wait, lock.lock()).await;
                    assert!(cancelled.is_err(), "a held lock is not acquired");
                    Ok(false)
                }
            }));
        }
        for t in tasks {
            let r = t.await.unwrap();
            assert!(matches!(r, Ok(false)), "a held lock is not acquired: {r:?}");
        }
    }

    let channels: Vec<String> = names
        .iter()
        .map(|n| format!("redisson_lock__channel:{{{n}}}"))
        .collect();
    eventually(
        Duration::from_secs(10),
        "no subscriber left on any lock channel",
        || {
            let mut raw = raw.clone();
            let channels = channels.clone();
            async move { numsub(&mut raw, &channels).await.iter().all(|(_, n)| *n == 0) }
        },
    )
    .await;
    assert_nothing_left(&s, &waiter, Duration::from_secs(10)).await;
    assert!(server_channels(&mut raw).await.is_empty());

    // the hub still works: a waiter subscribes and is woken by the unlock message
    let poll = Config::default().with_poll_interval(Duration::from_secs(10));
    let woken = Client::builder().url(s.url()).config(poll).build().await.unwrap();
    let l = woken.lock(&names[0]).unwrap().with_owner(7);
    let w = tokio::spawn(async move {
        let g = l.try_lock_for(Duration::from_secs(20)).await.unwrap();
        let at = Instant::now();
        g.expect("acquired after the unlock").unlock().await.unwrap();
        at
    });
    eventually(Duration::from_secs(5), "the waiter subscribed", || {
        let mut raw = raw.clone();
        let ch = channels[0].clone();
        async move { numsub(&mut raw, &[ch]).await[0].1 == 1 }
    })
    .await;
    let mut guards = guards.into_iter();
    let released = Instant::now();
    guards.next().unwrap().unlock().await.unwrap();
    let at = tokio::time::timeout(Duration::from_secs(5), w)
        .await
        .expect("woken by the message, not by polling")
        .unwrap();
    assert!(at.duration_since(released) < Duration::from_secs(2));
    for g in guards {
        g.unlock().await.unwrap();
    }
    assert_nothing_left(&s, &woken, Duration::from_secs(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_wait_does_not_overrun_behind_another_waiters_slow_subscribe() {
    init_tracing();
    let s = RedisServer::start();
    let proxy = Proxy::start(s.port).await;
    let holder = Client::connect(&s.url()).await.unwrap();
    // A command timeout far above the waits: waiting for the other SUBSCRIBE to time out
    // would show as a multi-second overrun.
    let cfg = Config::default()
        .with_command_timeout(Duration::from_secs(3))
        .with_poll_interval(Duration::from_millis(50));
    let client = client_via_proxy(&s, &proxy, cfg).await;
    let guard = holder.lock("slow").unwrap().with_owner(1).lock().await.unwrap();
    let other = holder.lock("slow-2").unwrap().with_owner(1).lock().await.unwrap();

    proxy.freeze();
    let long = client.lock("slow").unwrap().with_owner(2);
    let long = tokio::spawn(async move {
        let r = long.try_lock_for(Duration::from_secs(10)).await;
        r.map(|g| g.is_some())
    });
    eventually(
        Duration::from_secs(5),
        "the long waiter's SUBSCRIBE was sent",
        || {
            let n = proxy.subscribes();
            async move { n >= 1 }
        },
    )
    .await;

    // the same channel, while the long waiter's SUBSCRIBE is in flight
    for owner in 3..6u64 {
        let short = client.lock("slow").unwrap().with_owner(owner);
        let t = Instant::now();
        let r = short.try_lock_for(Duration::from_millis(100)).await;
        let took = t.elapsed();
        assert!(matches!(r, Ok(None)), "{:?}", r.map(|g| g.is_some()));
        assert!(
            took < Duration::from_millis(700),
            "try_lock_for(100ms) took {took:?} behind another waiter's SUBSCRIBE"
        );
    }
    // another channel, whose own SUBSCRIBE hangs
    let t = Instant::now();
    let r = client
        .lock("slow-2")
        .unwrap()
        .with_owner(2)
        .try_lock_for(Duration::from_millis(100))
        .await;
    assert!(matches!(r, Ok(None)));
    assert!(t.elapsed() < Duration::from_millis(700), "took {:?}", t.elapsed());

    proxy.thaw();
    guard.unlock().await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(10), long)
        .await
        .expect("the long waiter acquires")
        .unwrap()
        .unwrap();
    assert!(got, "the long waiter acquired the lock");
    other.unlock().await.unwrap();
    assert_nothing_left(&s, &client, Duration::from_secs(15)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unhealthy_pubsub_backs_off_then_recovers() {
    init_tracing();
    let s = RedisServer::start();
    let proxy = Proxy::start(s.port).await;
    let holder = Client::connect(&s.url()).await.unwrap();
    let cfg = Config::default()
        .with_command_timeout(Duration::from_millis(300))
        .with_poll_interval(Duration::from_secs(10));
    let client = client_via_proxy(&s, &proxy, cfg).await;
    let guard = holder.lock("sick").unwrap().with_owner(1).lock().await.unwrap();
    let lock = client.lock("sick").unwrap();

    proxy.freeze();
    let before = proxy.subscribes();
    let started = Instant::now();
    let calls = 30u64;
    for i in 0..calls {
        let t = Instant::now();
        let r = lock
            .with_owner(2 + i)
            .try_lock_for(Duration::from_millis(50))
            .await;
        let took = t.elapsed();
        assert!(matches!(r, Ok(None)), "{:?}", r.map(|g| g.is_some()));
        assert!(
            took < Duration::from_millis(500),
            "call {i}: try_lock_for(50ms) took {took:?}"
        );
    }
    let elapsed = started.elapsed();
    let sent = proxy.subscribes() - before;
    assert!(
        sent <= 8,
        "{sent} SUBSCRIBEs in {elapsed:?} for {calls} waits: no backoff while pub/sub is unhealthy"
    );

    proxy.thaw();
    // the delayed SUBSCRIBEs reach the server now; each must be undone
    assert_nothing_left(&s, &client, Duration::from_secs(15)).await;

    // healthy again: a waiter subscribes and is woken by the unlock message (not by polling,
    // which would take ~10 s)
    let mut raw = s.conn().await;
    let w = lock.with_owner(100);
    let w = tokio::spawn(async move {
        let g = w.try_lock_for(Duration::from_secs(30)).await.unwrap();
        let at = Instant::now();
        g.expect("acquired").unlock().await.unwrap();
        at
    });
    eventually(Duration::from_secs(5), "the waiter subscribed again", || {
        let mut raw = raw.clone();
        async move { server_channels(&mut raw).await.len() == 1 }
    })
    .await;
    let released = Instant::now();
    guard.unlock().await.unwrap();
    let at = tokio::time::timeout(Duration::from_secs(5), w)
        .await
        .expect("woken by the unlock message")
        .unwrap();
    assert!(at.duration_since(released) < Duration::from_secs(2));
    assert_nothing_left(&s, &client, Duration::from_secs(10)).await;
    assert!(server_channels(&mut raw).await.is_empty());
}
