//! What a lock kind or synchronizer keeps in Redis: its keys, their types, the commands its
//! scripts run on each, and its channels. Each declares its [`Layout`] next to its requests; the
//! registry of kinds (`kinds::LAYOUTS`) and the synchronizers' list
//! (`inspect::synchronizer_layouts`) are what inspection, force-unlock checks and the CLI's ACL
//! probes read, so no key pattern or command list is written twice. Unit tests hold every
//! layout to the scripts it names: the commands declared are exactly those the scripts send.

use std::collections::BTreeSet;

use crate::script::Lua;

/// One key a kind's requests name: the lock's own hash, or a key beside it.
#[derive(Debug)]
pub struct KeySpec {
    role: &'static str,
    name: fn(&str, &str) -> String,
    redis_type: Option<&'static str>,
    per_request: bool,
    commands: &'static [&'static str],
    client_commands: &'static [&'static str],
}

impl KeySpec {
    /// Declares a key: `name(lock key, owner field or request id)`, the type it has when it
    /// exists (`None`: a name the scripts build other keys from, never a key of its own),
    /// whether its name depends on the owner or the request, and the commands the scripts run
    /// on it.
    pub(crate) const fn new(
        role: &'static str,
        name: fn(&str, &str) -> String,
        redis_type: Option<&'static str>,
        per_request: bool,
        commands: &'static [&'static str],
    ) -> KeySpec {
        KeySpec {
            role,
            name,
            redis_type,
            per_request,
            commands,
            client_commands: &[],
        }
    }

    /// The same key, on which the client also sends `commands` itself, outside the scripts
    /// (reads such as `PTTL`, the latch janitor's `DEL`).
    pub(crate) const fn with_client_commands(self, commands: &'static [&'static str]) -> KeySpec {
        KeySpec {
            client_commands: commands,
            ..self
        }
    }

    /// What the key is for (`lock`, `attempt latch`, `fencing token`, `wait queue`, ...).
    pub fn role(&self) -> &'static str {
        self.role
    }

    /// Its name for the lock `key`; `field` is the owner's hash field (or a request id, for
    /// keys that are [`per_request`](Self::per_request)).
    ///
    /// ```
    /// let fenced = redisson_lock::inspect::layouts().iter().find(|l| l.kind() == "fenced").unwrap();
    /// let token = fenced.keys().iter().find(|k| k.role() == "fencing token").unwrap();
    /// assert_eq!(token.name("order:42", ""), "redisson_lock_token:{order:42}");
    /// ```
    pub fn name(&self, key: &str, field: &str) -> String {
        (self.name)(key, field)
    }

    /// The Redis type (`TYPE` reply) the key has when it exists; `None` for a name the scripts
    /// only build other keys from (the read lock's timeout-key prefixes).
    pub fn redis_type(&self) -> Option<&'static str> {
        self.redis_type
    }

    /// Whether the name depends on the owner field or the request (one per owner or request)
    /// rather than on the lock alone.
    pub fn per_request(&self) -> bool {
        self.per_request
    }

    /// The commands the kind's scripts run on this key (lower case).
    pub fn commands(&self) -> &'static [&'static str] {
        self.commands
    }

    /// The commands the client sends on this key itself, outside the scripts (lower case).
    pub fn client_commands(&self) -> &'static [&'static str] {
        self.client_commands
    }
}

/// One pub/sub channel of a kind: waiters subscribe to it, its unlock scripts publish to it.
#[derive(Debug)]
pub struct ChannelSpec {
    role: &'static str,
    name: fn(&str, &str) -> String,
    published: bool,
}

impl ChannelSpec {
    /// Declares a channel: `name(lock key, owner field)`, and whether the kind's scripts
    /// publish to it (`PUBLISH` / `SPUBLISH`).
    pub(crate) const fn new(
        role: &'static str,
        name: fn(&str, &str) -> String,
        published: bool,
    ) -> ChannelSpec {
        ChannelSpec {
            role,
            name,
            published,
        }
    }

