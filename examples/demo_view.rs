//! A live view of workers contending for one lock (see `demo_worker` and `scripts/demo`).
//!
//! ```text
//! cargo run -p redisson-lock-examples --example demo_view -- --url redis://127.0.0.1:6379 --total 120 \
//!     [--lock demo:lock] [--key demo:counter] [--java-rounds 30] [--alias FIELD=LABEL]... [--max-secs 90]
//! ```
//!
//! Ten times a second it reads the lock with [`redisson_lock::inspect`] (holder, TTL) and the
//! workers' bookkeeping (states, the interval list every round appends to), and redraws: the
//! current holder, who is waiting, handoffs per second, and a progress bar over the planned
//! rounds. When every round is done it checks what the lock promised: the counter equals the
//! number of rounds (no lost update) and no two holds overlap in time. Exit code 0 when both hold.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use redisson_lock::inspect::{self, LockInfo};
use redisson_lock::redis::AsyncCommands;
use redisson_lock::{Client, Ttl};

struct Args {
    url: String,
    lock: String,
    key: String,
    total: u64,
    java_rounds: u64,
    aliases: HashMap<String, String>,
    max: Duration,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        url: std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
        lock: "demo:lock".into(),
        key: "demo:counter".into(),
        total: 0,
        java_rounds: 0,
        aliases: HashMap::new(),
        max: Duration::from_secs(90),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--url" => a.url = value,
            "--lock" => a.lock = value,
            "--key" => a.key = value,
            "--total" => a.total = num(&value)?,
            "--java-rounds" => a.java_rounds = num(&value)?,
            "--max-secs" => a.max = Duration::from_secs(num(&value)?),
            "--alias" => {
                let (field, label) = value.split_once('=').ok_or("--alias takes FIELD=LABEL")?;
                a.aliases.insert(field.to_owned(), label.to_owned());
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if a.total == 0 {
        return Err("--total (the planned number of rounds) is required".into());
    }
    Ok(a)
}

/// One hold, from the interval list: `rust:<label>:<start µs>:<end µs>` or `java:<worker>:...`.
struct Interval {
    label: String,
    start: u64,
    end: u64,
}

fn parse_interval(s: &str) -> Option<Interval> {
    let mut parts = s.rsplitn(3, ':');
    let end = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    let who = parts.next()?;
    let label = match who.split_once(':') {
        Some(("java", w)) => format!("java-{w}"),
        Some((_, l)) => l.to_owned(),
        None => who.to_owned(),
    };
    Some(Interval { label, start, end })
}

const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const MAGENTA: &str = "\x1b[35m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

struct View {
    args: Args,
    tty: bool,
    started: Instant,
    intervals: Vec<Interval>,
    handoffs: VecDeque<Instant>,
    handoff_total: u64,
    cross_language: u64,
    rounds_at: VecDeque<(Instant, usize)>,
    turns: VecDeque<String>,
    drawn_lines: usize,
}

impl View {
    fn paint(&self, s: &str, color: &str) -> String {
        if self.tty {
            format!("{color}{s}{RESET}")
        } else {
            s.to_owned()
        }
    }

    fn label_of(&self, field: &str, client_id: &str, workers: &HashMap<String, String>) -> String {
        if let Some(l) = self.args.aliases.get(field) {
            return l.clone();
        }
        match workers.get(client_id) {
            Some(l) => l.clone(),
            None => format!("{}…", &field[..8.min(field.len())]),
        }
    }

