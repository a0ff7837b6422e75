//! The injectors against the server itself: its process (SIGSTOP, kill -9), its connections
//! (CLIENT KILL / PAUSE), its scripts and memory, and the data of a lock (a key of another type).

use std::time::Duration;

use super::super::history::now_ns;
use super::target::{admin_conn, info_field, pid, query, Target};

fn signal(pid: i32, sig: libc::c_int) -> Result<(), String> {
    // SAFETY: kill(2) with a pid we read from our own redis-server; no memory is touched.
    let rc = unsafe { libc::kill(pid, sig) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("kill({pid}, {sig}): {}", std::io::Error::last_os_error()))
    }
}

/// A stopped (SIGSTOP) process, continued (SIGCONT) when the guard is dropped, also on panic
/// or cancellation.
pub struct Stopped {
    pid: i32,
}

impl Stopped {
    pub fn new(pid: i32) -> Result<Stopped, String> {
        signal(pid, libc::SIGSTOP)?;
        Ok(Stopped { pid })
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = signal(self.pid, libc::SIGCONT);
    }
}

/// SIGSTOP the server for `d`, then SIGCONT.
pub async fn sigstop_for(url: &str, d: Duration) -> Result<String, String> {
    let pid = pid(url).await?;
    let stopped = Stopped::new(pid)?;
    tokio::time::sleep(d).await;
    drop(stopped);
    Ok(format!(
        "SIGSTOP pid {pid} for {} ms, then SIGCONT",
        d.as_millis()
    ))
}

/// kill -9 the server and start a new one on the same port, with empty data (no persistence).
pub async fn kill9_restart(t: &Target) -> Result<String, String> {
    let old = pid(&t.url).await.unwrap_or(-1);
    let server = t.server.clone();
    tokio::task::spawn_blocking(move || {
        let mut s = server.lock().unwrap_or_else(|p| p.into_inner());
        s.restart(); // SIGKILL, wait, spawn on the same port, wait for PING
    })
    .await
    .map_err(|e| format!("restart panicked: {e}"))?;
    let new = pid(&t.url).await.unwrap_or(-1);
    Ok(format!(
        "kill -9 pid {old}, restarted on port {} as pid {new} (empty data)",
        t.port
    ))
}

/// `CLIENT KILL TYPE <ty> SKIPME yes` (`normal` or `pubsub`): every connection of that type
/// except the injector's own.
pub async fn client_kill(url: &str, ty: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let n: i64 = query(
        &mut c,
        redis::cmd("CLIENT")
            .arg("KILL")
            .arg("TYPE")
            .arg(ty)
            .arg("SKIPME")
            .arg("yes"),
    )
    .await?;
    Ok(format!("CLIENT KILL TYPE {ty} SKIPME yes: {n} connections"))
}

/// `CLIENT PAUSE <ms> <WRITE|ALL>`, returning when the pause ran out. (Redis 6.0 knows no
/// mode and pauses every client: a WRITE pause is an ALL pause there, which it says.)
pub async fn client_pause(url: &str, d: Duration, mode: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let ms = d.as_millis() as u64;
    let with_mode: Result<(), String> =
        query(&mut c, redis::cmd("CLIENT").arg("PAUSE").arg(ms).arg(mode)).await;
    let what = match with_mode {
        Ok(()) => format!("CLIENT PAUSE {ms} {mode}"),
        // 6.0: `ERR Unknown subcommand or wrong number of arguments for 'PAUSE'`
        Err(e) if e.contains("syntax error") || e.to_ascii_lowercase().contains("unknown subcommand") => {
            let _: () = query(&mut c, redis::cmd("CLIENT").arg("PAUSE").arg(ms)).await?;
            if mode != "ALL" {
                super::super::skip_unsupported(
                    &format!("CLIENT PAUSE {ms} {mode}"),
                    &format!("no pause modes ({e}): every client paused instead"),
                );
            }
            format!("CLIENT PAUSE {ms} (no {mode} mode on this server)")
        }
        Err(e) => return Err(e),
    };
    tokio::time::sleep(d).await;
    Ok(what)
}

/// A Lua script that spins for `d` on a connection of its own: Redis serves nobody meanwhile.
/// Keep `d` below `busy-reply-threshold` (5 s by default): beyond it Redis answers `BUSY` to
/// everyone else instead of queueing their commands.
pub async fn busy_script(url: &str, d: Duration) -> Result<String, String> {
    // (a loop over TIME that also stops after a measured number of rounds: Redis 7.2+ freezes
    // TIME during a script)
    let spin = super::super::busy_cmd(url, d).await;
    let mut c = admin_conn(url, None).await?;
    let n: i64 = query(&mut c, &spin).await?;
    Ok(format!(
        "busy Lua script for {} ms ({n} TIME calls)",
        d.as_millis()
    ))
}

/// `SCRIPT FLUSH`: every `EVALSHA` gets `NOSCRIPT` until the script is loaded again.
pub async fn script_flush(url: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let _: () = query(&mut c, redis::cmd("SCRIPT").arg("FLUSH")).await?;
    Ok("SCRIPT FLUSH".into())
}

/// `FLUSHALL`: every lock is gone (data loss).
pub async fn flushall(url: &str) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let _: () = query(&mut c, &redis::cmd("FLUSHALL")).await?;
    Ok("FLUSHALL".into())
}

