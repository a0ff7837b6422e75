//! The command line's numbers, checked while the command line is parsed (before anything
//! connects): one value parser for every duration argument ([`DurationArg`]) and one for every
//! number argument ([`NumberArg`]).
//!
//! A rejected value is a clap `ValueValidation` error ("invalid value '0s' for '--interval
//! <DUR>': ..."), which `main` prints as one line (or one JSON object with `--json`) and exit
//! code 2. Each reason says what to give instead, with an example of the argument itself.
//!
//! The arguments that use these parsers also take `allow_hyphen_values`, so that `--for -1s`
//! reaches the parser ("must not be negative") instead of being read as the flags `-1 -s`.

use std::ffi::OsStr;
use std::time::Duration;

use clap::builder::TypedValueParser;
use redisson_lock::MAX_DURATION;

/// The shortest `watch --interval`: each sample is a round of commands to Redis.
pub(crate) const MIN_WATCH_INTERVAL: Duration = Duration::from_millis(10);

/// `--NAME` of a clap argument, for the examples in error messages.
fn flag(arg: Option<&clap::Arg>) -> String {
    match arg.and_then(|a| a.get_long()) {
        Some(long) => format!("--{long}"),
        None => arg.map(|a| a.get_id().to_string()).unwrap_or_default(),
    }
}

/// A duration argument: `500ms`, `2s`, `1m`, `1h 30m`... (humantime), from `min` up to
/// [`MAX_DURATION`], the longest duration the library sends to Redis. A bare number, a negative
/// value and anything above the maximum are rejected with a reason and an example.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DurationArg {
    /// The shortest value accepted; `Duration::ZERO` when zero means something (`--wait 0s`:
    /// try once).
    min: Duration,
    /// A sensible value, shown in messages (`--lease 30s`).
    example: &'static str,
}

impl DurationArg {
    /// Any duration from zero up to [`MAX_DURATION`].
    pub(crate) const fn from_zero(example: &'static str) -> DurationArg {
        DurationArg {
            min: Duration::ZERO,
            example,
        }
    }

    /// A duration from `min` (more than zero) up to [`MAX_DURATION`].
    pub(crate) const fn at_least(min: Duration, example: &'static str) -> DurationArg {
        DurationArg { min, example }
    }

    /// The value of `flag` (its `--name`, for the example), or why it is rejected.
    pub(crate) fn check(&self, flag: &str, s: &str) -> Result<Duration, String> {
        let example = format!("e.g. {flag} {}", self.example);
        let t = s.trim();
        if t.is_empty() {
            return Err(format!(
                "an empty value is not a duration: write one like 500ms, 2s or 1m ({example})"
            ));
        }
        if t.starts_with('-') {
            return Err(format!("must not be negative ({example})"));
        }
        let d = match humantime::parse_duration(t) {
            Ok(d) => d,
            Err(humantime::DurationError::NumberOverflow) => return Err(self.too_long(&example)),
            Err(e) => {
                return Err(format!(
                    "`{t}` is not a duration like 500ms, 2s or 1m ({e}; {example})"
                ))
            }
        };
        if d < self.min {
            let min = humantime::format_duration(self.min);
            return Err(if d.is_zero() {
                format!("must not be zero: give at least {min} ({example})")
            } else {
                format!("must be at least {min} ({example})")
            });
        }
        if d > MAX_DURATION {
            return Err(self.too_long(&example));
        }
        Ok(d)
    }

    fn too_long(&self, example: &str) -> String {
        format!(
            "must be at most {}s (about 31.7 years, redisson_lock::MAX_DURATION) ({example})",
            MAX_DURATION.as_secs()
        )
    }
}

impl TypedValueParser for DurationArg {
    type Value = Duration;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Duration, clap::Error> {
        // clap's own `Fn(&str)` parser wraps the reason as "invalid value '..' for '--arg <DUR>'"
        let (this, flag) = (*self, flag(arg));
        let check = move |s: &str| this.check(&flag, s);
        check.parse_ref(cmd, arg, value)
    }
}

/// A whole-number argument (an id, a count) from `min` to `max`: a negative value, a fraction,
/// zero where it means nothing (`min` 1) and absurd values are rejected with a reason and an
/// example.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NumberArg {
    min: u64,
    max: u64,
    /// Why `max` is the limit, for the message.
    max_why: &'static str,
    example: &'static str,
}

