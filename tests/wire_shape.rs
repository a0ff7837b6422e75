//! Every script invocation of every kind, pinned: the `EVALSHA` Redis receives for an acquire, a
//! release, a force-unlock and a fair waiter's give-up has exactly these KEYS and ARGV, in this
//! order (Redisson's scripts on the same keys read them by position); the loss watch reads each
//! hold with `HEXISTS <key> <field>`. Read
//! back from Redis' own log of the commands it ran (`SLOWLOG` with a 0 µs threshold), so what
//! is checked is what went over the wire.

mod common;

use std::time::Duration;

use common::kinds::{self, KINDS};
use common::{init_tracing, RedisServer};
use redis::Value;
use redisson_lock::{Config, LossDetection};

/// One expected word of a command: a literal, or a placeholder for what varies per run.
#[derive(Clone, Copy, Debug)]
enum W {
    /// Exactly this text.
    Is(&'static str),
    /// The lock's key.
    Key,
    /// The holder's owner field (`<uuid>:<owner id>`, with `:write` for the write lock).
    Field,
    /// The holder's field followed by this suffix.
    FieldThen(&'static str),
    /// `{<key>}:` then the holder's field then this suffix (Redisson's suffix rule).
    KeyFieldThen(&'static str),
    /// A latch of this lock: `redisson_unlock_latch:{<key>}:<request id>`.
    Latch,
    /// This text with `{}` replaced by the key in braces, `{<key>}` (Redisson's prefix rule).
    Named(&'static str),
    /// Any non-negative integer.
    Int,
    /// The publish command: `PUBLISH`, `SPUBLISH` or `BOTH`.
    Publish,
    /// `0` or `1` (the release-all flag: every hold of the field, or one).
    Flag,
}

fn field_re() -> regex::Regex {
    regex::Regex::new(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+").unwrap()
}

fn matches(w: W, word: &str, key: &str) -> bool {
    let f = field_re();
    match w {
        W::Is(s) => word == s,
        W::Key => word == key,
        W::Field => f.find(word).is_some_and(|m| {
            let rest = &word[m.end()..];
            rest.is_empty() || rest == ":write"
        }),
        W::FieldThen(suffix) => f.find(word).is_some_and(|m| &word[m.end()..] == suffix),
        W::KeyFieldThen(suffix) => word
            .strip_prefix(&format!("{{{key}}}:"))
            .is_some_and(|rest| f.find(rest).is_some_and(|m| &rest[m.end()..] == suffix)),
        W::Latch => word
            .strip_prefix(&format!("redisson_unlock_latch:{{{key}}}:"))
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())),
        W::Named(pattern) => word == pattern.replace("{}", &format!("{{{key}}}")),
        W::Int => !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()),
        W::Publish => matches!(word, "PUBLISH" | "SPUBLISH" | "BOTH"),
        W::Flag => matches!(word, "0" | "1"),
    }
}

/// Makes Redis log every command it runs (`SLOWLOG` with a 0 µs threshold), with room for all.
async fn log_every_command(raw: &mut redis::aio::MultiplexedConnection) {
    // one CONFIG SET each: several parameters in one need Redis 7.0
    for (param, value) in [("slowlog-max-len", 100_000), ("slowlog-log-slower-than", 0)] {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(param)
            .arg(value)
            .query_async(raw)
            .await
            .unwrap();
    }
}

/// The `EVALSHA` commands Redis ran since the last call, oldest first, without the SHA.
async fn evalshas(raw: &mut redis::aio::MultiplexedConnection) -> Vec<Vec<String>> {
    logged(raw, "evalsha")
        .await
        .into_iter()
        .map(|words| words[1..].to_vec())
        .collect()
}

/// The `command`s Redis ran since the last call (of any command), oldest first, without the
/// command's name.
async fn logged(raw: &mut redis::aio::MultiplexedConnection, command: &str) -> Vec<Vec<String>> {
    // read and reset in one transaction: nothing run in between is lost
    let (log, ()): (Value, ()) = redis::pipe()
        .atomic()
        .cmd("SLOWLOG")
        .arg("GET")
        .arg(-1)
        .cmd("SLOWLOG")
        .arg("RESET")
        .query_async(raw)
        .await
        .unwrap();
    let Value::Array(entries) = log else {
        panic!("SLOWLOG GET replied {log:?}")
    };
    let mut out = Vec::new();
    for e in entries.into_iter().rev() {
        let Value::Array(fields) = e else { continue };
        let Some(Value::Array(args)) = fields.get(3) else {
            continue;
        };
        let words: Vec<String> = args
            .iter()
            .map(|a| match a {
                Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                other => format!("{other:?}"),
            })
            .collect();
        if words.first().is_some_and(|w| w.eq_ignore_ascii_case(command)) {
            out.push(words[1..].to_vec());
        }
    }
    out
}

/// Asserts `got` (numkeys, KEYS, ARGV) is `keys` then `args`.
fn check(kind: &str, op: &str, key: &str, got: &[String], keys: &[W], args: &[W]) {
    let n: usize = got[0].parse().unwrap();
    assert_eq!(n, keys.len(), "{kind} {op}: KEYS count in {got:?}");
    let words = &got[1..];
    assert_eq!(
        words.len(),
        keys.len() + args.len(),
        "{kind} {op}: KEYS + ARGV in {got:?}"
    );
    for (i, (w, word)) in keys.iter().chain(args).zip(words).enumerate() {
        let what = if i < keys.len() {
            format!("KEYS[{}]", i + 1)
        } else {
            format!("ARGV[{}]", i - keys.len() + 1)
        };
        assert!(
            matches(*w, word, key),
            "{kind} {op}: {what} is `{word}`, expected {w:?} (all: {got:?})"
        );
    }
}

use W::*;

/// KEYS and ARGV of the acquire, the release and the force unlock of `kind`.
fn expected(kind: &str) -> [(&'static [W], &'static [W]); 3] {
    const LOCK_UNLOCK: (&[W], &[W]) = (
        &[Key, Named("redisson_lock__channel:{}"), Latch],
        &[Is("0"), Int, Field, Publish, Int, Flag],
    );
    const LOCK_FORCE: (&[W], &[W]) = (&[Key, Named("redisson_lock__channel:{}")], &[Is("0"), Publish]);
    const LOCK_ACQUIRE: (&[W], &[W]) = (&[Key, Latch], &[Int, Field, Int]);
    match kind {
        "lock" | "non_reentrant" => [LOCK_ACQUIRE, LOCK_UNLOCK, LOCK_FORCE],
        "fenced" => [
            (&[Key, Named("redisson_lock_token:{}"), Latch], &[Int, Field, Int]),
            LOCK_UNLOCK,
            LOCK_FORCE,
        ],
        "spin" => [
            LOCK_ACQUIRE,
            (&[Key, Latch], &[Int, Field, Int, Flag]),
            (&[Key], &[]),
        ],
        "fair" | "non_reentrant_fair" => [
            (
                &[
                    Key,
                    Named("redisson_lock_queue:{}"),
                    Named("redisson_lock_timeout:{}"),
                    Latch,
                ],
                // lease, field, wait budget, now, latch TTL, waits, non-reentrant
                &[Int, Field, Int, Int, Int, Is("1"), Int],
            ),
            (
                &[
                    Key,
                    Named("redisson_lock_queue:{}"),
                    Named("redisson_lock_timeout:{}"),
                    Named("redisson_lock__channel:{}"),
                    Latch,
                ],
                &[Is("0"), Int, Field, Int, Publish, Int, Flag],
            ),
            (
                &[
                    Key,
                    Named("redisson_lock_queue:{}"),
                    Named("redisson_lock_timeout:{}"),
                    Named("redisson_lock__channel:{}"),
                ],
                &[Is("0"), Int, Publish],
            ),
        ],
        "read" => [
            (
                &[Key, KeyFieldThen(":rwlock_timeout"), Latch],
                &[Int, Field, FieldThen(":write"), Int],
            ),
            (
                &[
                    Key,
                    Named("redisson_rwlock:{}"),
                    KeyFieldThen(":rwlock_timeout"),
                    Named("{}"),
                    Latch,
                ],
                &[Is("0"), Field, Publish, Int, Flag],
            ),
            (&[Key, Named("redisson_rwlock:{}")], &[Is("0"), Publish]),
        ],
        "write" => [
            LOCK_ACQUIRE,
            (
                &[Key, Named("redisson_rwlock:{}"), Latch],
                &[Is("1"), Int, Field, Publish, Int, Flag],
            ),
            (&[Key, Named("redisson_rwlock:{}")], &[Is("1"), Publish]),
        ],
        other => panic!("no expected shape for `{other}`"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_sends_its_scripts_keys_and_arguments_in_order() {
    init_tracing();
    let s = RedisServer::start();
    // the lock operations' own commands (the loss watch's reads are pinned below)
    let c = s
        .client(
            Config::default()
                .with_lock_watchdog_timeout(Duration::from_secs(60))
                .with_loss_detection(LossDetection::Renewal),
        )
        .await;
    let mut raw = s.conn().await;
    log_every_command(&mut raw).await;
    for kind in KINDS {
        let key = format!("shape:{kind}");
        let lock = kinds::open(kind, &c, &key);
        let [acquire, release, force] = expected(kind);
        // load the scripts first: a `NOSCRIPT` reply logs the command twice
        let warm = kinds::open(kind, &c, &format!("warm:{kind}"));
        warm.lock().await.unwrap().unlock().await.unwrap();
        warm.lock().await.unwrap().forget();
        assert!(warm.force_unlock().await.unwrap(), "{kind}");
        let _ = evalshas(&mut raw).await; // start from here
        let g = lock.lock().await.unwrap();
        g.unlock().await.unwrap();
        let g = lock.lock().await.unwrap();
        assert!(lock.force_unlock().await.unwrap(), "{kind}");
        let sent = evalshas(&mut raw).await;
        assert_eq!(
            sent.len(),
            4,
            "{kind}: acquire, release, acquire, force unlock: {sent:?}"
        );
        check(kind, "acquire", &key, &sent[0], acquire.0, acquire.1);
        check(kind, "release", &key, &sent[1], release.0, release.1);
        check(kind, "acquire", &key, &sent[2], acquire.0, acquire.1);
        check(kind, "force unlock", &key, &sent[3], force.0, force.1);
        g.forget();
    }
    c.shutdown().await.unwrap();
}

/// The loss watch reads every new hold on its tracking connection with a plain
/// `HEXISTS <lock key> <owner field>` (the hash field Redisson's scripts use).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loss_watch_reads_each_hold_by_its_key_and_field() {
    init_tracing();
    let s = RedisServer::start();
    let c = s
        .client(Config::default().with_lock_watchdog_timeout(Duration::from_secs(60)))
        .await;
    let mut raw = s.conn().await;
    log_every_command(&mut raw).await;
    for kind in KINDS {
        let key = format!("watched:{kind}");
        let _ = logged(&mut raw, "hexists").await;
        let g = kinds::open(kind, &c, &key).lock().await.unwrap();
        // the read follows the grant (asynchronously): wait for it
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let read = loop {
            if let Some(read) = logged(&mut raw, "hexists")
                .await
                .into_iter()
                .find(|e| e[0] == key)
            {
                break read;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{kind}: the loss watch did not read the new hold within 5 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(
            read,
            [key.clone(), g.field().to_owned()],
            "{kind}: HEXISTS key field"
        );
        g.unlock().await.unwrap();
    }
    c.shutdown().await.unwrap();
}

/// A fair waiter that stops waiting leaves the queue with `give_up.lua`: KEYS queue and
/// deadlines, ARGV its field and its wait budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fair_waiter_gives_up_with_its_field_and_budget() {
    init_tracing();
    let s = RedisServer::start();
    let quiet = Config::default().with_loss_detection(LossDetection::Renewal);
    let a = s.client(quiet.clone()).await;
    let b = s.client(quiet).await;
    let mut raw = s.conn().await;
    log_every_command(&mut raw).await;
    for kind in KINDS.into_iter().filter(|k| kinds::queues(k)) {
        let key = format!("give-up:{kind}");
        let held = kinds::open(kind, &a, &key).lock().await.unwrap();
        let _ = evalshas(&mut raw).await;
        let r = kinds::open(kind, &b, &key)
            .try_lock_for(Duration::from_millis(300))
            .await
            .unwrap();
        assert!(r.is_none(), "{kind}");
        let sent = evalshas(&mut raw).await;
        let give_up = sent
            .iter()
            .find(|w| w[0] == "2")
            .unwrap_or_else(|| panic!("{kind}: no two-key script (the give-up) in {sent:?}"));
        check(
            kind,
            "give up",
            &key,
            give_up,
            &[Named("redisson_lock_queue:{}"), Named("redisson_lock_timeout:{}")],
            &[Field, Is("300")],
        );
        held.unlock().await.unwrap();
    }
    a.shutdown().await.unwrap();
    b.shutdown().await.unwrap();
}

/// A release retried with the same request id replays its first reply, also when the first
/// found no lock at all: the retry of an unlock of an expired read or write lock says "not held"
/// again (nil), never "released".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_release_of_a_missing_lock_replays_not_held() {
    init_tracing();
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let lua =
        |f: &str| std::fs::read_to_string(format!("{}/lua/{f}.lua", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let field = "6dac7dfe-82ae-430f-96e9-6a37ea785ff5:1";
    let cases = [
        (
            "rw/write_unlock",
            vec![
                "gone",
                "redisson_rwlock:{gone}",
                "redisson_unlock_latch:{gone}:aa",
            ],
            vec![
                "1".to_owned(),
                "30000".into(),
                format!("{field}:write"),
                "PUBLISH".into(),
                "5000".into(),
                "0".into(),
            ],
        ),
        (
            "rw/read_unlock",
            vec![
                "gone",
                "redisson_rwlock:{gone}",
                "{gone}:6dac7dfe-82ae-430f-96e9-6a37ea785ff5:1:rwlock_timeout",
                "{gone}",
                "redisson_unlock_latch:{gone}:bb",
            ],
            vec![
                "0".to_owned(),
                field.into(),
                "PUBLISH".into(),
                "5000".into(),
                "0".into(),
            ],
        ),
        (
            "lock/unlock",
            vec![
                "gone",
                "redisson_lock__channel:{gone}",
                "redisson_unlock_latch:{gone}:cc",
            ],
            vec![
                "0".to_owned(),
                "30000".into(),
                field.into(),
                "PUBLISH".into(),
                "5000".into(),
                "0".into(),
            ],
        ),
    ];
    for (script, keys, args) in cases {
        let source = format!("{}\n{}", lua("common/notify"), lua(script));
        let script_obj = redis::Script::new(&source);
        for attempt in ["first", "retry"] {
            let mut inv = script_obj.prepare_invoke();
            for k in &keys {
                inv.key(*k);
            }
            for a in &args {
                inv.arg(a);
            }
            let reply: Option<i64> = inv.invoke_async(&mut raw).await.unwrap();
            assert_eq!(reply, None, "{script} ({attempt}): not held");
        }
    }
}
