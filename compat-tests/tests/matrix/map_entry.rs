//! Map-entry scenarios 63–64 (`RMap.getLock(key)` & co / `Client::map_entry`, feature
//! `map-entry`): 63 compares every name the crate derives with the name Redisson derives, for
//! every codec × Java key type × entry object, and the encoded key byte for byte; 64 locks one
//! entry from both languages (a holder in one, a waiter in the other).

use std::time::{Duration, Instant};

use redisson_lock::{entry_name, Codec, EntryKey, EntryObject};
use redisson_lock_compat_tests::{version_at_least, Result};

use crate::env::Env;
use crate::kinds::{Dir, Outcome, Scenario, BOTH_WAYS, TOGETHER};
use crate::support::{short, until};

pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        no: 63,
        title: "Map-entry names: for StringCodec, LongCodec, JsonJacksonCodec, Kryo5Codec and the client's default codec × String (ASCII, non-ASCII, empty, control characters, beyond U+FFFF, 32/33/63/64/200 ASCII and 100/8191 non-ASCII characters), Long, Integer (0, ±, extremes) and UUID keys, Redisson's encoded key equals EntryKey::bytes and each of the 6 map objects' and 6 set objects' names (getLock, getFairLock, getReadWriteLock, getSemaphore, getPermitExpirableSemaphore, getCountDownLatch) equals entry_name; a hash-tagged map name; MarshallingCodec (the default before 3.18) refused",
        dirs: TOGETHER,
        limit_s: 120,
        last: false,
        needs: None,
    },
    Scenario {
        no: 64,
        title: "Map-entry lock across languages: A holds getMap(m, Kryo5Codec).getLock(\"order:42\") / map_entry(m, Kryo5 \"order:42\").lock() (its hash under the derived name holds A's field), B's try_lock fails, B's lock() waits (subscribed on the derived name's channel) and gets it ≤ 1000 ms after A's unlock",
        dirs: BOTH_WAYS,
        limit_s: 60,
        last: false,
        needs: None,
    },
];

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        63 => s63(env).await,
        64 => s64(env, dir).await,
        _ => Err(format!("no map-entry scenario {no}")),
    }
}

/// The harness' codec argument of a crate codec.
fn java_codec(codec: Codec) -> &'static str {
    match codec {
        Codec::String => "string",
        Codec::Long => "long",
        Codec::JsonJackson => "json",
        Codec::Kryo5 => "kryo5",
        _ => "default",
    }
}

/// A key as both sides take it: the harness' type and text, the crate's [`EntryKey`].
struct Key {
    java_type: &'static str,
    text: String,
    make: Box<dyn Fn(Codec) -> redisson_lock::Result<EntryKey> + Send + Sync>,
}

fn keys() -> Vec<Key> {
    let mut out = Vec::new();
    let mut strings: Vec<String> = [
        "k",
        "",
        "ab",
        "é",
        "order:42",
        "\u{1F600}",
        "a\u{1F600}",
        "\u{8}\t\n\u{c}\r\u{1f}\u{7f}\"\\/\u{2028}",
        "\0é",
        "a\0",
        "\u{800}\u{feff}",
        "日本語のキー",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for n in [32, 33, 63, 64, 200] {
        strings.push("a".repeat(n));
    }
    strings.push("é".repeat(100));
    strings.push("é".repeat(8191));
    for s in strings {
        let t = s.clone();
        out.push(Key {
            java_type: "string",
            text: s,
            make: Box::new(move |c| EntryKey::string(c, &t)),
        });
    }
    for n in [0i64, 42, -1, 300, i64::MIN, i64::MAX] {
        out.push(Key {
            java_type: "long",
            text: n.to_string(),
            make: Box::new(move |c| EntryKey::long(c, n)),
        });
    }
    for n in [0i32, 42, -5, i32::MIN, i32::MAX] {
        out.push(Key {
            java_type: "int",
            text: n.to_string(),
            make: Box::new(move |c| EntryKey::int(c, n)),
        });
    }
    for u in [
        uuid::Uuid::nil(),
        uuid::Uuid::from_u128(0x123e4567_e89b_12d3_a456_426614174000),
        uuid::Uuid::from_u128(0xffffffff_ffff_4fff_bfff_ffffffffffff),
    ] {
        out.push(Key {
            java_type: "uuid",
            text: u.hyphenated().to_string(),
            make: Box::new(move |c| EntryKey::uuid(c, u)),
        });
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_bytes(text: &str) -> Result<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad hex from the harness: {text}"))
        })
        .collect()
}

/// The harness' `MAP|CODEC|KEYTYPE|XHEX` token.
fn spec(map: &str, codec: &str, java_type: &str, text: &str) -> String {
    format!("{map}|{codec}|{java_type}|x{}", hex(text.as_bytes()))
}

