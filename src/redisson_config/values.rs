//! Reading typed values out of the parsed document: integers, booleans, strings, address
//! lists, millisecond durations and Redisson's ISO-8601 `retryDelay`, each failure an
//! [`Error::InvalidArgument`] naming the key.

use std::time::Duration;

use serde_norway::Value;

use crate::config::MAX_MS;
use crate::error::{Error, Result};

/// The error for a refused value: [`Error::InvalidArgument`] naming the key.
pub(super) fn bad(key: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("redisson config `{key}`: {what}"))
}

/// A mapping's entries with string keys.
pub(super) fn entries<'v>(key: &str, v: &'v Value) -> Result<Vec<(&'v str, &'v Value)>> {
    let map = match untagged(v) {
        Value::Mapping(m) => m,
        Value::Null => return Ok(Vec::new()),
        _ => return Err(bad(key, "expected a mapping")),
    };
    map.iter()
        .map(|(k, v)| match k {
            Value::String(s) => Ok((s.as_str(), v)),
            other => Err(bad(key, format!("expected string keys, got {other:?}"))),
        })
        .collect()
}

pub(super) fn integer(key: &str, v: &Value) -> Result<i64> {
    match untagged(v) {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| bad(key, format!("expected an integer, got {n}"))),
        Value::String(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| bad(key, format!("expected an integer, got `{s}`"))),
        other => Err(bad(key, format!("expected an integer, got {other:?}"))),
    }
}

pub(super) fn boolean(key: &str, v: &Value) -> Result<bool> {
    match untagged(v) {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        other => Err(bad(key, format!("expected true or false, got {other:?}"))),
    }
}

pub(super) fn string(key: &str, v: &Value) -> Result<Option<String>> {
    match untagged(v) {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Number(n) => Ok(Some(n.to_string())),
        other => Err(bad(key, format!("expected a string, got {other:?}"))),
    }
}

pub(super) fn millis(key: &str, v: &Value) -> Result<Duration> {
    let ms = integer(key, v)?;
    if ms < 1 || ms as u64 > MAX_MS {
        return Err(bad(key, format!("must be between 1 and {MAX_MS} ms, got {ms}")));
    }
    Ok(Duration::from_millis(ms as u64))
}

pub(super) fn strings(key: &str, v: &Value) -> Result<Vec<String>> {
    match untagged(v) {
        Value::Sequence(items) => items
            .iter()
            .map(|i| string(key, i)?.ok_or_else(|| bad(key, "empty address")))
            .collect(),
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Null => Ok(Vec::new()),
        other => Err(bad(key, format!("expected a list of addresses, got {other:?}"))),
    }
}

/// Redisson's `retryDelay` (3.48+): a tagged `DelayStrategy` whose durations are ISO-8601.
pub(super) fn delay(key: &str, v: &Value) -> Result<Duration> {
    let class = class_of(v).unwrap_or_default();
    let fields = entries(key, v)?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let pick = if class.ends_with("ConstantDelay") {
        "delay"
    } else {
        "maxDelay"
    };
    let raw = match field(pick) {
        Some(raw) => raw,
        // Redisson's defaults for an empty mapping
        None if fields.is_empty() && class.ends_with("ConstantDelay") => {
            return Ok(Duration::from_millis(100))
        }
        None if fields.is_empty() => return Ok(Duration::from_secs(1)),
        None => return Err(bad(key, format!("missing `{pick}`"))),
    };
    let text = string(key, raw)?.unwrap_or_default();
    let d = iso_duration(&text).ok_or_else(|| {
        bad(
            key,
            format!("expected an ISO-8601 duration like PT1.5S, got `{text}`"),
        )
    })?;
    if d < Duration::from_millis(1) || d > crate::config::MAX_DURATION {
        return Err(bad(key, format!("{d:?} is out of range")));
    }
    Ok(d)
}

/// `PT[nH][nM][n[.n]S]` (what Java's `Duration.toString()` writes), optionally `PnD...`.
pub(super) fn iso_duration(s: &str) -> Option<Duration> {
    let s = s.trim().to_ascii_uppercase();
    let rest = s.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, t),
        None => (rest, ""),
    };
    let mut total = 0f64;
    if !days.is_empty() {
        total += days.strip_suffix('D')?.parse::<f64>().ok()? * 86_400.0;
    }
    let mut num = String::new();
    let mut seen = false;
    for c in time.chars() {
        match c {
            '0'..='9' | '.' | '-' => num.push(c),
            'H' | 'M' | 'S' => {
                let n: f64 = num.parse().ok()?;
                num.clear();
                seen = true;
                total += n * match c {
                    'H' => 3600.0,
                    'M' => 60.0,
                    _ => 1.0,
                };
            }
            _ => return None,
        }
    }
    if !num.is_empty() || (!seen && days.is_empty()) || !total.is_finite() || total < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// The value under its tags (a tagged value's content, however deeply tagged).
pub(super) fn untagged(v: &Value) -> &Value {
    match v {
        Value::Tagged(t) => untagged(&t.value),
        other => other,
    }
}

/// The Java class a value names: its tag (`!<class>`), or a `class` field (JSON form).
pub(super) fn class_of(v: &Value) -> Option<String> {
    match v {
        Value::Tagged(t) => Some(t.tag.to_string().trim_start_matches('!').to_owned()),
        Value::Mapping(m) => m.get("class").and_then(Value::as_str).map(str::to_owned),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}