    /// What the channel is for.
    pub fn role(&self) -> &'static str {
        self.role
    }

    /// Its name for the lock `key` and a waiter's owner `field`.
    pub fn name(&self, key: &str, field: &str) -> String {
        (self.name)(key, field)
    }

    /// Whether the kind's scripts publish to it (otherwise only the base channel is named in
    /// requests and waiters listen to it).
    pub fn published(&self) -> bool {
        self.published
    }
}

/// Everything one lock kind (or synchronizer) keeps in Redis and every command it sends there.
///
/// ```
/// for layout in redisson_lock::inspect::layouts() {
///     let lock = &layout.keys()[0];
///     assert_eq!(lock.role(), "lock");
///     assert_eq!(lock.name("order:42", ""), "order:42");
///     println!("{}: {:?}", layout.kind(), layout.commands());
/// }
/// ```
#[derive(Debug)]
pub struct Layout {
    kind: &'static str,
    redisson: &'static str,
    keys: &'static [KeySpec],
    channels: &'static [ChannelSpec],
    scripts: &'static [&'static Lua],
}

impl Layout {
    /// Declares a kind's layout; its first key is the lock's own hash (a synchronizer's count).
    pub(crate) const fn new(
        kind: &'static str,
        redisson: &'static str,
        keys: &'static [KeySpec],
        channels: &'static [ChannelSpec],
        scripts: &'static [&'static Lua],
    ) -> Layout {
        Layout {
            kind,
            redisson,
            keys,
            channels,
            scripts,
        }
    }

    /// The kind's short name, as [`AnyLock::kind`](crate::AnyLock::kind) says it (`latch`,
    /// `semaphore`, `permit-expirable semaphore` for the synchronizers).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The Redisson method that opens it (`getLock`, `getFairLock`, ..., `getSemaphore`).
    pub fn redisson(&self) -> &'static str {
        self.redisson
    }

    /// Its keys, the lock's own hash first.
    pub fn keys(&self) -> &'static [KeySpec] {
        self.keys
    }

    /// Its channels (none for the spin lock, whose waiters poll).
    pub fn channels(&self) -> &'static [ChannelSpec] {
        self.channels
    }

    /// Every command its scripts send, read from the scripts themselves (lower case, sorted).
    pub fn commands(&self) -> BTreeSet<&'static str> {
        self.scripts
            .iter()
            .flat_map(|s| script_commands(s.source()))
            .collect()
    }

    /// Every command its keys declare, with `publish` and `spublish` where a channel is
    /// published to: what [`commands`](Self::commands) must equal.
    #[cfg(test)]
    pub(crate) fn declared_commands(&self) -> BTreeSet<&'static str> {
        let mut declared: BTreeSet<&'static str> = self
            .keys
            .iter()
            .flat_map(|k| k.commands().iter().copied())
            .collect();
        if self.channels.iter().any(|c| c.published()) {
            declared.extend(["publish", "spublish"]);
        }
        declared
    }
}

/// The commands a script calls by name (`redis.call('cmd', ...)`, `redis.pcall("cmd", ...)`),
/// lower-cased; a call whose command is a variable is not listed (its name is an argument).
pub(crate) fn script_commands(source: &'static str) -> impl Iterator<Item = &'static str> {
    ["redis.call(", "redis.pcall("].into_iter().flat_map(move |call| {
        source.match_indices(call).filter_map(move |(at, _)| {
            let rest = source[at + call.len()..].trim_start();
            let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
            let body = &rest[1..];
            let end = body.find(quote)?;
            Some(&body[..end])
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_from_calls_with_a_literal_name() {
        let src = "local x = redis.call('hget', KEYS[1], 'f')\nredis.pcall(\"PEXPIRE\", k, 1)\nredis.call(mode, ch, m)";
        let got: Vec<&str> = script_commands(src).collect();
        assert_eq!(got, vec!["hget", "PEXPIRE"]);
    }
}
