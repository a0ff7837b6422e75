//! What the `acl` check knows: the probe table (every command the locks send, on a lock's keys and
//! channels), the self-check script, and how the server's answers become verdicts and the check's
//! message.

use redis::Value;
use redisson_lock::inspect::{self, Layout};

use super::Status;

/// Why the connected user could not check itself with the checker script.
pub(super) enum SelfCheck {
    /// These commands (of EVALSHA, SCRIPT LOAD) and EVAL are denied: no script can run.
    Denied(Vec<String>),
    /// The server cannot answer (Redis < 7.0, or the script failed).
    Unsupported(String),
}

#[derive(Debug)]
pub(super) enum Verdict {
    Allowed,
    /// The command itself.
    DeniedCommand,
    /// `key X` / `channel X`.
    DeniedTarget(String),
}

/// `SCRIPT LOAD` → `+script|load`, `EVALSHA` → `+evalsha`.
pub(super) fn rule_for(cmd: &str) -> String {
    format!("+{}", cmd.to_lowercase().replace(' ', "|"))
}

/// Asks `redis.acl_check_cmd` about each probe (ARGV: count, then that many words, repeated).
pub(super) const CHECKER: &str = r#"
if not redis.acl_check_cmd then return 'unsupported' end
local out, i = {}, 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  local args = {}
  for j = 1, n do args[j] = ARGV[i + j] end
  local ok, r = pcall(redis.acl_check_cmd, unpack(args))
  if not ok then
    out[#out + 1] = type(r) == 'table' and (r.err or 'error') or tostring(r)
  elseif r then
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
  i = i + n + 1
end
return out
"#;

/// One command the locks send, with realistic arguments.
pub(super) struct Probe {
    /// The rule that grants the command (`+hset`, `+script|load`).
    rule: String,
    pub(super) args: Vec<String>,
    /// The same command on the lock's own key (or its unlock channel, for pub/sub commands).
    alt: Vec<String>,
}

fn is_pubsub(cmd: &str) -> bool {
    matches!(
        cmd,
        "subscribe" | "unsubscribe" | "ssubscribe" | "sunsubscribe" | "publish" | "spublish"
    )
}

impl Probe {
    /// The key or channel it touches, when the server did not say which one it denied.
    fn targets(&self) -> String {
        match self.args.first().map(|c| c.to_lowercase()).as_deref() {
            Some("evalsha") => format!("key {}", self.args.get(3).map(String::as_str).unwrap_or_default()),
            Some(c) if is_pubsub(c) => {
                format!(
                    "channel {}",
                    self.args.get(1).map(String::as_str).unwrap_or_default()
                )
            }
            _ => format!("key {}", self.args.get(1).map(String::as_str).unwrap_or_default()),
        }
    }

    /// The verdict in ACL DRYRUN's reply about this probe.
    pub(super) fn dryrun_verdict(&self, reply: Value) -> Verdict {
        match reply {
            Value::Okay => Verdict::Allowed,
            Value::SimpleString(s) if s == "OK" => Verdict::Allowed,
            v => {
                let text = redis::from_redis_value_ref::<String>(&v).unwrap_or_else(|_| format!("{v:?}"));
                if text.contains("to run the") {
                    Verdict::DeniedCommand
                } else {
                    let target = denied_object(&text).unwrap_or_else(|| self.targets());
                    Verdict::DeniedTarget(target)
                }
            }
        }
    }
}

/// `key X` / `channel X` from ACL DRYRUN's "... no permissions to access the 'X' key".
fn denied_object(msg: &str) -> Option<String> {
    let start = msg.find("access the '")? + "access the '".len();
    let end = msg.rfind('\'')?;
    let name = msg.get(start..end)?;
    let kind = msg.get(end + 1..)?.split_whitespace().next()?;
    Some(format!("{kind} {name}"))
}

/// What the `acl` check probes: names, each with the layouts of what is used under it.
pub(super) struct Targets {
    /// The subject of the check's message (`lock `x``, `the entry objects of map `m``).
    pub(super) subject: String,
    names: Vec<(String, Vec<&'static Layout>)>,
}

/// The six objects of a map entry: their name suffix, and the layouts of what each is.
const ENTRY_OBJECTS: [(&str, &[&str]); 6] = [
    ("lock", &["lock"]),
    ("fairlock", &["fair"]),
    ("rw_lock", &["read", "write"]),
    ("semaphore", &["semaphore"]),
    ("permitexpirablesemaphore", &["permit-expirable semaphore"]),
    ("countdownlatch", &["latch"]),
];

impl Targets {
    /// Every lock kind on `name`, and the synchronizers and the grouped lock too when asked.
    pub(super) fn name(name: &str, synchronizers: bool, group: bool) -> Targets {
        let mut layouts: Vec<&'static Layout> = inspect::layouts().to_vec();
        if synchronizers {
            layouts.extend(inspect::synchronizer_layouts());
        }
        if group {
            layouts.push(inspect::group_layout());
        }
        Targets {
            subject: format!("lock `{name}`"),
            names: vec![(name.to_owned(), layouts)],
        }
    }

    /// The six objects of an entry of `map` (Redisson's `{map}:<key hash>:<object>`; any key's
    /// hash: ACL rules cannot tell keys apart by their hash).
    pub(super) fn map_entry(map: &str) -> Targets {
        let base = if map.contains('{') {
            format!("{map}:AAAAAAAAAAAAAAAAAAAAAA")
        } else {
            format!("{{{map}}}:AAAAAAAAAAAAAAAAAAAAAA")
        };
        let all: Vec<&'static Layout> = inspect::layouts()
            .iter()
            .chain(inspect::synchronizer_layouts())
            .copied()
            .collect();
        let names = ENTRY_OBJECTS
            .iter()
            .map(|(suffix, kinds)| {
                let layouts = all
                    .iter()
                    .filter(|l| kinds.contains(&l.kind()))
                    .copied()
                    .collect();
                (format!("{base}:{suffix}"), layouts)
            })
            .collect();
        Targets {
            subject: format!("the objects of an entry of map `{map}` ({base}:<object>)"),
            names,
        }
    }
}

/// Every command the client and its scripts send on the targets' keys and channels: read from
/// the layouts of the lock kinds and synchronizers (`redisson_lock::inspect::layouts`,
/// `synchronizer_layouts`), so a new key or command is probed without a change here.
pub(super) fn probes(targets: &Targets, sharded: bool) -> Vec<Probe> {
    let mut out: Vec<Probe> = Vec::new();
    for (name, layouts) in &targets.names {
        for p in probes_of(name, layouts, sharded) {
            if !out.iter().any(|o| o.args == p.args) {
                out.push(p);
            }
        }
    }
    out
}

/// The probes of one name used as each of `layouts`.
fn probes_of(name: &str, layouts: &[&'static Layout], sharded: bool) -> Vec<Probe> {
    let field = "00000000-0000-4000-8000-000000000000:1";
    // a derived channel's probe on the name's own: its first channel (the lock's unlock
    // channel for the lock kinds)
    let own_ch = layouts
        .iter()
        .flat_map(|l| l.channels())
        .map(|c| c.name(name, field))
        .next()
        .unwrap_or_else(|| inspect::lock_channel(name));
    // each name once, in the layouts' order: (key, commands), channels, published channels
    let mut keys: Vec<(String, Vec<&'static str>)> = Vec::new();
    let mut channels: Vec<String> = Vec::new();
    let mut published: Vec<String> = Vec::new();
    for layout in layouts {
        for spec in layout.keys() {
            let key = spec.name(name, field);
            let i = match keys.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    keys.push((key, Vec::new()));
                    keys.len() - 1
                }
            };
            for cmd in spec.commands().iter().chain(spec.client_commands()) {
                if !keys[i].1.contains(cmd) {
                    keys[i].1.push(cmd);
                }
            }
        }
        for spec in layout.channels() {
            let ch = spec.name(name, field);
            if spec.published() && !published.contains(&ch) {
                published.push(ch.clone());
            }
            if !channels.contains(&ch) {
                channels.push(ch);
            }
        }
    }
    let derived: Vec<&String> = keys
        .iter()
        .map(|(k, _)| k)
        .chain(&channels)
        .filter(|k| *k != name)
        .collect();
    let mut out: Vec<Probe> = Vec::new();
    let mut add = |rule: &str, args: &[&str]| {
        let pubsub = is_pubsub(args[0]);
        let alt = args
            .iter()
            .map(|a| match derived.iter().any(|d| d.as_str() == *a) {
                true if pubsub => own_ch.clone(),
                true => name.to_owned(),
                false => a.to_string(),
            })
            .collect();
        out.push(Probe {
            rule: rule.to_owned(),
            args: args.iter().map(|a| a.to_string()).collect(),
            alt,
        })
    };
    // sent by the client
    add("+script|load", &["script", "load", "return 1"]);
    // the keys the scripts declare (EVALSHA checks them before the script runs)
    for (key, _) in &keys {
        add(
            "+evalsha",
            &["evalsha", "0000000000000000000000000000000000000000", "1", key],
        );
    }
    for ch in &channels {
        add("+subscribe", &["subscribe", ch]);
        add("+unsubscribe", &["unsubscribe", ch]);
    }
    if sharded {
        // the client's probe for sharded pub/sub (denied: it falls back to classic pub/sub,
        // which Redisson 3.22+ does not use in a cluster)
        add("+pubsub|shardnumsub", &["pubsub", "shardnumsub", "0"]);
        for ch in &channels {
            add("+ssubscribe", &["ssubscribe", ch]);
            add("+sunsubscribe", &["sunsubscribe", ch]);
        }
    }
    // what the scripts and the client run on each key, with arguments of the right shape
    for (key, cmds) in &keys {
        for cmd in cmds {
            let args = command_args(cmd, key, field);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            add(&format!("+{cmd}"), &args);
        }
    }
    // unlock messages
    for ch in &published {
        add("+publish", &["publish", ch, "0"]);
        if sharded {
            add("+spublish", &["spublish", ch, "0"]);
        }
    }
    out
}

/// `cmd` on `key` with arguments of a valid shape (ACL checks look at the key and the
/// command; the arity must still be right).
fn command_args(cmd: &str, key: &str, field: &str) -> Vec<String> {
    let rest: &[&str] = match cmd {
        "hexists" | "hget" | "hmget" | "hdel" | "zrem" | "zscore" | "rpush" => &[field],
        "hincrby" | "hset" => &[field, "1"],
        "zadd" | "zincrby" => &["1", field],
        "lrem" => &["0", field],
        "lindex" | "hscan" => &["0"],
        "lrange" | "zrange" => &["0", "-1"],
        "zcount" | "zrangebyscore" => &["-inf", "+inf"],
        "incrby" | "decrby" => &["1"],
        "pexpire" => &["30000"],
        "set" => &["1", "px", "30000"],
        _ => &[],
    };
    [cmd, key]
        .into_iter()
        .chain(rest.iter().copied())
        .map(str::to_owned)
        .collect()
}

/// The checker script's ARGV for `probes`.
pub(super) fn checker_argv(probes: &[Probe]) -> Vec<String> {
    // each probe, then each probe again on the lock's own key / unlock channel: denied
    // there too means the command is denied, else the key or channel is
    let mut argv: Vec<String> = Vec::new();
    for words in probes
        .iter()
        .map(|p| &p.args)
        .chain(probes.iter().map(|p| &p.alt))
    {
        argv.push(words.len().to_string());
        argv.extend(words.iter().cloned());
    }
    argv
}

/// The verdicts in the checker script's `reply` to `checker_argv(probes)`. `denied` holds the
/// commands (of EVALSHA, SCRIPT LOAD) this user may not run (the checker then ran through EVAL):
/// their probes are denied whatever the checker says.
pub(super) fn checker_verdicts(
    probes: &[Probe],
    reply: Value,
    denied: &[String],
) -> Result<Vec<Verdict>, SelfCheck> {
    let items = match reply {
        Value::Array(items) => items,
        Value::BulkString(b) if b == b"unsupported" => {
            return Err(SelfCheck::Unsupported(
                "redis.acl_check_cmd is missing in scripts (Redis < 7.0)".to_owned(),
            ))
        }
        other => {
            return Err(SelfCheck::Unsupported(format!(
                "the checker script replied {other:?}"
            )))
        }
    };
    if items.len() != 2 * probes.len() {
        return Err(SelfCheck::Unsupported(format!(
            "the checker script answered {} of {} probes",
            items.len(),
            2 * probes.len()
        )));
    }
    let mut allowed = Vec::with_capacity(items.len());
    for (i, words) in items.into_iter().zip(
        probes
            .iter()
            .map(|p| &p.args)
            .chain(probes.iter().map(|p| &p.alt)),
    ) {
        match i {
            Value::Int(n) => allowed.push(n == 1),
            other => {
                let text = redis::from_redis_value::<String>(other).unwrap_or_default();
                return Err(SelfCheck::Unsupported(format!(
                    "redis.acl_check_cmd failed on {}: {text}",
                    words.join(" ")
                )));
            }
        }
    }
    let (direct, on_lock) = allowed.split_at(probes.len());
    let mut verdicts: Vec<Verdict> = probes
        .iter()
        .zip(direct.iter().zip(on_lock))
        .map(|(p, (&direct, &on_lock))| match (direct, on_lock) {
            (true, _) => Verdict::Allowed,
            (false, true) => Verdict::DeniedTarget(p.targets()),
            (false, false) => Verdict::DeniedCommand,
        })
        .collect();
    // the checker ran through EVAL: the locks' EVALSHA / SCRIPT LOAD were denied
    if !denied.is_empty() {
        for (p, v) in probes.iter().zip(verdicts.iter_mut()) {
            if denied.iter().any(|d| rule_for(d) == p.rule) {
                *v = Verdict::DeniedCommand;
            }
        }
    }
    Ok(verdicts)
}

/// The `acl` check's verdict for `user` on `subject` (what was probed): one verdict per probe,
/// found with `method`.
pub(super) fn judge_acl(
    user: &str,
    subject: &str,
    method: &str,
    probes: &[Probe],
    verdicts: &[Verdict],
) -> (Status, String) {
    let mut missing_cmds: Vec<String> = Vec::new();
    // (key or channel, the commands denied on it)
    let mut denied_targets: Vec<(String, Vec<String>)> = Vec::new();
    for (p, v) in probes.iter().zip(verdicts) {
        let target = match v {
            Verdict::Allowed => continue,
            Verdict::DeniedCommand => {
                if !missing_cmds.contains(&p.rule) {
                    missing_cmds.push(p.rule.clone());
                }
                continue;
            }
            Verdict::DeniedTarget(t) => t.clone(),
        };
        let cmd = p.args[0].to_uppercase();
        match denied_targets.iter_mut().find(|(t, _)| *t == target) {
            Some((_, cmds)) if !cmds.contains(&cmd) => cmds.push(cmd),
            Some(_) => {}
            None => denied_targets.push((target, vec![cmd])),
        }
    }
    let denied_targets: Vec<String> = denied_targets
        .into_iter()
        .map(|(t, cmds)| format!("{t} ({})", cmds.join(" ")))
        .collect();
    if missing_cmds.is_empty() && denied_targets.is_empty() {
        return (
            Status::Ok,
            format!(
                "user `{user}` may run every command the locks send, on the keys and channels of {} ({} checks with {method})",
                subject,
                probes.len()
            ),
        );
    }
    let mut parts = Vec::new();
    if !missing_cmds.is_empty() {
        parts.push(format!("lacks {}", missing_cmds.join(" ")));
    }
    if !denied_targets.is_empty() {
        parts.push(format!("is denied {}", denied_targets.join(", ")));
    }
    (
        Status::Fail,
        format!(
            "user `{user}` {} for {} — grant them (see docs/operations.md, \"ACL rules for the locks\"; checked with {method})",
            parts.join("; "),
            subject
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names_follow_the_prefix_rule() {
        let p = probes(&Targets::name("lock:doctor", false, false), false);
        assert!(p
            .iter()
            .any(|p| p.args == ["publish", "redisson_lock__channel:{lock:doctor}", "0"]));
        assert!(p
            .iter()
            .any(|p| p.args[0] == "rpush" && p.args[1] == "redisson_lock_queue:{lock:doctor}"));
        assert!(!p.iter().any(|p| p.args[0] == "spublish"));
        assert_eq!(
            denied_object("This user has no permissions to access the 'redisson_lock_queue:{a}' key")
                .as_deref(),
            Some("key redisson_lock_queue:{a}")
        );
        assert_eq!(
            denied_object("This user has no permissions to access the 'x' channel").as_deref(),
            Some("channel x")
        );
        assert_eq!(
            denied_object("This user has no permissions to run the 'get' command"),
            None
        );
        // the grouped lock's own reads are probed only when asked
        let hmget = |p: &[Probe]| p.iter().any(|p| p.args[0] == "hmget" && p.args[1] == "g");
        assert!(!hmget(&probes(&Targets::name("g", true, false), false)));
        assert!(hmget(&probes(&Targets::name("g", false, true), false)));
        let p = probes(&Targets::name("a{x}", true, false), true);
        assert!(p.iter().any(|p| p.args == ["pubsub", "shardnumsub", "0"]));
        assert!(p
            .iter()
            .any(|p| p.args == ["spublish", "redisson_lock__channel:a{x}", "0"]));
    }
}
