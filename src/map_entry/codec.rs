//! Redisson's codecs, as far as an entry key's bytes go: what `codec.getMapKeyEncoder().encode(key)`
//! (and the value encoder, the same for every codec here) writes for a Java `String`, `Long`,
//! `Integer` or `UUID`. Each form below was compared byte for byte with Redisson's own encoder
//! (`compat-tests`, scenario 63).

use crate::error::{Error, Result};

/// The Redisson codec a Java service gave its map or set (`redisson.getMap(name, codec)`; without
/// one, the client's configured codec, [`Codec::Kryo5`] unless the Java service changed it).
///
/// An entry's objects are named after a hash of the key **as that codec encodes it**, so the
/// Rust side must name the same codec. A codec that is not listed here: encode the key the way
/// it does and pass the bytes to [`EntryKey::encoded`](crate::EntryKey::encoded).
///
/// # Examples
///
/// ```
/// use redisson_lock::{Codec, EntryKey};
///
/// // Java: redisson.getMap("orders", StringCodec.INSTANCE).getLock("order:42")
/// let key = EntryKey::string(Codec::String, "order:42")?;
/// assert_eq!(key.bytes(), b"order:42");
/// // Java: redisson.getMap("orders").getLock("order:42") (the default codec, Kryo5Codec)
/// let key = EntryKey::string(Codec::Kryo5, "order:42")?;
/// assert_eq!(key.bytes(), b"\x03order:4\xb2");
/// # Ok::<_, redisson_lock::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Codec {
    /// `StringCodec`: the key's `toString()` in UTF-8 (a number in decimal, a UUID in its
    /// 36-character lowercase form).
    String,
    /// `LongCodec`: encodes as `StringCodec` does (it only decodes differently), so any key is
    /// its `toString()` in UTF-8.
    Long,
    /// `JsonJacksonCodec`: the key's JSON as Redisson's object mapper writes it: a string in
    /// quotes (`"`, `\`, control characters and characters beyond U+FFFF escaped as Jackson
    /// does), an `Integer` as a bare number, a `Long` as `["java.lang.Long",42]` (Redisson's type
    /// information). A `UUID` key is refused: Redisson up to 3.52 writes it as a plain string
    /// (`"…"`), Redisson 4.7 with its class (`["java.util.UUID","…"]`); pass the form of the Java
    /// service's version to [`EntryKey::encoded`](crate::EntryKey::encoded).
    JsonJackson,
    /// `Kryo5Codec`, Redisson's default codec since 3.18.0: Kryo's `writeClassAndObject`, the
    /// class's registration id and then the value (a `UUID` by its class name, as Redisson
    /// registers no id for it; Redisson before 3.18.0 cannot encode a `UUID` with this codec on
    /// Java 17).
    Kryo5,
    /// `MarshallingCodec`, Redisson's default codec before 3.18.0: JBoss Marshalling's format,
    /// which this crate does not write. Every key is refused with [`Error::InvalidArgument`];
    /// encode it yourself and use [`EntryKey::encoded`](crate::EntryKey::encoded).
    Marshalling,
}

impl Codec {
    /// The Java class of the codec (`org.redisson.codec.Kryo5Codec`, ...).
    ///
    /// ```
    /// assert_eq!(redisson_lock::Codec::Kryo5.java_class(), "org.redisson.codec.Kryo5Codec");
    /// ```
    pub fn java_class(self) -> &'static str {
        match self {
            Codec::String => "org.redisson.client.codec.StringCodec",
            Codec::Long => "org.redisson.client.codec.LongCodec",
            Codec::JsonJackson => "org.redisson.codec.JsonJacksonCodec",
            Codec::Kryo5 => "org.redisson.codec.Kryo5Codec",
            Codec::Marshalling => "org.redisson.codec.MarshallingCodec",
        }
    }

    fn simple_name(self) -> &'static str {
        let class = self.java_class();
        class.rsplit('.').next().unwrap_or(class)
    }
}

/// A key as Java holds it: the Java type decides the bytes as much as the value does.
#[derive(Clone, Copy, Debug)]
pub(crate) enum JavaKey<'a> {
    /// `java.lang.String`
    String(&'a str),
    /// `java.lang.Long`
    Long(i64),
    /// `java.lang.Integer`
    Integer(i32),
    /// `java.util.UUID`
    Uuid(uuid::Uuid),
}