    fn ingest(&mut self, new: Vec<String>) {
        let now = Instant::now();
        for raw in new {
            let Some(iv) = parse_interval(&raw) else { continue };
            if let Some(prev) = self.intervals.last() {
                if prev.label != iv.label {
                    self.handoff_total += 1;
                    self.handoffs.push_back(now);
                    if prev.label.starts_with("java-") != iv.label.starts_with("java-") {
                        self.cross_language += 1;
                    }
                }
            }
            self.turns.push_back(iv.label.clone());
            if self.turns.len() > 8 {
                self.turns.pop_front();
            }
            self.intervals.push(iv);
        }
        while self
            .handoffs
            .front()
            .is_some_and(|t| now.duration_since(*t) > Duration::from_secs(2))
        {
            self.handoffs.pop_front();
        }
        self.rounds_at.push_back((now, self.intervals.len()));
        while self
            .rounds_at
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) > Duration::from_secs(2))
        {
            self.rounds_at.pop_front();
        }
    }

    fn rates(&self) -> (f64, f64) {
        let window = self
            .rounds_at
            .front()
            .map(|(t, _)| t.elapsed().as_secs_f64())
            .unwrap_or(0.0)
            .max(0.5);
        let handoffs = self.handoffs.len() as f64 / window.clamp(0.5, 2.0);
        let rounds = match (self.rounds_at.front(), self.rounds_at.back()) {
            (Some((_, a)), Some((_, b))) => (b - a) as f64 / window,
            _ => 0.0,
        };
        (handoffs, rounds)
    }

    fn frame(
        &self,
        info: &LockInfo,
        workers: &HashMap<String, String>,
        states: &HashMap<String, String>,
    ) -> Vec<String> {
        let mut lines = Vec::new();
        let elapsed = self.started.elapsed().as_secs_f64();
        lines.push(format!(
            "{} lock \"{}\" on {}   {:.1} s",
            self.paint(" redisson-lock demo ", BOLD),
            self.args.lock,
            self.args.url,
            elapsed
        ));
        lines.push(String::new());

        let holder = info.holders.first();
        let holder_label = holder.map(|h| self.label_of(&h.field, &h.client_id, workers));
        match (holder, &holder_label) {
            (Some(h), Some(label)) => {
                let ttl = match info.ttl {
                    Ttl::Expires(d) => format!("{:.1}s", d.as_secs_f64()),
                    _ => "-".into(),
                };
                lines.push(format!(
                    " holder    {} field {}  TTL {ttl}",
                    self.paint(&format!("{label:<12}"), GREEN),
                    self.paint(&h.field, DIM)
                ));
            }
            _ => lines.push(format!(" holder    {}", self.paint("(free)", DIM))),
        }

        // Everyone known, with a state: Rust workers report theirs; a Java worker is holding,
        // waiting (its counter loop re-locks at once) or done after its rounds.
        let mut rows: BTreeMap<String, (String, usize)> = BTreeMap::new();
        for (label, state) in states {
            rows.insert(label.clone(), (state.clone(), 0));
        }
        for label in self.args.aliases.values() {
            rows.entry(label.clone()).or_insert(("waiting".into(), 0));
        }
        for iv in &self.intervals {
            rows.entry(iv.label.clone()).or_insert(("waiting".into(), 0)).1 += 1;
        }
        for (label, (state, rounds)) in rows.iter_mut() {
            if label.starts_with("java-") {
                *state = if self.args.java_rounds > 0 && *rounds as u64 >= self.args.java_rounds {
                    "done".into()
                } else {
                    "waiting".into()
                };
            }
            if Some(label) == holder_label.as_ref() {
                *state = "holding".into();
            } else if state == "holding" {
                *state = "handing over".into();
            }
        }
        let waiting: Vec<String> = rows
            .iter()
            .filter(|(_, (s, _))| s == "waiting")
            .map(|(l, _)| l.clone())
            .collect();
        lines.push(format!(
            " waiting   {}",
            if waiting.is_empty() {
                "-".to_owned()
            } else {
                self.paint(&waiting.join(", "), YELLOW)
            }
        ));
        let (handoffs, rounds) = self.rates();
        let cross = if self.args.java_rounds > 0 {
            format!(" ({} Rust<->Java)", self.cross_language)
        } else {
            String::new()
        };
        lines.push(format!(
            " handoffs  {handoffs:>5.1} /s     rounds {rounds:>5.1} /s     total handoffs {}{cross}",
            self.handoff_total
        ));
        let done = self.intervals.len() as u64;
        let width = 40u64;
        let filled = (done.min(self.args.total) * width / self.args.total) as usize;
        lines.push(format!(
            " progress  [{}{}] {done}/{}",
            self.paint(&"#".repeat(filled), GREEN),
            ".".repeat(width as usize - filled),
            self.args.total
        ));
        lines.push(String::new());
        lines.push(format!(" {:<12} {:<14} {}", "worker", "state", "rounds"));
        for (label, (state, n)) in &rows {
            let color = match state.as_str() {
                "holding" => GREEN,
                "waiting" => YELLOW,
                _ => DIM,
            };
            let name = if label.starts_with("java-") {
                self.paint(&format!("{label:<12}"), MAGENTA)
            } else {
                format!("{label:<12}")
            };
            lines.push(format!(
                " {name} {} {n}",
                self.paint(&format!("{state:<14}"), color)
            ));
        }
        lines.push(String::new());
        let turns: Vec<&str> = self.turns.iter().map(String::as_str).collect();
        lines.push(format!(" last turns: {}", turns.join(" -> ")));
        lines
    }

    fn draw(&mut self, lines: &[String]) {
        let mut out = std::io::stdout().lock();
        if self.tty {
            // Back to the top of our block, then rewrite each line.
            if self.drawn_lines > 0 {
                let _ = write!(out, "\x1b[{}A", self.drawn_lines);
            }
            for l in lines {
                let _ = writeln!(out, "\r{l}\x1b[K");
            }
            // Clear lines left over from a longer previous frame.
            for _ in lines.len()..self.drawn_lines {
                let _ = writeln!(out, "\x1b[K");
            }
            self.drawn_lines = lines.len().max(self.drawn_lines);
        } else {
            let _ = writeln!(out, "{}", lines[2..6].join(" |"));
        }
        let _ = out.flush();
    }
}

