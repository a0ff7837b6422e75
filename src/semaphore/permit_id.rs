//! The id of one permit of a [`PermitExpirableSemaphore`](super::PermitExpirableSemaphore).

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// The id of a permit taken from a [`PermitExpirableSemaphore`](super::PermitExpirableSemaphore):
/// 16 random bytes, stored raw in Redis and shown as 32 lowercase hex digits, as Redisson shows
/// them — so an id taken in Rust can be released by Java code, and the other way round.
///
/// ```
/// use redisson_lock::PermitId;
///
/// let id: PermitId = "00112233445566778899aabbccddeeff".parse()?;
/// assert_eq!(id.to_string(), "00112233445566778899aabbccddeeff");
/// assert!("1234".parse::<PermitId>().is_err()); // not 16 bytes
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PermitId([u8; 16]);

impl PermitId {
    /// A fresh random id.
    pub(crate) fn random() -> PermitId {
        // a v4 UUID's 16 bytes: from the OS's random source, as Redisson's ids are
        PermitId(uuid::Uuid::new_v4().into_bytes())
    }

    /// The 16 bytes Redis stores.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The id of these 16 bytes.
    pub fn from_bytes(bytes: [u8; 16]) -> PermitId {
        PermitId(bytes)
    }
}

impl fmt::Display for PermitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for PermitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PermitId({self})")
    }
}

impl FromStr for PermitId {
    type Err = Error;

    /// Parses 32 hex digits (either case).
    fn from_str(s: &str) -> Result<PermitId, Error> {
        let bad = || Error::InvalidArgument(format!("`{s}` is not a permit id (32 hex digits)"));
        let digits = s.as_bytes();
        if digits.len() != 32 {
            return Err(bad());
        }
        let mut out = [0u8; 16];
        let digit = |b: u8| char::from(b).to_digit(16).ok_or_else(bad);
        for (i, pair) in digits.chunks(2).enumerate() {
            out[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
        }
        Ok(PermitId(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_their_hex_form() {
        for _ in 0..100 {
            let id = PermitId::random();
            let text = id.to_string();
            assert_eq!(text.len(), 32);
            assert!(text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            assert_eq!(text.parse::<PermitId>().ok(), Some(id));
            assert_eq!(text.to_uppercase().parse::<PermitId>().ok(), Some(id));
        }
    }

    #[test]
    fn malformed_ids_are_refused() {
        for bad in [
            "",
            "1234",
            "0011223344556677889aabbccddeeff",
            "g0112233445566778899aabbccddeeff",
            "+0112233445566778899aabbccddeeff",
            "é0112233445566778899aabbccddeef",
        ] {
            assert!(
                matches!(bad.parse::<PermitId>(), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
