//! Whether a name is one of a map entry's objects: Redisson names the lock, fair lock,
//! read-write lock, semaphores and latch of a map entry (`RMap.getLock(key)` & co, and a set's
//! value likewise) `{map}:<hash>:<suffix>` (`map:<hash>:<suffix>` when the map's name has a `{`),
//! where `<hash>` is 22 base64 characters of a hash of the key's bytes. The key itself cannot be
//! read back from the name; the map can.

/// What a name says of the map entry it belongs to (see [`map_entry_of`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MapEntryOf {
    /// The map's (or set's) name, as the name holds it (after any name mapper). A map whose own
    /// name is in braces (`{orders}`) cannot be told from one without (`orders`): this is the
    /// name without them.
    pub map: String,
    /// The 22-character hash of the entry's key (the same for each of its objects).
    pub hash: String,
    /// The Redisson getter of the object: `getLock`, `getFairLock`, `getReadWriteLock`,
    /// `getSemaphore`, `getPermitExpirableSemaphore` or `getCountDownLatch`.
    pub getter: &'static str,
}

/// The map-entry objects' name suffixes and their Redisson getters.
const OBJECTS: [(&str, &str); 6] = [
    ("lock", "getLock"),
    ("fairlock", "getFairLock"),
    ("rw_lock", "getReadWriteLock"),
    ("semaphore", "getSemaphore"),
    ("permitexpirablesemaphore", "getPermitExpirableSemaphore"),
    ("countdownlatch", "getCountDownLatch"),
];

/// The map entry `key` is an object of, when its shape says so (`{map}:<hash>:<suffix>` or
/// `map{..}:<hash>:<suffix>`); `None` for any other name. A shape only: a name an application
/// chose to look like this is reported too.
///
/// ```
/// use redisson_lock::inspect::map_entry_of;
///
/// let e = map_entry_of("{orders}:zGp2RnUc2cZchMHly8iqUA:lock").expect("an entry's lock");
/// assert_eq!((e.map.as_str(), e.getter), ("orders", "getLock"));
/// let e = map_entry_of("{tag}orders:zGp2RnUc2cZchMHly8iqUA:rw_lock").expect("an entry's lock");
/// assert_eq!((e.map.as_str(), e.getter), ("{tag}orders", "getReadWriteLock"));
/// assert_eq!(map_entry_of("lock:order:42"), None);
/// ```
pub fn map_entry_of(key: &str) -> Option<MapEntryOf> {
    let mut parts = key.rsplitn(3, ':');
    let (suffix, hash, map) = (parts.next()?, parts.next()?, parts.next()?);
    let getter = OBJECTS.iter().find(|(s, _)| *s == suffix)?.1;
    let base64 = |c: char| c.is_ascii_alphanumeric() || c == '+' || c == '/';
    if hash.len() != 22 || !hash.chars().all(base64) {
        return None;
    }
    // `{map}` for a map name without braces; the name itself when it has one
    let map = match map.strip_prefix('{').and_then(|m| m.strip_suffix('}')) {
        Some(inner) if !inner.contains(['{', '}']) && !inner.is_empty() => inner,
        _ if map.contains('{') => map,
        _ => return None,
    };
    Some(MapEntryOf {
        map: map.to_owned(),
        hash: hash.to_owned(),
        getter,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let h = "zGp2RnUc2cZchMHly8iqUA";
        for (suffix, getter) in OBJECTS {
            let e = map_entry_of(&format!("{{m:x}}:{h}:{suffix}")).unwrap();
            assert_eq!((e.map.as_str(), e.hash.as_str(), e.getter), ("m:x", h, getter));
        }
        assert_eq!(
            map_entry_of(&format!("a{{b}}c:{h}:semaphore")).unwrap().map,
            "a{b}c"
        );
        // not an entry: no braces, another suffix, a hash of another length or alphabet
        for key in [
            format!("m:{h}:lock"),
            format!("{{m}}:{h}:lock2"),
            format!("{{m}}:{h}x:lock"),
            "{m}:zGp2RnUc2cZchMHly8iq-A:lock".to_owned(),
            format!("{h}:lock"),
            "lock".to_owned(),
        ] {
            assert_eq!(map_entry_of(&key), None, "{key}");
        }
    }
}