/// Out of memory for `d`: `maxmemory` just above current use with `noeviction`, filled with junk
/// keys (`faults:junk:*`, 32 KiB each) until Redis answers `OOM`; then the junk is deleted and
/// both settings restored. Meanwhile writes that grow memory (acquires, unlock latches) fail.
pub async fn oom_for(url: &str, d: Duration) -> Result<String, String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let info: String = query(&mut c, redis::cmd("INFO").arg("memory")).await?;
    let used: u64 = info_field(&info, "used_memory")
        .and_then(|v| v.parse().ok())
        .ok_or("no used_memory in INFO memory")?;
    let old_max: Vec<String> = query(&mut c, redis::cmd("CONFIG").arg("GET").arg("maxmemory")).await?;
    let old_policy: Vec<String> =
        query(&mut c, redis::cmd("CONFIG").arg("GET").arg("maxmemory-policy")).await?;
    let (old_max, old_policy) = (
        old_max.get(1).cloned().unwrap_or_else(|| "0".into()),
        old_policy.get(1).cloned().unwrap_or_else(|| "noeviction".into()),
    );
    let limit = used + 1024 * 1024;
    let set = async {
        let _: () = query(
            &mut c,
            redis::cmd("CONFIG")
                .arg("SET")
                .arg("maxmemory-policy")
                .arg("noeviction"),
        )
        .await?;
        let _: () = query(
            &mut c,
            redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(limit),
        )
        .await?;
        Ok::<_, String>(())
    };
    let mut result = set.await;
    let junk = vec![b'x'; 32 * 1024];
    let mut filled = 0usize;
    let mut reached = false;
    if result.is_ok() {
        for i in 0..1024 {
            let r: Result<(), String> = query(
                &mut c,
                redis::cmd("SET")
                    .arg(format!("faults:junk:{i}"))
                    .arg(&junk[..])
                    .arg("PX")
                    .arg(120_000),
            )
            .await;
            match r {
                Ok(()) => filled += 1,
                Err(e) if e.contains("OOM") => {
                    reached = true;
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_ok() {
            tokio::time::sleep(d).await;
        }
    }
    // restore, whatever happened
    if filled > 0 {
        let mut del = redis::cmd("DEL");
        for i in 0..filled {
            del.arg(format!("faults:junk:{i}"));
        }
        let r: Result<i64, String> = query(&mut c, &del).await;
        if let Err(e) = r {
            result = result.and(Err(format!("deleting junk keys: {e}")));
        }
    }
    for (k, v) in [("maxmemory", &old_max), ("maxmemory-policy", &old_policy)] {
        let r: Result<(), String> = query(&mut c, redis::cmd("CONFIG").arg("SET").arg(k).arg(v)).await;
        if let Err(e) = r {
            result = result.and(Err(format!("restoring {k}: {e}")));
        }
    }
    result.map(|()| {
        format!(
            "maxmemory {limit} (used {used}) noeviction, {filled} junk keys of 32 KiB, OOM {} for {} ms",
            if reached { "reached" } else { "NOT reached" },
            d.as_millis()
        )
    })
}

/// The kind of foreign value [`wrong_type`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    String,
    List,
}

/// Writes a key of another type under `name` (over whatever is there, a held lock included),
/// with a TTL of `ttl`, and returns when that TTL has run out, with the time (ns) of the write.
///
/// `wait_for_fresh_hold`: first wait up to that long for a hold that began after this call
/// (a hash whose fields differ from those seen first), so that the rest of a hold follows the
/// write: the holder's renewals then meet the foreign key (F30).
pub async fn wrong_type(
    url: &str,
    name: &str,
    kind: Foreign,
    ttl: Duration,
    wait_for_fresh_hold: Duration,
) -> Result<(String, u64), String> {
    let mut c = admin_conn(url, Some(Duration::from_secs(2))).await?;
    let began = tokio::time::Instant::now();
    let deadline = began + wait_for_fresh_hold;
    let mut first: Option<Vec<String>> = None;
    let mut fresh = false;
    let holders = loop {
        let t: String = query(&mut c, redis::cmd("TYPE").arg(name)).await?;
        let fields: Vec<String> = if t == "hash" {
            query(&mut c, redis::cmd("HKEYS").arg(name))
                .await
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let fresh_now = match &first {
            None => {
                first = Some(fields.clone());
                false
            }
            Some(f) => !fields.is_empty() && fields != *f,
        };
        if fresh_now {
            fresh = true;
            break fields;
        }
        if tokio::time::Instant::now() >= deadline {
            break fields;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let px = ttl.as_millis() as u64;
    let written = now_ns();
    match kind {
        Foreign::String => {
            let _: () = query(
                &mut c,
                redis::cmd("SET").arg(name).arg("not a lock").arg("PX").arg(px),
            )
            .await?;
        }
        Foreign::List => {
            let _: () = redis::pipe()
                .atomic()
                .del(name)
                .ignore()
                .rpush(name, "not a lock")
                .ignore()
                .pexpire(name, px as i64)
                .ignore()
                .query_async(&mut c)
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    tokio::time::sleep(ttl).await;
    let detail = format!(
        "{kind:?} with PX {px} written over `{name}` ({}; waited {} ms for it)",
        match (holders.is_empty(), fresh) {
            (true, _) => "it was not held".to_owned(),
            (false, true) => format!("a fresh hold of {}", holders.join(", ")),
            (false, false) => format!("held by {} (no fresh hold seen)", holders.join(", ")),
        },
        (tokio::time::Instant::now() - began)
            .saturating_sub(ttl)
            .as_millis()
    );
    Ok((detail, written))
}
