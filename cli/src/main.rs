//! `redisson-lock`: inspect, list, hold, force-unlock and watch Redisson-compatible locks, raise a
//! fenced lock's token counter (and inspect, list and watch count-down latches and semaphores),
//! check a deployment (`doctor`), and print shell completions.
//!
//! Where it connects (`target`): one URL (a server, any node of a Redis Cluster, or a cluster
//! behind one address), a Sentinel-monitored master (`--sentinel ADDR --master NAME`) or a
//! Redisson config file (`--config`), over TLS with `rediss://` and the `--tls-*` options, with the
//! password from the environment (`REDISSON_LOCK_PASSWORD`, `REDIS_PASSWORD`) when the URL has
//! none.
//!
//! Exit codes ([`exit`]), the same in `--help`, the README and here: 0 success; 1 error (one line
//! on stderr; with `--json` one JSON object, see [`render::error_line`]), `doctor` included when
//! it cannot connect; 2 a rejected command line (clap's convention: a bad duration, an unknown
//! flag, options that do not go together), printed the same way; 3 `hold --wait` ran out
//! without the lock; 4 `doctor` found the deployment unsafe (a check failed); 5 `doctor` could
//! not check something (a check skipped because the server refused a command) and no check
//! failed; 130 interrupted (Ctrl-C) while waiting to acquire.

mod args;
mod cluster;
mod count;
mod doctor;
mod follow;
mod force_unlock;
mod hold;
mod list;
mod render;
mod semaphore;
mod target;
mod token;
mod watch;

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use args::{DurationArg, NumberArg};
use clap::{Args, Parser, Subcommand};
use redisson_lock::{AnyKind, Error};

/// What each exit code means ([`main`] maps every [`Outcome`] and error onto them).
pub(crate) mod exit {
    /// The command did what it was asked.
    pub(crate) const OK: u8 = 0;
    /// It failed: Redis unreachable or refusing, a key of another type, a lost hold...
    pub(crate) const ERROR: u8 = 1;
    /// The command line was rejected (clap's convention).
    pub(crate) const USAGE: u8 = 2;
    /// `hold --wait` ran out before the lock was free.
    pub(crate) const NOT_ACQUIRED: u8 = 3;
    /// `doctor`: a check failed.
    pub(crate) const UNSAFE: u8 = 4;
    /// `doctor`: a check could not be made (a command refused) and none failed.
    pub(crate) const UNCHECKED: u8 = 5;
    /// Ctrl-C or SIGTERM while `hold` was waiting (128 + SIGINT).
    pub(crate) const INTERRUPTED: u8 = 130;
}

