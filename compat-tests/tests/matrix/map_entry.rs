//! Map-entry scenarios 63–64 (`RMap.getLock(key)` & co / `Client::map_entry`, feature
//! `map-entry`): 63 compares every name the crate derives with the name Redisson derives, for
//! every codec × Java key type × entry object, and the encoded key byte for byte; 64 locks one
//! entry from both languages (a holder in one, a waiter in the other); 70 (and 71 in a cluster,
//! listed with the cluster scenarios) uses each of an entry's six objects from both languages,
//! for every codec × key type the crate encodes.

use std::time::{Duration, Instant};

use redisson_lock::{entry_name, AnyLock, Codec, EntryKey, EntryObject};
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
    Scenario {
        no: 70,
        title: LIVE_TITLE,
        dirs: TOGETHER,
        limit_s: 120,
        last: false,
        needs: None,
    },
];

/// Scenario 70's title (71's is the same, in a cluster).
pub const LIVE_TITLE: &str = "Map-entry objects across languages, for StringCodec (String keys), LongCodec (Long), JsonJacksonCodec (String, Long, Integer) and Kryo5Codec (String, Long, Integer, UUID from 3.18): getLock / getFairLock / the write and read sides of getReadWriteLock exclude the other language's hold and pass to it after unlock; getSemaphore's and getPermitExpirableSemaphore's one permit taken in one language is refused in the other until given back; getCountDownLatch's count set and counted down in both";

