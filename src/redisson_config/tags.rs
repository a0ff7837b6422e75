//! Redisson's class tags: rewriting `!<class>` / `!!class` to local tags before parsing,
//! reading the class a value names, and the default classes that are accepted.

use serde_norway::Value;

use super::values::{bad, class_of, untagged};
use crate::error::Result;

/// Redisson's own classes for the class-valued settings: the only classes accepted for them
/// (any other class is Java code that cannot run here).
pub(super) const DEFAULT_NAME_MAPPER: &str = "org.redisson.config.DefaultNameMapper";
pub(super) const DEFAULT_COMMAND_MAPPER: &str = "org.redisson.config.DefaultCommandMapper";
pub(super) const DEFAULT_CREDENTIALS: &str = "org.redisson.client.DefaultCredentialsResolver";
pub(super) const DEFAULT_NAT_MAPPER: &str = "org.redisson.config.DefaultNatMapper";

/// A class-valued setting that may only be Redisson's default class.
pub(super) fn default_class_only(key: &str, v: &Value, default: &str) -> Result<()> {
    if matches!(untagged(v), Value::Null) {
        return Ok(());
    }
    match class_of(v) {
        Some(c) if c == default => Ok(()),
        Some(c) => Err(bad(
            key,
            format!("custom class `{c}` cannot be honoured in Rust (only {default})"),
        )),
        None => Err(bad(key, format!("expected a class tag, e.g. !<{default}> {{}}"))),
    }
}

/// Rewrites Redisson's class tags `!<a.b.C>` and SnakeYAML's `!!a.b.C` to local tags `!a.b.C`,
/// which the parser keeps on the value (core tags like `!!str` have no dot and stay).
pub(super) fn untag_classes(text: &str) -> String {
    let is_class = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('!') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        if let Some(inner) = tail.strip_prefix("!<") {
            let n = inner.find(|c: char| !is_class(c)).unwrap_or(inner.len());
            if n > 0 && inner[n..].starts_with('>') {
                out.push('!');
                out.push_str(&inner[..n]);
                rest = &inner[n + 1..];
                continue;
            }
        } else if let Some(inner) = tail.strip_prefix("!!") {
            let n = inner.find(|c: char| !is_class(c)).unwrap_or(inner.len());
            if inner[..n].contains('.') {
                out.push('!');
                out.push_str(&inner[..n]);
                rest = &inner[n..];
                continue;
            }
        }
        out.push('!');
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}