async fn s63(env: &Env) -> Result<Outcome> {
    let worker = "s63b";
    let kryo5_uuid = version_at_least(&env.version, "3.18.0");
    let keys = keys();
    let (mut compared, mut names) = (0usize, 0usize);
    let mut skipped = Vec::new();
    let mut default_codec = String::new();
    for map in ["m", "{tag}map"] {
        for java in ["string", "long", "json", "kryo5", "default"] {
            for key in &keys {
                // the hash-tagged map: one key per type is enough for the suffix rule
                if map != "m"
                    && !matches!(
                        key.text.as_str(),
                        "k" | "42" | "00000000-0000-0000-0000-000000000000"
                    )
                {
                    continue;
                }
                let what = format!("{java} {} {:?}", key.java_type, short(&key.text, 20));
                let r = env
                    .java
                    .call(
                        worker,
                        "mapEntryName",
                        &[&spec(map, java, key.java_type, &key.text)],
                        Duration::from_secs(10),
                    )
                    .await?;
                let java_class = if java == "default" && r.ok {
                    r.result["codec"].as_str().unwrap_or("").to_owned()
                } else {
                    String::new()
                };
                let codec = match java {
                    "string" => Codec::String,
                    "long" => Codec::Long,
                    "json" => Codec::JsonJackson,
                    "kryo5" => Codec::Kryo5,
                    _ => match java_class.as_str() {
                        "org.redisson.codec.Kryo5Codec" => Codec::Kryo5,
                        "org.redisson.codec.MarshallingCodec" => Codec::Marshalling,
                        other if r.ok => {
                            return Err(format!("default codec {other}: not in the crate's table"))
                        }
                        _ => Codec::Kryo5,
                    },
                };
                if java == "default" && !java_class.is_empty() {
                    default_codec = java_class.rsplit('.').next().unwrap_or("").to_owned();
                }
                if !r.ok {
                    // Redisson before 3.18 cannot encode a UUID with Kryo5Codec on Java 17
                    // (no UUID serializer; reflection into java.util is closed)
                    let kryo = codec == Codec::Kryo5;
                    ensure!(
                        kryo && key.java_type == "uuid" && !kryo5_uuid,
                        "{what}: Redisson failed: {}",
                        r.raw
                    );
                    skipped.push(format!(
                        "Kryo5 UUID ({})",
                        r.error_class.as_deref().unwrap_or("?")
                    ));
                    continue;
                }
                let v = r.result;
                let made = (key.make)(codec);
                if codec == Codec::Marshalling {
                    ensure!(
                        matches!(made, Err(redisson_lock::Error::InvalidArgument(ref m)) if m.contains("MarshallingCodec")),
                        "{what}: MarshallingCodec not refused: {made:?}"
                    );
                    skipped.push("MarshallingCodec (refused)".to_owned());
                    continue;
                }
                if codec == Codec::JsonJackson && key.java_type == "uuid" {
                    // Redisson's form depends on its version: the crate refuses, and the form
                    // this version writes, passed as bytes, names the same objects
                    ensure!(
                        matches!(made, Err(redisson_lock::Error::InvalidArgument(ref m)) if m.contains("UUID")),
                        "{what}: JsonJacksonCodec UUID not refused: {made:?}"
                    );
                    let plain = format!("\"{}\"", key.text);
                    let typed = format!("[\"java.util.UUID\",\"{}\"]", key.text);
                    let theirs = v["mapKeyBytes"].as_str().unwrap_or("");
                    let form = if theirs == hex(plain.as_bytes()) {
                        "a plain string"
                    } else if theirs == hex(typed.as_bytes()) {
                        "with its class"
                    } else {
                        return Err(format!("{what}: Redisson writes {theirs}, neither known form"));
                    };
                    let ek = EntryKey::encoded(hex_bytes(theirs)?);
                    ensure!(
                        v["lock"].as_str() == Some(entry_name(map, &ek, EntryObject::Lock).as_str()),
                        "{what}: the encoded form names another lock than {}",
                        v["lock"]
                    );
                    skipped.push(format!(
                        "JsonJacksonCodec UUID (refused; this version writes it {form})"
                    ));
                    continue;
                }
                let ek = made.map_err(|e| format!("{what}: the crate refused: {e}"))?;
                let theirs = v["mapKeyBytes"].as_str().unwrap_or("");
                ensure!(
                    theirs == hex(ek.bytes()),
                    "{what}: Redisson encodes {}, the crate {}",
                    short(theirs, 80),
                    short(&hex(ek.bytes()), 80)
                );
                ensure!(
                    v["valueBytes"].as_str() == Some(theirs),
                    "{what}: Redisson's value encoder differs from its map key encoder: {}",
                    v["valueBytes"]
                );
                ensure!(
                    java != "default" || java_codec(codec) == "kryo5",
                    "{what}: default codec {java_class}"
                );
                for o in EntryObject::ALL {
                    let ours = entry_name(map, &ek, o);
                    let mut fields = vec![o.suffix().to_owned(), format!("set.{}", o.suffix())];
                    if o == EntryObject::ReadWriteLock {
                        fields.push("rw_lock.write".to_owned());
                    }
                    for f in fields {
                        let theirs = v[f.as_str()].as_str().unwrap_or("");
                        ensure!(theirs == ours, "{what}: {f}: Redisson {theirs}, the crate {ours}");
                        names += 1;
                    }
                }
                compared += 1;
            }
        }
    }
    skipped.sort();
    skipped.dedup();
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{compared} keys × codecs equal byte for byte, {names} names equal; default codec {default_codec}; not compared: {}",
            if skipped.is_empty() { "none".to_owned() } else { skipped.join(", ") }
        ),
    })
}

