//! The example sessions of `docs/cli.md`, run for real: each block between
//! `<!-- transcript: NAME -->` and `<!-- /transcript -->` is what the commands below print against
//! throwaway redis-servers, with what changes from run to run replaced by placeholders (ports,
//! client ids, permit ids, TTLs, durations, times). The test fails when the document's blocks
//! differ from this run's; `UPDATE_TRANSCRIPTS=1` writes this run's blocks into the document
//! instead.
//!
//! Locks that a Java service would take (a thread id as the owner) are taken here with the Rust
//! library and that owner id: the keys and fields are the same as Redisson's.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::Config;
use regex::{Captures, Regex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};

use super::{json_lines, run_env, Run, BIN, CLEARED_ENV};
use crate::common::{eventually, server_version, RedisServer};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/cli.md");
const UPDATE: &str = "UPDATE_TRANSCRIPTS";
const REGENERATE: &str = "UPDATE_TRANSCRIPTS=1 cargo test -p redisson-lock-cli --test cli transcripts";
/// How long any awaited line or condition may take.
const LIMIT: Duration = Duration::from_secs(20);

/// One example session: the commands as a reader types them (against the default
/// `redis://127.0.0.1:6379`) and what they print.
struct Block {
    name: &'static str,
    url: String,
    text: String,
}

impl Block {
    fn new(name: &'static str, s: &RedisServer) -> Block {
        Block {
            name,
            url: s.url(),
            text: String::new(),
        }
    }

    fn line(&mut self, l: &str) {
        self.text.push_str(l);
        self.text.push('\n');
    }

    fn prompt(&mut self, args: &[&str], note: &str) {
        let shown: Vec<String> = args.iter().map(|a| shell_word(a)).collect();
        let cmd = format!("$ redisson-lock {}", shown.join(" "));
        if note.is_empty() {
            self.line(&cmd);
        } else {
            self.line(&format!("{cmd:<50}  # {note}"));
        }
    }

    /// Runs the binary to completion and records the command and its output (stdout, then
    /// stderr).
    async fn run(&mut self, args: &[&str]) -> Run {
        self.run_noted(args, "").await
    }

    async fn run_noted(&mut self, args: &[&str], note: &str) -> Run {
        self.prompt(args, note);
        let r = self.quiet(args, &[]).await;
        self.text.push_str(&r.stdout);
        self.text.push_str(&r.stderr);
        r
    }

    /// Runs the binary without recording it.
    async fn quiet(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec!["--url", self.url.as_str()];
        all.extend_from_slice(args);
        run_env(&all, env).await
    }

    /// `echo $?` and the exit code, which must be `code`.
    fn exit_code(&mut self, r: &Run, code: i32) {
        assert_eq!(
            r.code,
            Some(code),
            "{}: exit code; stderr {}",
            self.name,
            r.stderr
        );
        self.line("$ echo $?");
        self.line(&code.to_string());
    }

    /// Starts the binary in the background (`&` in the transcript); its lines are recorded when
    /// [`Bg::show`] is called.
    fn spawn(&mut self, args: &[&str], note: &str) -> Bg {
        let mut shown: Vec<&str> = args.to_vec();
        shown.push("&");
        self.prompt(&shown, note);
        Bg::start(&self.url, args)
    }
}

/// A word as a shell needs it: globs quoted.
fn shell_word(a: &str) -> String {
    if a.contains(['*', '?', ' ', '{', '}']) {
        format!("'{a}'")
    } else {
        a.to_owned()
    }
}

/// A background run of the binary: stdout read line by line, stderr at the end.
struct Bg {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    stderr: ChildStderr,
}

impl Bg {
    fn start(url: &str, args: &[&str]) -> Bg {
        let mut cmd = Command::new(BIN);
        cmd.args(["--url", url]).args(args);
        for v in CLEARED_ENV {
            cmd.env_remove(v);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the redisson-lock binary");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        Bg {
            child,
            lines: BufReader::new(stdout).lines(),
            stderr,
        }
    }

