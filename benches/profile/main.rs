//! Where the client's CPU goes: lock + unlock on distinct keys for a fixed time, ours or the raw
//! EVALSHA floor (the same scripts sent through the same kind of connection), with allocations
//! and process CPU counted per operation. Run it under `perf` with `scripts/profile`, which
//! builds it with frame pointers and writes benches/PROFILE.md.
//!
//! Environment: `PROFILE_REDIS_URL` (required), `PROFILE_SYSTEM` = `ours` | `floor`,
//! `PROFILE_TASKS` (16), `PROFILE_SECS` (8). Prints one JSON line.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Counts allocations (not bytes): the allocator's share of the profile scales with them.
struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const ACQUIRE_LUA: &str = concat!(
    include_str!("../../lua/common/attempt.lua"),
    "\n",
    include_str!("../../lua/lock/acquire.lua")
);
const UNLOCK_LUA: &str = concat!(
    include_str!("../../lua/common/notify.lua"),
    "\n",
    include_str!("../../lua/lock/unlock.lua")
);
/// Same length as our fields (`<uuid>:<owner id>`).
const RAW_FIELD: &str = "00000000-0000-4000-8000-000000000000:281474976710657";

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// CPU seconds (user + system) of this process so far.
fn cpu_s() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let Some(rest) = s.rfind(')').map(|i| &s[i + 2..]) else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (tick(11) + tick(12)) / 100.0
}

#[tokio::main]
async fn main() {
    let url = std::env::var("PROFILE_REDIS_URL").expect("PROFILE_REDIS_URL (scripts/profile sets it)");
    let system: String = env("PROFILE_SYSTEM", "ours".to_owned());
    let tasks: usize = env("PROFILE_TASKS", 16);
    let secs: u64 = env("PROFILE_SECS", 8);
    let floor = system == "floor";

    let client = redisson_lock::Client::connect(&url).await.expect("connect");
    let raw = redis::Client::open(url.as_str())
        .expect("url")
        .get_connection_manager_with_config(
            redis::aio::ConnectionManagerConfig::new()
                .set_response_timeout(Some(Duration::from_secs(3)))
                .set_connection_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("raw connection");
    let acquire = Arc::new(redis::Script::new(ACQUIRE_LUA));
    let unlock = Arc::new(redis::Script::new(UNLOCK_LUA));

    let ops = Arc::new(AtomicU64::new(0));
    // warm up both paths (script load, subscriptions, allocator)
    let warm_until = Instant::now() + Duration::from_secs(1);
    let measure_from = warm_until;
    let end = measure_from + Duration::from_secs(secs);
    let mut handles = Vec::new();
    for t in 0..tasks {
        let (client, mut raw, ops) = (client.clone(), raw.clone(), ops.clone());
        let (acquire, unlock) = (acquire.clone(), unlock.clone());
        handles.push(tokio::spawn(async move {
            // one handle per key, made before the loop (as a service keeps its lock handles)
            let names: Vec<String> = (0..64).map(|i| format!("profile:{t}:{i}")).collect();
            let locks: Vec<_> = names.iter().map(|n| client.lock(n).expect("name")).collect();
            let mut i = 0usize;
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                let k = i % names.len();
                if floor {
                    let key = &names[k];
                    let _: Vec<i64> = acquire
                        .key(key)
                        .key(format!("redisson_unlock_latch:{{{key}}}:a{i:031x}"))
                        .arg(30_000)
                        .arg(RAW_FIELD)
                        .arg(0) // the owner's field records the grant, as ours sends by default
                        .invoke_async(&mut raw)
                        .await
                        .expect("acquire");
                    let _: Option<i64> = unlock
                        .key(key)
                        .key(format!("redisson_lock__channel:{{{key}}}"))
                        .key(format!("redisson_unlock_latch:{{{key}}}:{i:032x}"))
                        .arg(0)
                        .arg(30_000)
                        .arg(RAW_FIELD)
                        .arg("PUBLISH")
                        .arg(12_400)
                        .arg(0)
                        .invoke_async(&mut raw)
                        .await
                        .expect("unlock");
                } else {
                    let g = locks[k].lock().await.expect("lock");
                    g.unlock().await.expect("unlock");
                }
                if now >= measure_from {
                    ops.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
            }
        }));
    }
    tokio::time::sleep_until(measure_from.into()).await;
    let (a0, c0, t0) = (ALLOCS.load(Ordering::Relaxed), cpu_s(), Instant::now());
    for h in handles {
        h.await.expect("task");
    }
    let (a1, c1, wall) = (
        ALLOCS.load(Ordering::Relaxed),
        cpu_s(),
        t0.elapsed().as_secs_f64(),
    );
    let n = ops.load(Ordering::Relaxed).max(1) as f64;
    println!(
        "{{\"system\":\"{system}\",\"tasks\":{tasks},\"ops_per_s\":{:.0},\"allocs_per_op\":{:.1},\"cpu_us_per_op\":{:.1}}}",
        n / wall,
        (a1 - a0) as f64 / n,
        (c1 - c0) * 1e6 / n
    );
}