pub async fn run(env: &Env, no: usize, dir: Dir) -> Result<Outcome> {
    match no {
        63 => s63(env).await,
        64 => s64(env, dir).await,
        70 => live(env, 70).await,
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

/// The containers besides `RMap` and `RSet` whose entries have the six getters (the harness'
/// prefixes): `RMapCache`, `RSetCache`, `RListMultimap`, `RSetMultimap`, `RLocalCachedMap`.
const CONTAINERS: [&str; 5] = [
    "mapcache",
    "setcache",
    "listmultimap",
    "setmultimap",
    "localcachedmap",
];

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
    let mut containers = std::collections::BTreeSet::new();
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
                    // the containers that inherit the getters, as far as this version has them
                    for c in CONTAINERS {
                        let f = format!("{c}.{}", o.suffix());
                        if v.get(f.as_str()).is_some() {
                            containers.insert(format!("{c}.{}", o.suffix()));
                            fields.push(f);
                        }
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
    // the local cached maps the harness made for the names: destroyed, so that their topics are
    // unsubscribed (scenario 9 checks a run leaves no subscription)
    env.java
        .call(worker, "mapEntryDone", &[], Duration::from_secs(10))
        .await?
        .into_ok()?;
    // every version has the cache and multimap containers' six getters
    for c in ["mapcache", "setcache", "listmultimap", "setmultimap"] {
        for o in EntryObject::ALL {
            let f = format!("{c}.{}", o.suffix());
            ensure!(containers.contains(&f), "Redisson {} has no {f}", env.version);
        }
    }
    let mut by_container: Vec<String> = CONTAINERS
        .iter()
        .map(|c| {
            let n = containers
                .iter()
                .filter(|f| f.starts_with(&format!("{c}.")))
                .count();
            format!("{c} {n}")
        })
        .collect();
    by_container.sort();
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{compared} keys × codecs equal byte for byte, {names} names equal (getters per container: map 6, set 6, {}); default codec {default_codec}; not compared: {}",
            by_container.join(", "),
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
            let got = lock
                .try_lock_for(Duration::ZERO)
                .await
                .map_err(|e| e.to_string())?;
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

/// The codecs × key types scenario 70 uses: (the crate's codec, the harness' codec, the Java
/// key type, the key's text).
fn live_keys(version: &str) -> Vec<(Codec, &'static str, &'static str, &'static str)> {
    let mut out = vec![
        (Codec::String, "string", "string", "order:42 é"),
        (Codec::Long, "long", "long", "-7"),
        (Codec::JsonJackson, "json", "string", "order:42 é"),
        (Codec::JsonJackson, "json", "long", "4200000000"),
        (Codec::JsonJackson, "json", "int", "42"),
        (Codec::Kryo5, "kryo5", "string", "order:42 é"),
        (Codec::Kryo5, "kryo5", "long", "-7"),
        (Codec::Kryo5, "kryo5", "int", "42"),
    ];
    // Redisson before 3.18 cannot encode a UUID with Kryo5Codec on Java 17 (scenario 63)
    if version_at_least(version, "3.18.0") {
        out.push((
            Codec::Kryo5,
            "kryo5",
            "uuid",
            "123e4567-e89b-12d3-a456-426614174000",
        ));
    }
    out
}

fn live_key(codec: Codec, java_type: &str, text: &str) -> Result<EntryKey> {
    let made = match java_type {
        "string" => EntryKey::string(codec, text),
        "long" => EntryKey::long(codec, text.parse().map_err(|e| format!("{text}: {e}"))?),
        "int" => EntryKey::int(codec, text.parse().map_err(|e| format!("{text}: {e}"))?),
        _ => EntryKey::uuid(codec, uuid::Uuid::parse_str(text).map_err(|e| e.to_string())?),
    };
    made.map_err(|e| format!("{codec:?} {java_type} {text:?}: the crate refused: {e}"))
}

/// Scenarios 70 and 71: every object of an entry, used from both languages, for every codec ×
/// key type of [`live_keys`]. Nothing waits: each step is one call whose answer says whether the
/// other language's hold is seen.
pub async fn live(env: &Env, no: usize) -> Result<Outcome> {
    let worker = format!("s{no}j");
    let map = format!("compat:{}:s{no}:map", env.version);
    let mut checks = 0usize;
    let mut latch_refused = false;
    let combos = live_keys(&env.version);
    for (codec, java_codec, java_type, text) in &combos {
        let what = format!("{java_codec} {java_type} {text:?}");
        let spec = spec(&map, java_codec, java_type, text);
        let entry = env
            .rust
            .map_entry(&map, &live_key(*codec, java_type, text)?)
            .map_err(|e| e.to_string())?;
        let java = |object: &'static str, op: &'static str, arg: Option<String>| {
            let (worker, spec) = (worker.clone(), spec.clone());
            async move {
                let mut args = vec![spec.as_str(), object, op];
                if let Some(a) = arg.as_deref() {
                    args.push(a);
                }
                env.java
                    .call(&worker, "mapEntryOp", &args, Duration::from_secs(10))
                    .await?
                    .into_ok()
            }
        };
        let err = |e: redisson_lock::Error| format!("{what}: {e}");

        // the exclusive locks: Java's hold is seen, then passes to Rust, whose hold Java sees
        let locks: [(&'static str, Box<dyn AnyLock>); 3] = [
            ("lock", Box::new(entry.lock().map_err(err)?)),
            ("fairlock", Box::new(entry.fair_lock().map_err(err)?)),
            (
                "write",
                Box::new(entry.read_write_lock().map_err(err)?.write_lock()),
            ),
        ];
        for (object, lock) in locks {
            ensure!(
                java(object, "tryLock", None).await? == true,
                "{what}: Java's {object} tryLock on a free entry failed"
            );
            ensure!(
                lock.try_lock_for(Duration::ZERO).await.map_err(err)?.is_none(),
                "{what}: Rust took the {object} Java holds"
            );
            java(object, "unlock", None).await?;
            let g = lock.try_lock_for(Duration::ZERO).await.map_err(err)?;
            ensure!(
                g.is_some(),
                "{what}: Rust could not take the {object} Java released"
            );
            ensure!(
                java(object, "tryLock", None).await? == false,
                "{what}: Java took the {object} Rust holds"
            );
            ensure!(
                java(object, "isLocked", None).await? == true,
                "{what}: Java does not see Rust's {object}"
            );
            if let Some(g) = g {
                g.unlock().await.map_err(err)?;
            }
            ensure!(
                java(object, "isLocked", None).await? == false,
                "{what}: Java still sees the {object} Rust released"
            );
            checks += 1;
        }
        // the read side: shared with Java's readers, excluded by Java's writer
        let rw = entry.read_write_lock().map_err(err)?;
        ensure!(
            java("write", "tryLock", None).await? == true,
            "{what}: Java's write tryLock failed"
        );
        ensure!(
            rw.read_lock().try_lock().await.map_err(err)?.is_none(),
            "{what}: Rust read the entry Java writes"
        );
        java("write", "unlock", None).await?;
        ensure!(
            java("read", "tryLock", None).await? == true,
            "{what}: Java's read tryLock failed"
        );
        let r = rw.read_lock().try_lock().await.map_err(err)?;
        ensure!(r.is_some(), "{what}: Rust could not read beside Java's reader");
        ensure!(
            java("write", "tryLock", None).await? == false,
            "{what}: Java wrote while both read"
        );
        java("read", "unlock", None).await?;
        if let Some(r) = r {
            r.unlock().await.map_err(err)?;
        }
        checks += 1;

        // the semaphore: one permit, taken in one language, refused in the other
        let sem = entry.semaphore().map_err(err)?;
        ensure!(
            java("semaphore", "trySetPermits", Some("1".into())).await? == true,
            "{what}: trySetPermits"
        );
        ensure!(
            java("semaphore", "tryAcquire", None).await? == true,
            "{what}: Java's tryAcquire"
        );
        ensure!(
            sem.available_permits().await.map_err(err)? == 0,
            "{what}: Rust sees a free permit Java holds"
        );
        ensure!(
            sem.try_acquire(1).await.map_err(err)?.is_none(),
            "{what}: Rust took the permit Java holds"
        );
        java("semaphore", "release", None).await?;
        let p = sem.try_acquire(1).await.map_err(err)?;
        ensure!(
            p.is_some(),
            "{what}: Rust could not take the permit Java gave back"
        );
        ensure!(
            java("semaphore", "tryAcquire", None).await? == false,
            "{what}: Java took the permit Rust holds"
        );
        if let Some(p) = p {
            p.release().await.map_err(err)?;
        }
        ensure!(
            java("semaphore", "availablePermits", None).await? == 1,
            "{what}: the permit Rust gave back"
        );
        sem.delete().await.map_err(err)?;
        checks += 1;

        // the permit-expirable semaphore: the same with permit ids
        let pes = entry.permit_expirable_semaphore().map_err(err)?;
        ensure!(
            java("pes", "trySetPermits", Some("1".into())).await? == true,
            "{what}: pes trySetPermits"
        );
        let id = java("pes", "tryAcquire", None).await?;
        let id = id
            .as_str()
            .ok_or_else(|| format!("{what}: Java's pes tryAcquire gave {id}"))?
            .to_owned();
        ensure!(
            pes.try_acquire().await.map_err(err)?.is_none(),
            "{what}: Rust took the expirable permit Java holds"
        );
        java("pes", "release", Some(id)).await?;
        let p = pes.try_acquire().await.map_err(err)?;
        ensure!(
            p.is_some(),
            "{what}: Rust could not take the expirable permit Java gave back"
        );
        ensure!(
            java("pes", "tryAcquire", None).await?.is_null(),
            "{what}: Java took the expirable permit Rust holds"
        );
        if let Some(p) = p {
            p.release().await.map_err(err)?;
        }
        ensure!(
            java("pes", "availablePermits", None).await? == 1,
            "{what}: the expirable permit Rust gave back"
        );
        pes.delete().await.map_err(err)?;
        checks += 1;

        if env.nodes.is_empty() {
            // the count-down latch: counted down in both languages
            let latch = entry.count_down_latch().map_err(err)?;
            ensure!(
                java("latch", "trySetCount", Some("2".into())).await? == true,
                "{what}: trySetCount"
            );
            ensure!(
                latch.count().await.map_err(err)? == 2,
                "{what}: Rust does not see Java's count"
            );
            latch.count_down().await.map_err(err)?;
            ensure!(
                java("latch", "getCount", None).await? == 1,
                "{what}: Java does not see Rust's count-down"
            );
            java("latch", "countDown", None).await?;
            ensure!(
                latch.count().await.map_err(err)? == 0,
                "{what}: Rust does not see Java's count-down"
            );
            checks += 1;
        } else {
            // in a cluster, a map entry's latch cannot work in either language: Redisson always
            // wraps the latch's name in braces for its channel, and the entry's name has braces
            // of its own, so the channel hashes to another slot than the count (CROSSSLOT in
            // Redisson's scripts); the crate refuses the handle, naming why
            let made = entry.count_down_latch();
            ensure!(
                matches!(&made, Err(redisson_lock::Error::InvalidArgument(m)) if m.contains("slot")),
                "{what}: the crate made a map-entry latch in a cluster: {made:?}"
            );
            let r = env
                .java
                .call(
                    &worker,
                    "mapEntryOp",
                    &[&spec, "latch", "trySetCount", "2"],
                    Duration::from_secs(10),
                )
                .await?;
            ensure!(
                !r.ok,
                "{what}: Redisson set a map-entry latch's count in a cluster: {}",
                r.raw
            );
            let why = r.error.as_deref().unwrap_or("");
            ensure!(
                why.contains("CROSSSLOT"),
                "{what}: Redisson's latch failed, not with CROSSSLOT: {why}"
            );
            latch_refused = true;
        }

        for o in EntryObject::ALL {
            let name = entry.name(o);
            ensure!(
                env.raw.exists(&[name.as_str()]).await? == 0,
                "{what}: {name} left behind"
            );
        }
    }
    Ok(Outcome {
        latency_ms: None,
        note: format!(
            "{} codec × key types, {checks} objects used from both languages{}",
            combos.len(),
            if latch_refused {
                "; the latch refused by both in a cluster (its channel, in braces, hashes to another slot: CROSSSLOT in Redisson, InvalidArgument in the crate)"
            } else {
                ""
            }
        ),
    })
}