async fn s64(env: &Env, dir: Dir) -> Result<Outcome> {
    // not env.name(): scenario 9 looks for the plain lock's keys under those names
    let map = format!("compat:{}:s64:{}:map", env.version, dir.tag());
    let key = EntryKey::string(Codec::Kryo5, "order:42").map_err(|e| e.to_string())?;
    let spec = spec(&map, "kryo5", "string", "order:42");
    let entry = env.rust.map_entry(&map, &key).map_err(|e| e.to_string())?;
    let name = entry.name(EntryObject::Lock);
    let lock = entry.lock().map_err(|e| e.to_string())?;
    let worker = format!("s64{}", dir.tag());
    let field = env.java.field_of(&worker).await?;
    let limit = Duration::from_secs(10);
    let latency = match dir {
        Dir::JavaHolds => {
            env.java
                .call(&worker, "mapLockLock", &[&spec], limit)
                .await?
                .into_ok()?;
            let h = env.raw.hgetall(&name).await?;
            ensure!(
                h.get(&field).map(String::as_str) == Some("1"),
                "after Java's lock the hash {name} is {h:?}, expected {field} = 1"
            );
            let got = lock.try_lock().await.map_err(|e| e.to_string())?;
            ensure!(got.is_none(), "Rust's try_lock got the entry Java holds");
            let l = lock.clone();
            let waiter = tokio::spawn(async move {
                let g = l.lock().await;
                (Instant::now(), g)
            });
            env.wait_subscribers(&name, 1).await?;
            let sent = Instant::now();
            env.java
                .call(&worker, "mapLockUnlock", &[&spec], limit)
                .await?
                .into_ok()?;
            let (at, g) = tokio::time::timeout(limit, waiter)
                .await
                .map_err(|_| "Rust's lock() not woken within 10 s".to_owned())?
                .map_err(|e| e.to_string())?;
            let g = g.map_err(|e| e.to_string())?;
            let ms = at.saturating_duration_since(sent).as_secs_f64() * 1000.0;
            let h = env.raw.hgetall(&name).await?;
            ensure!(h.contains_key(g.field()), "Rust holds, but the hash is {h:?}");
            g.unlock().await.map_err(|e| e.to_string())?;
            ms
        }
        _ => {
            let g = lock.lock().await.map_err(|e| e.to_string())?;
            let got = env
                .java
                .call(&worker, "mapLockTryLock", &[&spec], limit)
                .await?
                .bool()?;
            ensure!(!got, "Java's tryLock got the entry Rust holds");
            let pending = env.java.send(&worker, "mapLockLock", &[&spec]).await?;
            env.wait_subscribers(&name, 1).await?;
            let sent = Instant::now();
            g.unlock().await.map_err(|e| e.to_string())?;
            let r = pending.wait(limit).await?;
            let done = r.ts_ms;
            r.into_ok()?;
            let h = env.raw.hgetall(&name).await?;
            ensure!(
                h.get(&field).map(String::as_str) == Some("1"),
                "after Java's lock() the hash is {h:?}"
            );
            env.java
                .call(&worker, "mapLockUnlock", &[&spec], limit)
                .await?
                .into_ok()?;
            // the response's completion time against the unlock's, both on this machine's clock
            let now_ms = redisson_lock_compat_tests::now_ms();
            let elapsed = sent.elapsed().as_secs_f64() * 1000.0;
            (done - (now_ms - elapsed)).max(0.0)
        }
    };
    until(limit, "the entry's lock is gone", || async {
        Ok(env.raw.exists(&[name.as_str()]).await? == 0)
    })
    .await?;
    ensure!(
        latency <= 1000.0,
        "the waiter got the lock {latency:.0} ms after the unlock"
    );
    Ok(Outcome {
        latency_ms: Some(latency),
        note: format!("lock {name}; B woken {latency:.1} ms after A's unlock"),
    })
}
