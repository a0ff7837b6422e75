//! The entry hash in an entry object's name: Redisson's `Hash.hash128toBase64`.

use base64::Engine as _;
use highway::{HighwayHash as _, HighwayHasher, Key};

/// The HighwayHash key Redisson hashes entry keys with.
const KEY: [u64; 4] = [
    0x9e37_79b9_7f4a_7c15,
    0xf39c_c060_5ced_c834,
    0x1082_276b_f3a2_7251,
    0xf86c_6a11_d0c1_8e95,
];

/// HighwayHash-128 of `bytes` under [`KEY`], its two 64-bit halves written big-endian (first
/// half first), in standard base64 without the trailing `==`: 22 characters of `A–Z a–z 0–9 + /`.
pub(crate) fn entry_hash(bytes: &[u8]) -> String {
    let [high, low] = HighwayHasher::new(Key(KEY)).hash128(bytes);
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&high.to_be_bytes());
    raw[8..].copy_from_slice(&low.to_be_bytes());
    let mut text = base64::engine::general_purpose::STANDARD.encode(raw);
    // 16 bytes are 24 base64 characters, the last two of them padding
    text.truncate(22);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hashes Redisson (4.7.0, 3.52.0, 3.24.3, 3.17.7) put in the names of entries whose
    /// codec-encoded keys are these bytes (`getMap("m", codec).getLock(key).getName()` =
    /// `{m}:<hash>:lock`).
    #[test]
    fn matches_redisson() {
        for (bytes, hash) in [
            (&b""[..], "t6rZwibGo2uy1OSmNVe8pg"),
            (b"k", "zGp2RnUc2cZchMHly8iqUA"),
            (b"ab", "qIx8Ray65QDI9s9SyboNig"),
            (b"\xc3\xa9", "spgDxOb77/OO0mYEcmfOBQ"),
            (b"order:42", "qCj9C1XTG9WEby0hj4f/Cw"),
            (b"42", "RE0IojEvPTY8Dofe3IkBNA"),
            (b"\x03\x82k", "PK5e7RsqZhPILwC/8SWg9w"),
            (b"\x09\x54", "VQXPsX8R0Nuk4PCULzvfjg"),
            (b"[\"java.lang.Long\",42]", "WwNbBTVB1zGkaLw39wufaA"),
            (b"123e4567-e89b-12d3-a456-426614174000", "dQ6jkanmtIifV5mBhKjjDQ"),
        ] {
            assert_eq!(entry_hash(bytes), hash, "bytes {bytes:?}");
        }
    }

    /// Longer than one 32-byte packet, and a whole number of them.
    #[test]
    fn packets_and_remainders() {
        let mut kryo = vec![0x03, 0xc0, 0x01];
        kryo.extend(std::iter::repeat_n(b'a', 63));
        assert_eq!(entry_hash(&kryo), "unRMZDGuUtb/P9H5jlUE8A");
        let mut ascii = vec![0x03];
        ascii.extend(std::iter::repeat_n(b'a', 31));
        ascii.push(b'a' | 0x80);
        assert_eq!(ascii.len(), 33);
        assert_eq!(entry_hash(&ascii), "Hl+Fira8SgZWmjF70F+ppw");
        let mut thirty_two = vec![0x03];
        thirty_two.extend(std::iter::repeat_n(b'a', 30));
        thirty_two.push(b'a' | 0x80);
        assert_eq!(thirty_two.len(), 32);
        assert_eq!(entry_hash(&thirty_two), "S+4XIx0xvG5X4bFc6yk87A");
    }
}