    /// The next stdout line, which must start with `prefix`.
    async fn next(&mut self, prefix: &str) -> String {
        let line = tokio::time::timeout(LIMIT, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line starting with {prefix:?} within {LIMIT:?}"))
            .expect("read stdout")
            .unwrap_or_else(|| panic!("stdout closed before a line starting with {prefix:?}"));
        assert!(line.starts_with(prefix), "{line:?} should start with {prefix:?}");
        line
    }

    /// The next stdout line (starting with `prefix`), recorded in `b`.
    async fn show(&mut self, b: &mut Block, prefix: &str) -> String {
        let line = self.next(prefix).await;
        b.line(&line);
        line
    }

    /// The next stdout line whose time of day is cut off, starting with `prefix` (`watch`).
    async fn show_event(&mut self, b: &mut Block, prefix: &str) {
        let line = tokio::time::timeout(LIMIT, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no `{prefix}` line within {LIMIT:?}"))
            .expect("read stdout")
            .unwrap_or_else(|| panic!("stdout closed before a `{prefix}` line"));
        let event = line.get(14..).unwrap_or("");
        assert!(event.starts_with(prefix), "{line:?} should be a `{prefix}` line");
        b.line(&line);
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.id().expect("still running");
        let ok = std::process::Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .expect("run kill")
            .success();
        assert!(ok, "kill {sig} {pid}");
    }

    /// Waits for the exit; records what is left on stdout (prefixed with `^C` when `interrupted`)
    /// and stderr in `b`; the exit code.
    async fn finish(mut self, b: &mut Block, interrupted: bool) -> Option<i32> {
        let status = tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .expect("the background run exits in time")
            .expect("wait");
        let mut rest = Vec::new();
        while let Some(l) = self.lines.next_line().await.expect("read stdout") {
            rest.push(l);
        }
        let mut err = String::new();
        self.stderr.read_to_string(&mut err).await.expect("read stderr");
        for (i, l) in rest.iter().enumerate() {
            b.line(&if interrupted && i == 0 {
                format!("^C{l}")
            } else {
                l.clone()
            });
        }
        b.text.push_str(&err);
        status.code()
    }
}

/// Replaces what changes from run to run. Each distinct client id (and permit id) gets a
/// placeholder of the same shape, the first one seen `aaaaaaaa-…`, the next `bbbbbbbb-…`, so
/// the reader can follow who is who.
fn normalize(text: &str, ports: &[u16]) -> String {
    let mut t = text.to_owned();
    for p in ports {
        t = t.replace(&format!("127.0.0.1:{p}"), "127.0.0.1:6379");
    }
    let uuid = Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let mut seen: HashMap<String, String> = HashMap::new();
    t = uuid
        .replace_all(&t, |c: &Captures| {
            let n = seen.len();
            seen.entry(c[0].to_owned())
                .or_insert_with(|| {
                    let d = ['a', 'b', 'c', 'd', 'e', 'f'][n % 6].to_string();
                    format!(
                        "{}-{}-{}-{}-{}",
                        d.repeat(8),
                        d.repeat(4),
                        d.repeat(4),
                        d.repeat(4),
                        d.repeat(12)
                    )
                })
                .clone()
        })
        .into_owned();
    let permit = Regex::new(r"\b[0-9a-f]{32}\b").unwrap();
    let mut seen: HashMap<String, String> = HashMap::new();
    t = permit
        .replace_all(&t, |c: &Captures| {
            let n = seen.len() + 1;
            seen.entry(c[0].to_owned())
                .or_insert_with(|| format!("{n:0>32x}"))
                .clone()
        })
        .into_owned();
    let dur = r"(?:\d+\.\d{3}s|\d+(?:\.\d+)?ms)";
    let rules: Vec<(String, &str)> = vec![
        // watch: the time of day each line starts with
        (r"(?m)^\d{2}:\d{2}:\d{2}\.\d{3}(  )".into(), "HH:MM:SS.mmm$1"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z".into(), "<time>"),
        // TTLs as read (not a configured one: "TTL 30.000s renewed every 10.000s")
        (
            format!(r"\b(ttl|TTL|TTL was)( +){dur}(?P<keep> renewed)?"),
            "$1$2<ttl>",
        ),
        // the TTL column of `list`
        (format!(r"(?m)(  ){dur}$"), "$1<ttl>"),
        (format!(r"\b(after|waited|in|ended) {dur}"), "$1 <dur>"),
        (format!(r"\blease end {dur}"), "lease end <dur>"),
        (
            format!(r"\bmedian {dur} over (\d+) PINGs \(max {dur}\)"),
            "median <dur> over $1 PINGs (max <dur>)",
        ),
        (r"\(±\d+ms\)".into(), "(±<dur>)"),
        // JSON: times and durations in ms; a TTL's -1 (no expiry) and -2 (absent) stay
        (r#""(ttl_ms|leases_ttl_ms)":[1-9]\d*"#.into(), r#""$1":<ms>"#),
        (
            r#""(held_ms|waited_ms|ts_ms|lease_end_ms|lease_remaining_ms|redis_time_ms)":-?\d+"#.into(),
            r#""$1":<ms>"#,
        ),
    ];
    for (re, with) in rules {
        t = replace_keeping_columns(&t, &Regex::new(&re).unwrap(), with);
    }
    t
}

/// `re` replaced with `with` (a match whose group `keep` matched stays as it is); a shorter
/// replacement in a table (two spaces follow it on its line) is padded with spaces to the length
/// it replaced, so that the columns stay aligned.
fn replace_keeping_columns(t: &str, re: &Regex, with: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut last = 0;
    for c in re.captures_iter(t) {
        let m = c.get(0).unwrap();
        out.push_str(&t[last..m.start()]);
        let mut r = String::new();
        if c.name("keep").is_some() {
            r.push_str(m.as_str());
        } else {
            c.expand(with, &mut r);
        }
        let rest_of_line = t[m.end()..].split('\n').next().unwrap_or("");
        if r.len() < m.len() && rest_of_line.contains("  ") {
            let pad = m.as_str().chars().count() - r.chars().count();
            r.push_str(&" ".repeat(pad));
        }
        out.push_str(&r);
        last = m.end();
    }
    out.push_str(&t[last..]);
    out
}

/// The blocks of the document: (name, start and end of what is between its markers).
fn doc_blocks(doc: &str) -> Vec<(String, std::ops::Range<usize>)> {
    const OPEN: &str = "<!-- transcript: ";
    const CLOSE: &str = "<!-- /transcript -->";
    let mut blocks = Vec::new();
    let mut at = 0;
    while let Some(i) = doc[at..].find(OPEN) {
        let start = at + i + OPEN.len();
        let name_end = start + doc[start..].find(" -->").expect("a marker ends with -->");
        let name = doc[start..name_end].to_owned();
        let body = name_end + " -->".len();
        let end = body
            + doc[body..]
                .find(CLOSE)
                .unwrap_or_else(|| panic!("no {CLOSE} after {name}"));
        blocks.push((name, body..end));
        at = end + CLOSE.len();
    }
    blocks
}

/// What goes between a block's markers.
fn fenced(text: &str) -> String {
    format!("\n```console\n{text}```\n")
}

/// The version line the transcripts were made with, in the document.
fn version_marker() -> String {
    format!("<!-- transcripts made with {} -->", server_version())
}

/// Writes `blocks` into the document, or checks that it has them.
fn compare(blocks: Vec<(&'static str, String)>) {
    let doc = std::fs::read_to_string(DOC).expect("read docs/cli.md");
    let update = std::env::var_os(UPDATE).is_some_and(|v| v != "0");
    let found = doc_blocks(&doc);
    let mut problems = Vec::new();
    let want: HashMap<&str, &String> = blocks.iter().map(|(n, t)| (*n, t)).collect();
    assert_eq!(want.len(), blocks.len(), "two transcripts with one name");
    for (name, _) in &blocks {
        if !found.iter().any(|(n, _)| n == name) {
            problems.push(format!(
                "docs/cli.md has no block `<!-- transcript: {name} -->`: add one where it belongs"
            ));
        }
    }
    let mut updated = String::new();
    let mut last = 0;
    for (name, range) in &found {
        let Some(text) = want.get(name.as_str()) else {
            problems.push(format!("docs/cli.md has a block `{name}` that no session makes"));
            continue;
        };
        let new = fenced(text);
        if doc[range.clone()] != new {
            let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
                (doc[range.clone()].lines().collect(), new.lines().collect());
            let i = old_lines
                .iter()
                .zip(&new_lines)
                .take_while(|(a, b)| a == b)
                .count();
            problems.push(format!(
                "block `{name}` differs from this run, first at its line {i}:\n  in the doc: {:?}\n  this run:   {:?}",
                old_lines.get(i).unwrap_or(&"(end)"),
                new_lines.get(i).unwrap_or(&"(end)")
            ));
        }
        updated.push_str(&doc[last..range.start]);
        updated.push_str(&new);
        last = range.end;
    }
    updated.push_str(&doc[last..]);
    let marker = Regex::new(r"<!-- transcripts made with [^>]* -->").unwrap();
    let updated = marker.replace(&updated, version_marker().as_str()).into_owned();
    if update {
        let missing: Vec<&String> = problems.iter().filter(|p| p.contains("has no block")).collect();
        assert!(missing.is_empty(), "{missing:#?}");
        if updated != doc {
            std::fs::write(DOC, updated).expect("write docs/cli.md");
            eprintln!("transcripts: docs/cli.md updated");
        }
        return;
    }
    assert!(
        problems.is_empty(),
        "docs/cli.md's transcripts are not what the binary prints now:\n{}\n\nIf the new output is right, regenerate them: {REGENERATE}",
        problems.join("\n")
    );
}

#[tokio::test]
async fn transcripts() {
    let doc = std::fs::read_to_string(DOC).expect("read docs/cli.md");
    let update = std::env::var_os(UPDATE).is_some_and(|v| v != "0");
    if !update && !doc.contains(&version_marker()) {
        // doctor's lines and the features a server has depend on its version
        eprintln!(
            "transcripts: skipped: docs/cli.md was made with another server than {} ({REGENERATE} to remake it)",
            server_version()
        );
        return;
    }
    let mut blocks = Vec::new();
    blocks.extend(locks().await);
    blocks.extend(fair().await);
    blocks.extend(watch().await);
    blocks.extend(doctor().await);
    blocks.extend(errors().await);
    compare(blocks);
}

/// Awaits `PUBSUB NUMSUB` + `SHARDNUMSUB` of `channel` reaching `n`.
async fn subscribers(s: &RedisServer, channel: &str, n: i64) {
    let raw = s.conn().await;
    eventually(LIMIT, &format!("{n} subscriber(s) of {channel}"), || {
        let mut raw = raw.clone();
        let channel = channel.to_owned();
        async move {
            let mut total = 0;
            for sub in ["NUMSUB", "SHARDNUMSUB"] {
                let v: redis::RedisResult<Vec<(String, i64)>> = redis::cmd("PUBSUB")
                    .arg(sub)
                    .arg(&channel)
                    .query_async(&mut raw)
                    .await;
                total += v.ok().and_then(|v| v.first().map(|p| p.1)).unwrap_or(0);
            }
            total >= n
        }
    })
    .await;
}

fn done(b: Block, ports: &[u16]) -> (&'static str, String) {
    (b.name, normalize(&b.text, ports))
}

/// inspect, list, hold, force-unlock and raise-token on one server.
async fn locks() -> Vec<(&'static str, String)> {
    let s = RedisServer::start();
    let ports = [s.port];
    let c = s.client(Config::default()).await;
    let mut out = Vec::new();

    // hold until Ctrl-C; --wait running out; --json
    let mut b = Block::new("hold", &s);
    let mut h = Bg::start(&b.url, &["hold", "order:42"]);
    b.prompt(&["hold", "order:42"], "");
    h.show(&mut b, "acquired order:42 as ").await;
    h.signal("-INT");
    assert_eq!(h.finish(&mut b, true).await, Some(0));
    let java = c.lock("billing:invoice:7").unwrap().with_owner(19u64);
    let g1 = java.lock().await.unwrap();
    let g2 = java.lock().await.unwrap();
    let r = b
        .run_noted(
            &["hold", "billing:invoice:7", "--wait", "500ms"],
            "while someone else holds it",
        )
        .await;
    b.exit_code(&r, 3);
    let r = b.run(&["--json", "hold", "jobs:nightly", "--for", "100ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    out.push(done(b, &ports));

    // a lease running out
    let mut b = Block::new("hold-lease", &s);
    let r = b.run(&["hold", "lx", "--lease", "500ms"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    out.push(done(b, &ports));

    // inspect: a lock held twice by owner 19 (Redisson's `lock()` twice on thread 19)
    let mut b = Block::new("inspect-reentrant", &s);
    b.run(&["inspect", "billing:invoice:7"]).await;
    b.run(&["inspect", "order:43"]).await;
    b.run(&["--json", "inspect", "billing:invoice:7"]).await;
    out.push(done(b, &ports));

    // inspect a hold taken by `hold`
    let mut b = Block::new("inspect-hold", &s);
    let mut holder = b.spawn(&["hold", "order:42"], "");
    holder.show(&mut b, "acquired order:42 as ").await;
    b.run(&["inspect", "order:42"]).await;
    out.push(done(b, &ports));

    // a read-write lock read by two owners of one client (two threads of one service)
    let rw = c.read_write_lock("report:daily").unwrap();
    let r12 = rw.with_owner(12u64).read_lock().lock().await.unwrap();
    let r20 = rw.with_owner(20u64).read_lock().lock().await.unwrap();
    let mut b = Block::new("inspect-read-write", &s);
    b.run(&["inspect", "report:daily"]).await;
    out.push(done(b, &ports));

    // a count-down latch with a waiter
    let latch = c.count_down_latch("batch:7").unwrap();
    assert!(latch.try_set_count(3).await.unwrap());
    let waiting = {
        let latch = c.count_down_latch("batch:7").unwrap();
        tokio::spawn(async move { latch.wait().await })
    };
    subscribers(&s, "redisson_countdownlatch__channel__{batch:7}", 1).await;
    let mut b = Block::new("inspect-latch", &s);
    b.run(&["inspect", "batch:7"]).await;
    b.run(&["--json", "inspect", "batch:7"]).await;
    out.push(done(b, &ports));

    // semaphores: permits under ids (one lease ended, one of 10 minutes, one without), and an
    // RSemaphore
    let gpu = c.permit_expirable_semaphore("sem:gpu").unwrap();
    assert!(gpu.try_set_permits(4).await.unwrap());
    // taken as Redisson takes them: kept until released by id (or their lease ends)
    gpu.acquire_with_lease(Duration::from_secs(600))
        .await
        .unwrap()
        .forget();
    gpu.acquire().await.unwrap().forget();
    gpu.acquire_with_lease(Duration::from_millis(100))
        .await
        .unwrap()
        .forget();
    // ended at least a second ago: "1.234s ago", a width that does not change the columns of
    // `list --synchronizers` from run to run
    eventually(LIMIT, "the 100ms lease ended a second ago", || async {
        let r = b_quiet(&s, &["--json", "inspect", "sem:gpu"]).await;
        let v = &json_lines(&r.stdout)[0];
        v["ended"] == 1
            && v["permits"][0]["lease_remaining_ms"]
                .as_i64()
                .is_some_and(|ms| ms <= -1000)
    })
    .await;
    let exports = c.semaphore("sem:exports").unwrap();
    assert!(exports.try_set_permits(3).await.unwrap());
    exports.try_acquire(1).await.unwrap().expect("a permit").forget();
    let mut b = Block::new("inspect-semaphores", &s);
    b.run(&["inspect", "sem:gpu"]).await;
    b.run(&["--json", "inspect", "sem:gpu"]).await;
    b.run(&["inspect", "--semaphore", "sem:exports"]).await;
    out.push(done(b, &ports));

    // list
    let mut b = Block::new("list", &s);
    b.run(&["list"]).await;
    b.run(&["--json", "list", "billing:*"]).await;
    out.push(done(b, &ports));

    // list --synchronizers: also an RSemaphore whose waiter wants more than there is, and an
    // application's counter
    let jobs = c.semaphore("sem:jobs").unwrap();
    assert!(jobs.try_set_permits(1).await.unwrap());
    let wants_two = {
        let jobs = c.semaphore("sem:jobs").unwrap();
        tokio::spawn(async move { jobs.acquire(2).await.map(|g| g.forget()) })
    };
    subscribers(&s, "redisson_sc:{sem:jobs}", 1).await;
    let mut raw = s.conn().await;
    let _: () = raw.set("hits:today", 7).await.unwrap();
    let mut b = Block::new("list-synchronizers", &s);
    b.run(&["list", "--synchronizers"]).await;
    b.run(&["--json", "list", "sem:*", "--synchronizers"]).await;
    out.push(done(b, &ports));
    wants_two.abort();
    waiting.abort();

    // force-unlock: refused without a terminal, then with --yes; the holder finds it lost
    let mut b = Block::new("force-unlock", &s);
    let r = b.run(&["force-unlock", "order:42"]).await;
    b.exit_code(&r, 1);
    let r = b.run(&["force-unlock", "order:42", "--yes"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    b.line("# the `hold order:42 &` above:");
    assert_eq!(holder.finish(&mut b, false).await, Some(1));
    let r = b.run(&["force-unlock", "order:42", "--yes"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    out.push(done(b, &ports));

    // raise-token
    let mut b = Block::new("raise-token", &s);
    b.run(&["hold", "order:42", "--fenced", "--for", "0s"]).await;
    b.run_noted(
        &["raise-token", "order:42", "1730"],
        "SELECT max(fence) FROM orders -> 1730",
    )
    .await;
    b.run(&["raise-token", "order:42", "1730"]).await;
    b.run(&["hold", "order:42", "--fenced", "--for", "0s"]).await;
    out.push(done(b, &ports));

    for g in [g2, g1] {
        g.unlock().await.unwrap();
    }
    for g in [r20, r12] {
        g.unlock().await.unwrap();
    }
    out
}

async fn b_quiet(s: &RedisServer, args: &[&str]) -> Run {
    let mut all = vec!["--url".to_owned(), s.url()];
    all.extend(args.iter().map(|a| a.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run_env(&all, &[]).await
}

/// A fair lock with a waiter, force-unlocked.
async fn fair() -> Vec<(&'static str, String)> {
    let s = RedisServer::start();
    let mut b = Block::new("force-unlock-fair", &s);
    let mut holder = b.spawn(&["hold", "jobs:fair", "--fair"], "");
    holder.show(&mut b, "acquired jobs:fair (fair) as ").await;
    let mut waiter = b.spawn(
        &["hold", "jobs:fair", "--fair", "--owner", "57", "--for", "0s"],
        "waits in the queue",
    );
    let raw = s.conn().await;
    eventually(LIMIT, "the waiter is queued", || {
        let mut raw = raw.clone();
        async move {
            let n: i64 = raw.llen("redisson_lock_queue:{jobs:fair}").await.unwrap();
            n == 1
        }
    })
    .await;
    b.run(&["inspect", "jobs:fair"]).await;
    let r = b.run(&["force-unlock", "jobs:fair", "--yes"]).await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    waiter.show(&mut b, "acquired jobs:fair (fair) as ").await;
    waiter.show(&mut b, "released jobs:fair").await;
    assert_eq!(waiter.finish(&mut b, false).await, Some(0));
    assert_eq!(holder.finish(&mut b, false).await, Some(1));
    vec![done(b, &[s.port])]
}

/// watch: a lock, a count, a semaphore.
async fn watch() -> Vec<(&'static str, String)> {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut out = Vec::new();
    let lease = Duration::from_secs(60);

    // a lock held twice by owner 19, released twice; then owner 20 takes the write lock
    let java = c.lock("billing:invoice:7").unwrap().with_owner(19u64);
    let g1 = java.lock_with_lease(lease).await.unwrap();
    let g2 = java.lock_with_lease(lease).await.unwrap();
    let mut b = Block::new("watch-lock", &s);
    let mut w = b.spawn(&["watch", "billing:invoice:7"], "");
    w.show(&mut b, "watching billing:invoice:7 on ").await;
    w.show_event(&mut b, "state").await;
    g2.unlock().await.unwrap();
    w.show_event(&mut b, "state").await;
    g1.unlock().await.unwrap();
    w.show_event(&mut b, "message 0").await;
    w.show_event(&mut b, "state").await;
    let wg = c
        .read_write_lock("billing:invoice:7")
        .unwrap()
        .with_owner(20u64)
        .write_lock()
        .lock_with_lease(lease)
        .await
        .unwrap();
    w.show_event(&mut b, "state").await;
    wg.unlock().await.unwrap();
    w.show_event(&mut b, "message 1").await;
    w.show_event(&mut b, "state").await;
    w.signal("-INT");
    assert_eq!(w.finish(&mut b, true).await, Some(0));
    out.push(done(b, &[s.port]));

    // a count-down latch: set to 2, counted down twice, set to 5
    let latch = c.count_down_latch("batch:7").unwrap();
    assert!(latch.try_set_count(2).await.unwrap());
    let mut b = Block::new("watch-count", &s);
    let mut w = b.spawn(&["watch", "batch:7"], "");
    w.show(&mut b, "watching batch:7 ").await;
    w.show_event(&mut b, "state").await;
    latch.count_down().await.unwrap();
    w.show_event(&mut b, "state").await;
    latch.count_down().await.unwrap();
    w.show_event(&mut b, "message 0").await;
    w.show_event(&mut b, "state").await;
    assert!(latch.try_set_count(5).await.unwrap());
    w.show_event(&mut b, "message 1").await;
    w.show_event(&mut b, "state").await;
    w.signal("-INT");
    assert_eq!(w.finish(&mut b, true).await, Some(0));
    out.push(done(b, &[s.port]));

    // a permit-expirable semaphore: a permit taken and given back
    let sem = c.permit_expirable_semaphore("sem:gpu").unwrap();
    assert!(sem.try_set_permits(2).await.unwrap());
    let mut b = Block::new("watch-semaphore", &s);
    let mut w = b.spawn(&["watch", "sem:gpu", "--expirable-semaphore"], "");
    w.show(&mut b, "watching sem:gpu ").await;
    w.show_event(&mut b, "state").await;
    let permit = sem.acquire_with_lease(Duration::from_secs(600)).await.unwrap();
    w.show_event(&mut b, "state").await;
    w.show_event(&mut b, "permit").await;
    permit.release().await.unwrap();
    w.show_event(&mut b, "message").await;
    w.show_event(&mut b, "state").await;
    w.show_event(&mut b, "permit").await;
    w.signal("-INT");
    assert_eq!(w.finish(&mut b, true).await, Some(0));
    out.push(done(b, &[s.port]));
    out
}

/// doctor: a server set up for locks, a misconfigured one checked as a narrow ACL user, and a
/// managed-service-like one (CONFIG renamed away, INFO denied).
async fn doctor() -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let good = RedisServer::start_with(&["--appendonly", "yes"]);
    let mut b = Block::new("doctor", &good);
    let r = b.run(&["doctor"]).await;
    b.exit_code(&r, 0);
    out.push(done(b, &[good.port]));

    let bad = RedisServer::start_with(&["--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru"]);
    let mut admin = bad.conn().await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("app")
        .arg("on")
        .arg(">app-secret")
        .arg("~*")
        .arg("&*")
        .arg("+@all")
        .arg("-evalsha")
        .arg("-eval")
        .arg("-ping")
        .arg("-time")
        .arg("-config")
        .query_async(&mut admin)
        .await
        .unwrap();
    let mut b = Block::new("doctor-unsafe", &bad);
    let url = format!("redis://app@127.0.0.1:{}", bad.port);
    let args = ["--url", url.as_str(), "doctor"];
    b.prompt(&args, "");
    let r = run_env(&args, &[("REDISSON_LOCK_PASSWORD", "app-secret")]).await;
    b.text.push_str(&r.stdout);
    b.text.push_str(&r.stderr);
    b.exit_code(&r, 4);
    out.push(done(b, &[bad.port]));

    let managed = RedisServer::start_with(&["--rename-command", "CONFIG", ""]);
    let mut admin = managed.conn().await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("ops")
        .arg("on")
        .arg(">ops-secret")
        .arg("~*")
        .arg("&*")
        .arg("+@all")
        .arg("-acl")
        .arg("-info")
        .arg("-cluster")
        .query_async(&mut admin)
        .await
        .unwrap();
    let mut b = Block::new("doctor-managed", &managed);
    let url = format!("redis://ops@127.0.0.1:{}", managed.port);
    let args = ["--url", url.as_str(), "doctor"];
    b.prompt(&args, "");
    let r = run_env(&args, &[("REDISSON_LOCK_PASSWORD", "ops-secret")]).await;
    b.text.push_str(&r.stdout);
    b.text.push_str(&r.stderr);
    b.exit_code(&r, 5);
    out.push(done(b, &[managed.port]));
    out
}

/// Errors and their exit codes: not a lock, unreachable, a rejected command line.
async fn errors() -> Vec<(&'static str, String)> {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let _: () = raw.set("session:9", "data").await.unwrap();
    let _: () = raw
        .hset_multiple("user:1", &[("name", "bob"), ("age", "41")])
        .await
        .unwrap();
    let mut b = Block::new("errors", &s);
    let r = b.run(&["inspect", "session:9"]).await;
    b.exit_code(&r, 1);
    let r = b.run(&["force-unlock", "user:1", "--yes"]).await;
    b.exit_code(&r, 1);
    let r = b.run(&["hold", "order:42", "--for", "-1s"]).await;
    b.exit_code(&r, 2);
    let r = b.run(&["--json", "hold", "order:42", "--wait", "soon"]).await;
    b.exit_code(&r, 2);
    let mut gone = RedisServer::start();
    let port = gone.port;
    gone.kill();
    let unreachable = Block::new("errors", &gone);
    let r = unreachable.quiet(&["inspect", "order:42"], &[]).await;
    b.prompt(&["inspect", "order:42"], "nothing listens at the address");
    b.text.push_str(&r.stdout);
    b.text.push_str(&r.stderr);
    b.exit_code(&r, 1);
    vec![done(b, &[s.port, port])]
}