/// The exit codes and the environment, after `--help` (and shorter after `-h`).
const AFTER_LONG_HELP: &str = "\
Exit codes:
  0    success
  1    error: Redis unreachable or refusing, a key of another type, a lost hold... (one line on
       stderr; with --json one JSON object {\"error\":{\"kind\",\"message\",\"argument\"}});
       doctor when it cannot connect
  2    usage: the command line was rejected (bad value, unknown flag, options that do not go
       together), printed the same way
  3    not acquired: hold --wait ran out while someone else held the lock
  4    unsafe: doctor found a check that failed
  5    could not check: doctor skipped a check because the server refused a command (CONFIG,
       INFO, ACL, CLUSTER, CLIENT...) and no check failed
  130  interrupted: Ctrl-C (or SIGTERM) while hold was waiting for the lock

Environment:
  REDIS_URL                the default of --url
  REDISSON_LOCK_PASSWORD   the password when the URL has none (also a Sentinel master's); else
  REDIS_PASSWORD           this one. Keeps the password off the command line; never printed
  REDISSON_LOCK_USER       the default of --user
  RUST_LOG                 e.g. debug: the library's logs on stderr

Deployments: one server; a Redis Cluster through any one node's URL (the other nodes are found
from it); a cluster behind one address (a proxy: the plain URL is kept); a Sentinel-monitored
master (--sentinel HOST:PORT --master NAME); a Redisson config file (--config); TLS with
rediss:// and --tls-ca / --tls-cert / --tls-key / --tls-insecure.

Shell completions: redisson-lock completions bash|zsh|fish|powershell|elvish (see docs/cli.md).";

const AFTER_HELP: &str =
    "Exit codes: 0 ok, 1 error, 2 usage, 3 not acquired (hold --wait), 4 unsafe (doctor), 5 could \
not check (doctor), 130 interrupted. Password: REDISSON_LOCK_PASSWORD or REDIS_PASSWORD. More: --help";

/// Inspect, list, hold, force-unlock and watch distributed locks that are wire-compatible with
/// Java's Redisson (RLock, RReadWriteLock, RFairLock, RFencedLock), inspect, list and watch its
/// count-down latches and semaphores (RCountDownLatch, RSemaphore, RPermitExpirableSemaphore),
/// and check that a deployment keeps them safe.
#[derive(Parser, Debug)]
#[command(
    name = "redisson-lock",
    version,
    long_about = None,
    after_help = AFTER_HELP,
    after_long_help = AFTER_LONG_HELP
)]
struct Cli {
    /// Redis URL: redis://[user:password@]host[:port][/db], or rediss:// for TLS. Any node of a
    /// Redis Cluster will do (the others are found from it)
    #[arg(
        long,
        global = true,
        env = "REDIS_URL",
        hide_env_values = true,
        default_value = "redis://127.0.0.1:6379",
        display_order = 100,
        help_heading = "Connection"
    )]
    url: String,

    /// A Redisson YAML/JSON config file (the one a Java service loads with Config.fromYAML):
    /// servers (single, cluster or sentinel), login, TLS and lock settings come from it; it wins
    /// over --url and --sentinel
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        display_order = 101,
        help_heading = "Connection"
    )]
    config: Option<std::path::PathBuf>,

    /// A sentinel of a Sentinel-monitored master, HOST:PORT (or redis://[user:pass@]HOST:PORT
    /// for the sentinels' own login); repeat it or separate with commas. Needs --master; wins
    /// over --url
    #[arg(
        long = "sentinel",
        global = true,
        value_name = "ADDR",
        display_order = 102,
        help_heading = "Connection"
    )]
    sentinels: Vec<String>,

    /// With --sentinel: the name the sentinels monitor the master under (Redisson's masterName)
    #[arg(
        long,
        global = true,
        value_name = "NAME",
        display_order = 103,
        help_heading = "Connection"
    )]
    master: Option<String>,

    /// The database number (instead of the URL's /db; the master's with --sentinel)
    #[arg(long, global = true, value_name = "N", display_order = 104, help_heading = "Connection",
          value_parser = clap::value_parser!(i64).range(0..), allow_hyphen_values = true)]
    db: Option<i64>,

    /// The ACL user (instead of the URL's); the password comes from the URL, else from
    /// $REDISSON_LOCK_PASSWORD or $REDIS_PASSWORD
    #[arg(
        long,
        global = true,
        env = "REDISSON_LOCK_USER",
        hide_env_values = true,
        value_name = "USER",
        display_order = 105,
        help_heading = "Connection"
    )]
    user: Option<String>,

    /// TLS: trust this CA certificate (PEM) instead of the system's roots (rediss:// addresses)
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        display_order = 110,
        help_heading = "TLS"
    )]
    tls_ca: Option<std::path::PathBuf>,

    /// TLS: present this client certificate (PEM, with --tls-key) to a server that asks for one
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        display_order = 111,
        help_heading = "TLS"
    )]
    tls_cert: Option<std::path::PathBuf>,

    /// TLS: the private key (PEM) of --tls-cert
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        display_order = 112,
        help_heading = "TLS"
    )]
    tls_key: Option<std::path::PathBuf>,

    /// TLS: accept any server certificate (encrypts, but does not authenticate the server)
    #[arg(long, global = true, display_order = 113, help_heading = "TLS")]
    tls_insecure: bool,

    /// Print one JSON object per line instead of a table
    #[arg(long, global = true, display_order = 120)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