impl JavaKey<'_> {
    fn java_type(&self) -> &'static str {
        match self {
            JavaKey::String(_) => "String",
            JavaKey::Long(_) => "Long",
            JavaKey::Integer(_) => "Integer",
            JavaKey::Uuid(_) => "UUID",
        }
    }

    /// Java's `toString()`.
    fn text(&self) -> String {
        match self {
            JavaKey::String(s) => (*s).to_owned(),
            JavaKey::Long(n) => n.to_string(),
            JavaKey::Integer(n) => n.to_string(),
            JavaKey::Uuid(u) => u.hyphenated().to_string(),
        }
    }
}

/// The bytes `codec` encodes `key` to, or [`Error::InvalidArgument`] naming the codec and the
/// key's Java type when the crate cannot write that codec's form.
pub(crate) fn encode(codec: Codec, key: JavaKey<'_>) -> Result<Vec<u8>> {
    match codec {
        Codec::String | Codec::Long => Ok(key.text().into_bytes()),
        Codec::JsonJackson => json(key).map(String::into_bytes),
        Codec::Kryo5 => kryo5(key),
        Codec::Marshalling => Err(Error::InvalidArgument(format!(
            "{} cannot encode a {} key here: the crate does not write JBoss Marshalling's format; \
             encode the key as the Java service does and use EntryKey::encoded",
            codec.simple_name(),
            key.java_type()
        ))),
    }
}

/// `JsonJacksonCodec`'s JSON of `key`.
fn json(key: JavaKey<'_>) -> Result<String> {
    Ok(match key {
        JavaKey::String(s) => json_string(s),
        JavaKey::Integer(n) => n.to_string(),
        // Redisson's type resolver adds the class to a Long (so it is not read back as an
        // Integer)
        JavaKey::Long(n) => format!("[\"java.lang.Long\",{n}]"),
        JavaKey::Uuid(u) => {
            return Err(Error::InvalidArgument(format!(
                "JsonJacksonCodec cannot encode a UUID key here: Redisson writes it as \"{u}\" up \
                 to 3.52 and as [\"java.util.UUID\",\"{u}\"] in 4.7; pass the bytes of the Java \
                 service's version to EntryKey::encoded"
            )))
        }
    })
}

/// A JSON string as Jackson writes it: `"` and `\` escaped, the short escapes `\b \t \n \f \r`,
/// other control characters as `\u00XX`, a character beyond U+FFFF as its two UTF-16 surrogates
/// `\uXXXX\uXXXX` (upper-case hex), everything else as UTF-8.
fn json_string(s: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || (c as u32) > 0xFFFF => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04X}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Kryo's registration ids (`writeClassAndObject` writes id + 2) of the classes Redisson's
/// Kryo instance registers by default.
const KRYO_INTEGER: u8 = 2;
const KRYO_STRING: u8 = 3;
const KRYO_LONG: u8 = 9;
/// An unregistered class, written by name: 1, then the name's id in this graph (0, the first).
const KRYO_CLASS_NAME: [u8; 2] = [1, 0];

/// `Kryo5Codec`'s `writeClassAndObject(key)`.
fn kryo5(key: JavaKey<'_>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match key {
        JavaKey::String(s) => {
            out.push(KRYO_STRING);
            kryo_string(&mut out, s)?;
        }
        JavaKey::Long(n) => {
            out.push(KRYO_LONG);
            kryo_var_long(&mut out, ((n << 1) ^ (n >> 63)) as u64);
        }
        JavaKey::Integer(n) => {
            out.push(KRYO_INTEGER);
            kryo_var_int(&mut out, ((n << 1) ^ (n >> 31)) as u32);
        }
        JavaKey::Uuid(u) => {
            out.extend_from_slice(&KRYO_CLASS_NAME);
            kryo_string(&mut out, "java.util.UUID")?;
            // Kryo's UUIDSerializer: the most, then the least significant bits, little-endian
            let (most, least) = u.as_u64_pair();
            out.extend_from_slice(&most.to_le_bytes());
            out.extend_from_slice(&least.to_le_bytes());
        }
    }
    Ok(out)
}