async fn run(args: Args) -> Result<bool, Box<dyn std::error::Error>> {
    let client = Client::connect(&args.url).await?;
    let mut conn = client.connection();
    let intervals_key = format!("{}:intervals", args.key);
    let mut view = View {
        tty: std::io::stdout().is_terminal(),
        started: Instant::now(),
        intervals: Vec::new(),
        handoffs: VecDeque::new(),
        handoff_total: 0,
        cross_language: 0,
        rounds_at: VecDeque::new(),
        turns: VecDeque::new(),
        drawn_lines: 0,
        args,
    };
    let mut last_print = Instant::now() - Duration::from_secs(10);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let timed_out = loop {
        tick.tick().await;
        let info = inspect::inspect(&mut conn, &view.args.lock).await?;
        let workers: HashMap<String, String> = conn.hgetall("demo:workers").await?;
        let states: HashMap<String, String> = conn.hgetall("demo:state").await?;
        let from = view.intervals.len() as isize;
        let new: Vec<String> = conn.lrange(&intervals_key, from, -1).await?;
        view.ingest(new);
        let lines = view.frame(&info, &workers, &states);
        if view.tty || last_print.elapsed() >= Duration::from_secs(1) {
            view.draw(&lines);
            last_print = Instant::now();
        }
        if view.intervals.len() as u64 >= view.args.total {
            break false;
        }
        if view.started.elapsed() > view.args.max {
            break true;
        }
    };

    // Let the workers report `done`, then draw the final frame.
    for _ in 0..20 {
        let states: HashMap<String, String> = conn.hgetall("demo:state").await?;
        if states.values().all(|s| s == "done") {
            let info = inspect::inspect(&mut conn, &view.args.lock).await?;
            let workers: HashMap<String, String> = conn.hgetall("demo:workers").await?;
            let lines = view.frame(&info, &workers, &states);
            view.draw(&lines);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // What the lock promised, checked.
    let counter: Option<u64> = conn.get(&view.args.key).await?;
    let counter = counter.unwrap_or(0);
    let mut spans: Vec<(u64, u64, &str)> = view
        .intervals
        .iter()
        .map(|i| (i.start, i.end, i.label.as_str()))
        .collect();
    spans.sort();
    let overlaps = spans.windows(2).filter(|w| w[1].0 < w[0].1).count();
    let rounds = view.intervals.len() as u64;
    let mut per: BTreeMap<&str, u64> = BTreeMap::new();
    for i in &view.intervals {
        *per.entry(i.label.as_str()).or_default() += 1;
    }
    let per: Vec<String> = per.iter().map(|(l, n)| format!("{l} {n}")).collect();
    println!();
    let cross = if view.args.java_rounds > 0 {
        format!(" ({} between Rust and Java)", view.cross_language)
    } else {
        String::new()
    };
    println!(
        " {} in {:.1} s: {rounds} rounds ({}), {} handoffs{cross}",
        if timed_out {
            "stopped after the time limit"
        } else {
            "done"
        },
        view.started.elapsed().as_secs_f64(),
        per.join(", "),
        view.handoff_total,
    );
    let ok_count = counter == rounds;
    println!(
        " counter = {counter}: {}",
        if ok_count {
            view.paint("no lost updates", GREEN)
        } else {
            format!("{} lost updates!", rounds as i64 - counter as i64)
        }
    );
    println!(
        " holds overlapping in time: {overlaps}{}",
        if overlaps == 0 {
            view.paint("  (mutual exclusion held)", GREEN)
        } else {
            "  (BROKEN)".into()
        }
    );
    // The view takes no locks, but a client still has pub/sub and background tasks to stop.
    client.shutdown().await?;
    Ok(ok_count && overlaps == 0 && !timed_out)
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("demo_view: {e}");
            std::process::exit(1);
        }
    };
    match run(args).await {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("demo_view: {e}");
            std::process::exit(1);
        }
    }
}