impl Cli {
    fn conn_opts(&self) -> target::ConnOpts {
        target::ConnOpts {
            url: self.url.clone(),
            config: self.config.clone(),
            sentinels: self.sentinels.clone(),
            master: self.master.clone(),
            db: self.db,
            user: self.user.clone(),
            tls_ca: self.tls_ca.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            tls_insecure: self.tls_insecure,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show what a name holds: a lock, a count (count-down latch or semaphore) or a semaphore's
    /// permits; only reads
    ///
    /// A lock: its kind, holders, TTL, read-hold timeout keys, fair queue and fencing token. A
    /// count (an integer at the name): the count and who listens on the latch's and the
    /// semaphore's channels. A semaphore: the available permits, TTL and waiters and, for a
    /// permit-expirable one, each permit held under an id (id, lease end or "no lease", whether
    /// the lease has ended but the permit was not given back yet) and the totals (available,
    /// held, capacity). Nothing is written: an ended lease is shown, not reclaimed.
    ///
    /// Without a flag the keys decide: a lock hash is a lock; an integer beside a sorted set
    /// {NAME}:timeout of 16-byte permit ids is a permit-expirable semaphore; an integer alone is
    /// a count (a latch or an RSemaphore: Redis cannot tell them apart; say --latch or
    /// --semaphore).
    Inspect {
        /// The name (its Redis key: the lock's, latch's or semaphore's)
        name: String,
        #[command(flatten)]
        as_kind: count::AsKind,
    },
    /// Find locks with SCAN (never KEYS) and show one line per lock; with --synchronizers also
    /// counts and permit-expirable semaphores; in a Redis Cluster, SCAN every master
    ///
    /// Without --synchronizers only locks are listed. With it, a second table (after the locks;
    /// in JSON, objects as inspect prints them) lists every integer string as a count (a
    /// count-down latch, an RSemaphore or an application's integer: the kind says whose
    /// channel has subscribers, never more) and every integer beside a {NAME}:timeout set of
    /// permit ids as a permit-expirable semaphore. Only reads.
    List {
        /// Glob pattern over names
        #[arg(default_value = "*")]
        pattern: String,
        /// Also list counts (count-down latches, RSemaphores, any integer string) and
        /// permit-expirable semaphores
        #[arg(long)]
        synchronizers: bool,
    },
    /// Acquire a lock, hold it (for --for, or until Ctrl-C), then release it
    Hold(HoldArgs),
    /// Delete a lock whoever holds it, and wake its waiters
    ///
    /// Runs the force-unlock of the lock's kind, as its keys tell (inspect's kind): a read-write
    /// lock's side (its channel, message 1 for a writer, 0 for readers); a fair lock's own script
    /// (stale waiters dropped, then the head of the queue woken on its own channel
    /// redisson_lock__channel:{NAME}:<head's field>, where a Redisson fair waiter listens); any
    /// other lock's (message 0 on redisson_lock__channel:{NAME}). A key that is not a lock is
    /// refused and left alone.
    ForceUnlock {
        /// The lock's name (its Redis key)
        name: String,
        /// Do not ask for confirmation (required when stdin is not a terminal)
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Raise a fenced lock's token counter to at least FLOOR (never lower it): after Redis lost
    /// the counter, so that new holders' tokens pass the highest fence the resource stored
    ///
    /// Read the highest fence your resource has stored (e.g. `SELECT max(fence) FROM orders`)
    /// and give it as FLOOR: the next acquisition, Java's too, takes a token above it. A counter
    /// already at or above FLOOR is left as it is, so running it twice is harmless.
    RaiseToken {
        /// The fenced lock's name (its counter is redisson_lock_token:{NAME})
        name: String,
        /// The value the counter must at least have, from 0 to 2^63-2 (one below i64::MAX)
        #[arg(value_parser = NumberArg::TOKEN_FLOOR, allow_hyphen_values = true)]
        floor: u64,
    },
    /// Print a name's messages live (classic and sharded channels) and the changes of its
    /// state: a lock's holders and TTL, a count, a semaphore's permits
    ///
    /// A lock: unlock messages, holder changes and TTL renewals. A count (an integer at the
    /// name): the count-down latch's and the semaphore's messages and the count's changes. A
    /// semaphore: the messages on redisson_sc:{NAME} (a number of permits: waiters try again)
    /// and changes of the available permits and, for a permit-expirable one, of each held
    /// permit (acquired, lease updated, lease ended, released, reclaimed). The name is taken
    /// for what it is as inspect does (--latch, --semaphore, --expirable-semaphore say it).
    Watch {
        /// The name (its Redis key: the lock's, latch's or semaphore's)
        name: String,
        #[command(flatten)]
        as_kind: count::AsKind,
        /// How often to sample the state: holders and TTL, count, permits (at least 10ms)
        #[arg(
            long,
            value_name = "DUR",
            default_value = "500ms",
            value_parser = DurationArg::at_least(args::MIN_WATCH_INTERVAL, "500ms"),
            allow_hyphen_values = true
        )]
        interval: Duration,
    },
    /// Check the deployment for what makes locks unsafe (eviction, persistence, replicas,
    /// cluster, version, latency, clock, client tracking, ACL), one line per check: exit 4 when a
    /// check fails, 5 when one could not be made (a command refused) and none failed
    ///
    /// Each line is ok, warn, FAIL or skip. skip: the server refused a command the check needs
    /// (CONFIG GET, INFO, ACL, CLUSTER, CLIENT...: an ACL user, a managed service that renames
    /// admin commands); the line names the command refused and what could not be checked. A
    /// warning never changes the exit code. In a Redis Cluster the server checks (version,
    /// eviction, persistence, replication) read every master; with --sentinel, the master the
    /// sentinels name.
    Doctor {
        /// A lock name whose keys and channels the ACL check uses (take one your services use)
        #[arg(long, value_name = "NAME", default_value = "lock:doctor")]
        name: String,
        /// Check this ACL user's permissions (with ACL DRYRUN, as an admin) instead of the
        /// connected user's
        #[arg(long, value_name = "USER")]
        acl_user: Option<String>,
        /// Also check what the synchronizers (count-down latch, semaphores) send on NAME's keys
        #[arg(long)]
        synchronizers: bool,
        /// Also check what a grouped multi-lock (Redisson's getMultiLock(group, values)) sends
        /// on NAME's keys, NAME its group
        #[arg(long)]
        group: bool,
        /// Check the objects of an entry of this map (or set) instead of NAME: Redisson's
        /// RMap.getLock(key), getFairLock, getReadWriteLock, getSemaphore,
        /// getPermitExpirableSemaphore and getCountDownLatch, named {MAP}:<key hash>:<object>
        #[arg(long, value_name = "MAP", conflicts_with_all = ["name", "synchronizers", "group"])]
        map: Option<String>,
    },
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish) on stdout
    ///
    /// bash:  redisson-lock completions bash > ~/.local/share/bash-completion/completions/redisson-lock
    /// zsh:   redisson-lock completions zsh > ~/.zfunc/_redisson-lock  (with fpath+=~/.zfunc before compinit)
    /// fish:  redisson-lock completions fish > ~/.config/fish/completions/redisson-lock.fish
    #[command(verbatim_doc_comment)]
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Args, Debug)]
struct HoldArgs {
    /// The lock's name (its Redis key)
    name: String,
    /// Hold with this lease and no watchdog (default: watchdog mode, TTL 30s renewed every 10s);
    /// at least 1ms
    #[arg(
        long,
        value_name = "DUR",
        value_parser = DurationArg::at_least(Duration::from_millis(1), "30s"),
        allow_hyphen_values = true
    )]
    lease: Option<Duration>,
    /// Give up after waiting this long (exit code 3; 0s tries once); default: wait as long as it
    /// takes
    #[arg(
        long,
        value_name = "DUR",
        value_parser = DurationArg::from_zero("2s"),
        allow_hyphen_values = true
    )]
    wait: Option<Duration>,
    /// Release after holding this long (0s releases at once); default: hold until Ctrl-C
    #[arg(
        long = "for",
        value_name = "DUR",
        value_parser = DurationArg::from_zero("10s"),
        allow_hyphen_values = true
    )]
    hold_for: Option<Duration>,
    /// Owner id (the number after the client id in the hash field; Java: the thread id), from 0
    /// to 2^63-1
    #[arg(
        long,
        value_name = "ID",
        value_parser = NumberArg::OWNER,
        allow_hyphen_values = true
    )]
    owner: Option<u64>,
    /// The kind of lock, by name (the flags below are shorthands for it)
    #[arg(id = "lock_kind", long = "kind", value_name = "KIND", value_parser = kind_parser(), group = "kind")]
    kind: Option<AnyKind>,
    /// Take the read side of a read-write lock
    #[arg(long, group = "kind")]
    read: bool,
    /// Take the write side of a read-write lock
    #[arg(long, group = "kind")]
    write: bool,
    /// Take a fenced lock (Redisson's RFencedLock) and print its fencing token
    #[arg(long, group = "kind")]
    fenced: bool,
    /// Take a spin lock (Redisson's RSpinLock): wait by polling, release without a message
    #[arg(long, group = "kind")]
    spin: bool,
    /// Take a non-reentrant lock (Redisson 4.4+): the same --owner cannot take it twice
    /// (with --fair: the non-reentrant fair lock)
    #[arg(long, conflicts_with_all = ["lock_kind", "read", "write", "fenced", "spin"])]
    non_reentrant: bool,
    /// Take a fair lock (Redisson's RFairLock): queue up, be served in arrival order, leave the
    /// queue on Ctrl-C or when --wait runs out
    #[arg(long, conflicts_with_all = ["lock_kind", "read", "write", "fenced", "spin"])]
    fair: bool,
}