/// Kryo's `writeString`: 2 to 32 ASCII characters as themselves with the last byte's high bit
/// set; otherwise the UTF-16 length + 1 as a flagged varint, then each UTF-16 unit in 1, 2 or 3
/// bytes (a character beyond U+FFFF is two 3-byte surrogates, and U+0000 is one zero byte).
fn kryo_string(out: &mut Vec<u8>, s: &str) -> Result<()> {
    let units = s.encode_utf16().count();
    if units > 1 && units <= 32 && s.is_ascii() {
        out.extend_from_slice(s.as_bytes());
        if let Some(last) = out.last_mut() {
            *last |= 0x80;
        }
        return Ok(());
    }
    let length = u32::try_from(units + 1).map_err(|_| {
        Error::InvalidArgument(format!(
            "a key of {units} UTF-16 units is longer than Kryo writes"
        ))
    })?;
    kryo_var_int_flag(out, length);
    for unit in s.encode_utf16() {
        match unit {
            0..=0x7F => out.push(unit as u8),
            0x80..=0x7FF => out.extend_from_slice(&[0xC0 | (unit >> 6) as u8, 0x80 | (unit & 0x3F) as u8]),
            _ => out.extend_from_slice(&[
                0xE0 | (unit >> 12) as u8,
                0x80 | ((unit >> 6) & 0x3F) as u8,
                0x80 | (unit & 0x3F) as u8,
            ]),
        }
    }
    Ok(())
}

/// Kryo's `writeVarIntFlag(true, value, true)`: the first byte holds the flag (0x80), a
/// continuation bit (0x40) and the low 6 bits; the rest follows as a plain varint.
fn kryo_var_int_flag(out: &mut Vec<u8>, value: u32) {
    let first = 0x80 | (value & 0x3F) as u8;
    let rest = value >> 6;
    if rest == 0 {
        out.push(first);
    } else {
        out.push(first | 0x40);
        kryo_var_int(out, rest);
    }
}