impl NumberArg {
    /// `--owner`: a Java thread id is a positive `long`; Rust owner ids are below 2^63 too.
    pub(crate) const OWNER: NumberArg = NumberArg {
        min: 0,
        max: i64::MAX as u64,
        max_why: "Java's Long.MAX_VALUE: an owner id is a thread id",
        example: "77",
    };

    /// `raise-token`'s floor: one below `i64::MAX`, so that a next token exists (the scripts
    /// compare tokens as the decimal strings Redis keeps, exactly over the whole range).
    pub(crate) const TOKEN_FLOOR: NumberArg = NumberArg {
        min: 0,
        max: i64::MAX as u64 - 1,
        max_why: "i64::MAX - 1: the counter's next token must exist",
        example: "1234",
    };

    /// The value of `flag`, or why it is rejected.
    pub(crate) fn check(&self, flag: &str, s: &str) -> Result<u64, String> {
        let example = format!("e.g. {flag} {}", self.example);
        let t = s.trim();
        if t.starts_with('-') {
            return Err(format!("must not be negative ({example})"));
        }
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("`{t}` is not a whole number ({example})"));
        }
        // all digits: the only way not to parse is to be too large
        let n = match t.parse::<u64>() {
            Ok(n) if n <= self.max => n,
            _ => {
                return Err(format!(
                    "must be at most {} ({}) ({example})",
                    self.max, self.max_why
                ))
            }
        };
        if n < self.min {
            return Err(if n == 0 {
                format!("must not be zero: give at least {} ({example})", self.min)
            } else {
                format!("must be at least {} ({example})", self.min)
            });
        }
        Ok(n)
    }
}

impl TypedValueParser for NumberArg {
    type Value = u64;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<u64, clap::Error> {
        let (this, flag) = (*self, flag(arg));
        let check = move |s: &str| this.check(&flag, s);
        check.parse_ref(cmd, arg, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let lease = DurationArg::at_least(Duration::from_millis(1), "30s");
        assert_eq!(lease.check("--lease", "1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(lease.check("--lease", " 500ms "), Ok(Duration::from_millis(500)));
        assert_eq!(lease.check("--lease", "1000000000s"), Ok(MAX_DURATION));
        for (bad, why) in [
            ("0s", "must not be zero: give at least 1ms (e.g. --lease 30s)"),
            ("500us", "must be at least 1ms"),
            ("-1s", "must not be negative (e.g. --lease 30s)"),
            ("-0s", "must not be negative"),
            ("99999999999d", "must be at most 1000000000s"),
            ("1000000001s", "must be at most 1000000000s"),
            ("99999999999999999999999s", "must be at most 1000000000s"),
            ("abc", "`abc` is not a duration"),
            ("5", "`5` is not a duration"),
            ("", "an empty value is not a duration"),
        ] {
            let e = lease.check("--lease", bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(e.contains("--lease 30s"), "{bad:?}: {e}");
        }

        let wait = DurationArg::from_zero("2s");
        assert_eq!(wait.check("--wait", "0s"), Ok(Duration::ZERO));
        assert!(wait.check("--wait", "-1s").is_err());

        let interval = DurationArg::at_least(MIN_WATCH_INTERVAL, "500ms");
        assert!(interval
            .check("--interval", "1ms")
            .unwrap_err()
            .contains("at least 10ms"));
        assert_eq!(interval.check("--interval", "10ms"), Ok(MIN_WATCH_INTERVAL));
    }

    #[test]
    fn numbers() {
        let o = NumberArg::OWNER;
        assert_eq!(o.check("--owner", "0"), Ok(0));
        assert_eq!(o.check("--owner", "77"), Ok(77));
        assert_eq!(o.check("--owner", "9223372036854775807"), Ok(i64::MAX as u64));
        for (bad, why) in [
            ("-1", "must not be negative"),
            ("9223372036854775808", "must be at most 9223372036854775807"),
            ("99999999999999999999999", "must be at most 9223372036854775807"),
            ("abc", "`abc` is not a whole number"),
            ("1.5", "`1.5` is not a whole number"),
            ("+3", "`+3` is not a whole number"),
            ("", "is not a whole number"),
        ] {
            let e = o.check("--owner", bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
            assert!(e.contains("e.g. --owner 77"), "{bad:?}: {e}");
        }
        let count = NumberArg {
            min: 1,
            max: 1000,
            max_why: "test",
            example: "3",
        };
        assert!(count
            .check("--count", "0")
            .unwrap_err()
            .contains("must not be zero"));
    }
}