impl HoldArgs {
    /// The kind `--kind` or the shorthand flags name (the reentrant lock without either).
    fn lock_kind(&self) -> AnyKind {
        match (
            self.kind,
            self.read,
            self.write,
            self.fenced,
            self.spin,
            self.fair,
            self.non_reentrant,
        ) {
            (Some(kind), ..) => kind,
            (_, true, ..) => AnyKind::Read,
            (_, _, true, ..) => AnyKind::Write,
            (_, _, _, true, ..) => AnyKind::Fenced,
            (_, _, _, _, true, ..) => AnyKind::Spin,
            (.., true, true) => AnyKind::NonReentrantFair,
            (.., true, false) => AnyKind::Fair,
            (.., false, true) => AnyKind::NonReentrant,
            _ => AnyKind::Reentrant,
        }
    }
}

/// `--kind`'s values: every lock kind the library has, by its label (`-` for spaces).
fn kind_parser() -> impl clap::builder::TypedValueParser<Value = AnyKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = AnyKind::ALL
        .iter()
        .map(|k| PossibleValue::new(k.label().replace(' ', "-")));
    PossibleValuesParser::new(names).try_map(|s| s.parse::<AnyKind>())
}

/// What a command ends with.
pub(crate) enum Outcome {
    Done,
    /// `doctor` found a failing check.
    Unsafe,
    /// `doctor` could not make a check (a command refused) and none failed.
    Unchecked,
    NotAcquired,
    Interrupted,
}