/// A varint: 7 bits a byte, low bits first, 0x80 on every byte but the last.
fn kryo_var_int(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value & 0x7F) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Kryo's long varint: as [`kryo_var_int`] for up to 8 bytes, then a 9th byte with the last 8
/// bits whole.
fn kryo_var_long(out: &mut Vec<u8>, mut value: u64) {
    for _ in 0..8 {
        if value < 0x80 {
            out.push(value as u8);
            return;
        }
        out.push((value & 0x7F) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn enc(codec: Codec, key: JavaKey<'_>) -> String {
        hex(&encode(codec, key).expect("encodable"))
    }

    const UUID: &str = "123e4567-e89b-12d3-a456-426614174000";

    /// The bytes of Redisson's encoders (`codec.getMapKeyEncoder().encode(key)`, printed by the
    /// harness' `mapEntryName`; the same in 4.7.0, 3.52.0, 3.24.3 and, but for Kryo's UUID,
    /// 3.17.7).
    #[test]
    fn string_and_long_codecs_write_to_string() {
        let u = uuid::Uuid::parse_str(UUID).expect("uuid");
        for codec in [Codec::String, Codec::Long] {
            assert_eq!(enc(codec, JavaKey::String("é")), "c3a9");
            assert_eq!(enc(codec, JavaKey::String("")), "");
            assert_eq!(enc(codec, JavaKey::Long(-1)), "2d31");
            assert_eq!(enc(codec, JavaKey::Integer(300)), "333030");
            assert_eq!(enc(codec, JavaKey::Uuid(u)), hex(UUID.as_bytes()), "{codec:?}");
        }
        assert_eq!(enc(Codec::String, JavaKey::String("\u{1F600}")), "f09f9880");
    }

    #[test]
    fn json_jackson() {
        let u = uuid::Uuid::parse_str(UUID).expect("uuid");
        let text = |k| String::from_utf8(encode(Codec::JsonJackson, k).expect("json")).expect("utf-8");
        assert_eq!(text(JavaKey::String("k")), "\"k\"");
        assert_eq!(text(JavaKey::String("")), "\"\"");
        assert_eq!(text(JavaKey::String("a\"b\\c\u{1}")), "\"a\\\"b\\\\c\\u0001\"");
        assert_eq!(
            enc(
                Codec::JsonJackson,
                JavaKey::String("\u{8}\t\n\u{c}\r\u{1f}\u{7f}/\u{2028}")
            ),
            "225c625c745c6e5c665c725c75303031467f2fe280a822"
        );
        assert_eq!(
            enc(Codec::JsonJackson, JavaKey::String("\u{1F600}")),
            "225c75443833445c754445303022"
        );
        assert_eq!(
            enc(Codec::JsonJackson, JavaKey::String("\0é")),
            "225c7530303030c3a922"
        );
        assert_eq!(
            enc(Codec::JsonJackson, JavaKey::String("\u{80}\u{9f}\u{feff}")),
            "22c280c29fefbbbf22"
        );
        assert_eq!(text(JavaKey::Long(42)), "[\"java.lang.Long\",42]");
        assert_eq!(
            text(JavaKey::Long(i64::MIN)),
            "[\"java.lang.Long\",-9223372036854775808]"
        );
        assert_eq!(text(JavaKey::Integer(-5)), "-5");
        // Redisson 3.52.0 and older write "…", 4.7.0 ["java.util.UUID","…"]: refused
        let e = encode(Codec::JsonJackson, JavaKey::Uuid(u)).expect_err("refused");
        assert!(
            e.to_string().contains("JsonJacksonCodec") && e.to_string().contains("UUID"),
            "{e}"
        );
    }

    #[test]
    fn kryo5_strings() {
        let k = |s: &str| enc(Codec::Kryo5, JavaKey::String(s));
        assert_eq!(k("k"), "03826b");
        assert_eq!(k(""), "0381");
        assert_eq!(k("ab"), "0361e2");
        assert_eq!(k("é"), "0382c3a9");
        assert_eq!(k("éé"), "0383c3a9c3a9");
        assert_eq!(k("order:42"), "036f726465723a34b2");
        assert_eq!(k("\u{1F600}"), "0383eda0bdedb880");
        assert_eq!(k("a\u{1F600}"), "038461eda0bdedb880");
        assert_eq!(k("\0a"), "0300e1");
        assert_eq!(k("a\0"), "036180");
        assert_eq!(k("\0é"), "038300c3a9");
        assert_eq!(k("\u{800}"), "0382e0a080");
        assert_eq!(k("ab\u{7f}"), "036162ff");
        // the ASCII form ends at 32 characters; the length varint grows at 63 and 8191
        let a = |n| "a".repeat(n);
        assert_eq!(k(&a(32)), format!("03{}e1", "61".repeat(31)));
        assert_eq!(k(&a(33)), format!("03a2{}", "61".repeat(33)));
        assert_eq!(k(&a(63)), format!("03c001{}", "61".repeat(63)));
        assert_eq!(&k(&a(200))[..8], "03c90361");
        let e = "é".repeat(8191);
        assert_eq!(&k(&e)[..12], "03c08001c3a9");
    }

    #[test]
    fn kryo5_numbers_and_uuids() {
        let k = |key| enc(Codec::Kryo5, key);
        assert_eq!(k(JavaKey::Long(42)), "0954");
        assert_eq!(k(JavaKey::Long(-1)), "0901");
        assert_eq!(k(JavaKey::Long(0)), "0900");
        assert_eq!(k(JavaKey::Long(300)), "09d804");
        assert_eq!(k(JavaKey::Long(i64::MIN)), "09ffffffffffffffffff");
        assert_eq!(k(JavaKey::Long(i64::MAX)), "09feffffffffffffffff");
        assert_eq!(k(JavaKey::Integer(42)), "0254");
        assert_eq!(k(JavaKey::Integer(300)), "02d804");
        assert_eq!(k(JavaKey::Integer(i32::MIN)), "02ffffffff0f");
        let u = uuid::Uuid::parse_str(UUID).expect("uuid");
        assert_eq!(
            k(JavaKey::Uuid(u)),
            "01006a6176612e7574696c2e555549c4d3129be867453e1200401714664256a4"
        );
        assert_eq!(
            k(JavaKey::Uuid(uuid::Uuid::nil())),
            "01006a6176612e7574696c2e555549c400000000000000000000000000000000"
        );
    }

    #[test]
    fn marshalling_is_refused_naming_codec_and_type() {
        let e = encode(Codec::Marshalling, JavaKey::Long(1)).expect_err("refused");
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        assert!(
            text.contains("MarshallingCodec") && text.contains("Long"),
            "{text}"
        );
    }
}
