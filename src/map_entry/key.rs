//! An entry's key: the bytes the Java service's codec encodes it to, and their hash.

use super::codec::{encode, Codec, JavaKey};
use super::hash::entry_hash;
use crate::error::Result;

/// The key of a map entry (or a set's value) as the Java service's codec encodes it: what
/// Redisson hashes into the names of the entry's locks and synchronizers.
///
/// Built from the Java key's type and value and the map's [`Codec`], or from bytes the caller
/// encoded ([`EntryKey::encoded`]). The same value under another Java type or codec is another
/// entry: `getLock(42L)` and `getLock(42)` differ under [`Codec::Kryo5`] and
/// [`Codec::JsonJackson`].
///
/// # Examples
///
/// ```
/// use redisson_lock::{Codec, EntryKey};
///
/// let key = EntryKey::long(Codec::Kryo5, 42)?; // Java: map.getLock(42L)
/// assert_eq!(key.bytes(), [0x09, 0x54]);
/// assert_eq!(key.hash(), "VQXPsX8R0Nuk4PCULzvfjg");
/// assert_ne!(key, EntryKey::int(Codec::Kryo5, 42)?); // Java: map.getLock(42)
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct EntryKey {
    bytes: Vec<u8>,
    hash: String,
}

impl EntryKey {
    /// A `java.lang.String` key.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the codec and key type
    /// when the crate cannot write the codec's form ([`Codec::Marshalling`]).
    pub fn string(codec: Codec, key: &str) -> Result<EntryKey> {
        encode(codec, JavaKey::String(key)).map(EntryKey::encoded)
    }

    /// A `java.lang.Long` key (`42L`, a `long` boxed).
    ///
    /// # Errors
    ///
    /// As [`EntryKey::string`].
    pub fn long(codec: Codec, key: i64) -> Result<EntryKey> {
        encode(codec, JavaKey::Long(key)).map(EntryKey::encoded)
    }

    /// A `java.lang.Integer` key (`42`, an `int` boxed).
    ///
    /// # Errors
    ///
    /// As [`EntryKey::string`].
    pub fn int(codec: Codec, key: i32) -> Result<EntryKey> {
        encode(codec, JavaKey::Integer(key)).map(EntryKey::encoded)
    }

    /// A `java.util.UUID` key.
    ///
    /// # Errors
    ///
    /// As [`EntryKey::string`].
    pub fn uuid(codec: Codec, key: uuid::Uuid) -> Result<EntryKey> {
        encode(codec, JavaKey::Uuid(key)).map(EntryKey::encoded)
    }

    /// A key the caller encoded: exactly the bytes the Java service's codec writes for it
    /// (`codec.getMapKeyEncoder().encode(key)`, or the value encoder for a set's value), for a
    /// codec or key type the constructors above do not cover.
    ///
    /// ```
    /// use redisson_lock::{Codec, EntryKey};
    ///
    /// assert_eq!(EntryKey::encoded(*b"k"), EntryKey::string(Codec::String, "k")?);
    /// # Ok::<_, redisson_lock::Error>(())
    /// ```
    pub fn encoded(bytes: impl Into<Vec<u8>>) -> EntryKey {
        let bytes = bytes.into();
        let hash = entry_hash(&bytes);
        EntryKey { bytes, hash }
    }

    /// The encoded key.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The hash in the entry's names: HighwayHash-128 of [`bytes`](Self::bytes) in base64, 22
    /// characters (Redisson's `Hash.hash128toBase64`).
    pub fn hash(&self) -> &str {
        &self.hash
    }
}

impl std::fmt::Debug for EntryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryKey")
            .field("bytes", &String::from_utf8_lossy(&self.bytes))
            .field("hash", &self.hash)
            .finish()
    }
}