/// A command's failure: one line for stderr.
#[derive(Debug)]
pub(crate) struct Failure(pub(crate) String);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure(describe(&e))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<redis::RedisError> for Failure {
    fn from(e: redis::RedisError) -> Self {
        Failure(describe(&Error::Redis(e)))
    }
}

fn describe(e: &Error) -> String {
    match e {
        Error::WrongType { key } => format!("key `{key}` is not a lock (it holds another type of value)"),
        // `why` names the field (or token) that does not fit a lock
        Error::NotALock { key, why } => format!("`{key}` is not a lock: {why}"),
        Error::Redis(r) if r.is_connection_refusal() || r.is_io_error() => {
            format!("cannot reach redis: {r}")
        }
        other => other.to_string(),
    }
}

pub(crate) fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `--json` is among the arguments (before a `--`): to report a command line that clap
/// rejects in the format asked for.
fn json_requested(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// A command line clap rejected: one line (or JSON object) on stderr, exit code 2 (`--help` and
/// `--version`: printed, exit code 0).
fn rejected(e: &clap::Error, json: bool) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand && !json {
        let _ = e.print();
        return ExitCode::from(exit::USAGE);
    }
    // clap's first line is the message; the rest is usage and a hint (the help text, when
    // nothing at all was given: not a message for JSON)
    let text = match e.kind() {
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => "a command is required".to_owned(),
        _ => e.render().to_string(),
    };
    let first = text.lines().next().unwrap_or("invalid arguments");
    let msg = first.strip_prefix("error: ").unwrap_or(first);
    // "--interval <DUR>" -> "--interval"
    let argument = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(a)) => a.split_whitespace().next().map(str::to_owned),
        _ => None,
    };
    usage_error(json, &one_line(msg), argument.as_deref())
}

/// A rejected command line, as one line (or JSON object) on stderr: exit code 2.
fn usage_error(json: bool, message: &str, argument: Option<&str>) -> ExitCode {
    eprintln!(
        "{}",
        render::error_line(json, render::ErrorKind::InvalidArgument, message, argument)
    );
    ExitCode::from(exit::USAGE)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return rejected(&e, json_requested(std::env::args_os())),
    };
    let json = cli.json;
    let fail = |msg: &str| {
        eprintln!(
            "{}",
            render::error_line(json, render::ErrorKind::Failed, &one_line(msg), None)
        );
        ExitCode::from(exit::ERROR)
    };
    if let Command::Completions { shell } = &cli.command {
        use clap::CommandFactory;
        let mut cmd = Cli::command();
        clap_complete::generate(*shell, &mut cmd, "redisson-lock", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    // the connection options are checked before anything connects (a usage error: exit code 2)
    let target = match target::Target::from_opts(&cli.conn_opts()) {
        Ok(t) => t,
        Err(target::Usage::Rejected { message, argument }) => {
            return usage_error(json, &one_line(&message), Some(argument))
        }
        Err(target::Usage::File(message)) => return fail(&message),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let result = runtime.block_on(run(cli, target));
    // Background tasks (pub/sub, watchdog) may still be parked on sockets: do not wait for them.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(Outcome::Done) => ExitCode::from(exit::OK),
        Ok(Outcome::Unsafe) => ExitCode::from(exit::UNSAFE),
        Ok(Outcome::Unchecked) => ExitCode::from(exit::UNCHECKED),
        Ok(Outcome::NotAcquired) => ExitCode::from(exit::NOT_ACQUIRED),
        Ok(Outcome::Interrupted) => ExitCode::from(exit::INTERRUPTED),
        Err(Failure(msg)) => fail(&msg),
    }
}

/// Rejects what is not a redis URL before redis-rs gets to guess.
pub(crate) fn check_scheme(url: &str) -> Result<(), Failure> {
    let scheme = url.split_once("://").map(|(s, _)| s);
    match scheme {
        Some("redis" | "rediss" | "valkey" | "valkeys" | "redis+unix" | "valkey+unix" | "unix") => {}
        Some(other) => {
            return Err(Failure(format!(
                "unknown URL scheme `{other}` in {} (expected redis://host:port or rediss://...)",
                redact(url)
            )))
        }
        None => {
            return Err(Failure(format!(
                "`{}` is not a redis URL (expected redis://host:port)",
                redact(url)
            )))
        }
    }
    Ok(())
}

/// Hides a password in a URL.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***@{}", &url[..s], &url[at + 1..]),
        _ => url.to_owned(),
    }
}

async fn run(cli: Cli, target: target::Target) -> Result<Outcome, Failure> {
    let out = render::Out::new(cli.json);
    match cli.command {
        Command::Inspect { name, as_kind } => {
            let s = target.connect(false).await?;
            match count::view(&mut s.client.connection(), &name, as_kind).await? {
                count::View::Lock(info) => out.inspect(&info),
                count::View::Count(mut info) => {
                    let channels = vec![&mut info.latch_channel, &mut info.semaphore_channel];
                    cluster::recount(&s, &target, channels).await?;
                    out.inspect_latch(&info)
                }
                count::View::Semaphore(mut sem) => {
                    cluster::recount(&s, &target, vec![&mut sem.info.channel]).await?;
                    out.inspect_semaphore(&sem)
                }
            }
            Ok(Outcome::Done)
        }
        Command::List {
            pattern,
            synchronizers,
        } => {
            let s = target.connect(false).await?;
            list::list(&s, &target, &out, &pattern, synchronizers).await
        }
        Command::Hold(args) => {
            let s = target.connect(true).await?;
            let outcome = hold::hold(&s.client, &out, args).await;
            // before exiting: send what is still queued (a dropped guard's release, a cancelled
            // fair waiter leaving the queue)
            if let Err(e) = s.client.shutdown().await {
                tracing::warn!(error = %e, "shutdown before exit");
            }
            outcome
        }
        Command::ForceUnlock { name, yes } => {
            let s = target.connect(false).await?;
            force_unlock::run(&s.client, &out, &name, yes).await
        }
        Command::RaiseToken { name, floor } => {
            let s = target.connect(false).await?;
            token::raise_token(&s.client, &out, &name, floor).await
        }
        Command::Watch {
            name,
            as_kind,
            interval,
        } => {
            let s = target.connect(false).await?;
            watch::watch(&s, &target, &out, &name, as_kind, interval).await
        }
        Command::Doctor {
            name,
            acl_user,
            synchronizers,
            group,
            map,
        } => {
            let args = doctor::DoctorArgs {
                name,
                acl_user,
                synchronizers,
                group,
                map,
            };
            doctor::doctor(&target, &out, args).await
        }
        // handled before the runtime starts
        Command::Completions { .. } => Ok(Outcome::Done),
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("redisson-lock").chain(args.iter().copied()))
    }

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn json_is_found_before_parsing() {
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(json_requested(args(&["redisson-lock", "watch", "x", "--json"])));
        assert!(json_requested(args(&["redisson-lock", "--json", "hold", "x"])));
        assert!(!json_requested(args(&["redisson-lock", "hold", "x"])));
        assert!(!json_requested(args(&["redisson-lock", "hold", "--", "--json"])));
        assert!(
            !json_requested(args(&["--json", "hold", "x"])),
            "argv[0] is the program"
        );
    }

    /// Every duration and number argument goes through the shared parsers, and a value with a
    /// leading `-` reaches them.
    #[test]
    fn numbers_are_checked_while_parsing() {
        for (args, flag, why) in [
            (
                &["watch", "k", "--interval", "0s"][..],
                "--interval",
                "must not be zero",
            ),
            (
                &["watch", "k", "--interval", "-1s"],
                "--interval",
                "must not be negative",
            ),
            (&["hold", "k", "--for", "-1s"], "--for", "must not be negative"),
            (
                &["hold", "k", "--for", "99999999999d"],
                "--for",
                "must be at most",
            ),
            (
                &["hold", "k", "--lease", "99999999999d"],
                "--lease",
                "must be at most",
            ),
            (&["hold", "k", "--lease", "0s"], "--lease", "must not be zero"),
            (&["hold", "k", "--wait", "-5ms"], "--wait", "must not be negative"),
            (&["hold", "k", "--owner", "-1"], "--owner", "must not be negative"),
        ] {
            let e = parse(args).expect_err(&format!("{args:?}"));
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{args:?}: {e}");
            let text = e.to_string();
            assert!(text.contains(flag) && text.contains(why), "{args:?}: {text}");
        }
        let cli = parse(&["hold", "k", "--wait", "0s", "--for", "0s", "--owner", "0"]).unwrap();
        let Command::Hold(h) = cli.command else {
            panic!("hold")
        };
        assert_eq!(
            (h.wait, h.hold_for, h.owner),
            (Some(Duration::ZERO), Some(Duration::ZERO), Some(0))
        );
        let cli = parse(&["watch", "k"]).unwrap();
        let Command::Watch { interval, .. } = cli.command else {
            panic!("watch")
        };
        assert_eq!(
            interval,
            Duration::from_millis(500),
            "the default passes the parser"
        );
    }
}
