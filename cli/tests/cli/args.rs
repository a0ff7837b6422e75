//! The command line itself: bad durations, numbers and other rejected command lines exit with
//! code 2 (clap's convention) and one line on stderr (one JSON error object with `--json`), bad
//! input found while running exits with code 1 the same way, the limits are accepted and work,
//! and `--config FILE` replaces `--url`.

use std::time::Duration;

use redis::AsyncCommands;
use redisson_lock::Config;

use super::{assert_json_error, assert_one_line_error, json_lines, run, run_url, Spawned};
use crate::common::RedisServer;

/// Every duration and number argument of every subcommand: zero where it means nothing, a
/// negative value, an absurd one and garbage are refused while the command line is parsed (before
/// anything touches Redis), with exit code 2 (a usage error), one line naming the argument and
/// what to give instead, or with `--json` one JSON error object; never a panic.
#[tokio::test]
async fn bad_durations_and_numbers_are_refused_with_exit_2() {
    /// A command, one of its arguments, and bad values with what the message says about each.
    type Case<'a> = (&'a [&'a str], &'a str, &'a [(&'a str, &'a str)]);
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let cases: &[Case] = &[
        (
            &["watch", "w"],
            "--interval",
            &[
                ("0s", "must not be zero"),
                ("1ms", "must be at least 10ms"),
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("abc", "not a duration"),
                ("5", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--lease",
            &[
                ("0s", "must not be zero"),
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("99999999999999999999999s", "must be at most"),
                ("abc", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--wait",
            &[
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("abc", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--for",
            &[
                ("-1s", "must not be negative"),
                ("99999999999d", "must be at most"),
                ("1000000001s", "must be at most"),
                ("abc", "not a duration"),
            ],
        ),
        (
            &["hold", "h"],
            "--owner",
            &[
                ("-1", "must not be negative"),
                ("9223372036854775808", "must be at most 9223372036854775807"),
                ("99999999999999999999999", "must be at most"),
                ("abc", "not a whole number"),
                ("1.5", "not a whole number"),
            ],
        ),
    ];
    for (command, arg, bad) in cases {
        for (value, why) in *bad {
            let mut args: Vec<&str> = command.to_vec();
            args.extend([*arg, *value]);
            let what = format!("{args:?}");
            let r = run(&s, &args).await;
            assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
            assert_eq!(r.code, Some(2), "{what}: a usage error");
            assert_one_line_error(&r, &what, &format!("'{arg} <"));
            assert!(
                r.stderr.contains(why),
                "{what}: {:?} should say {why:?}",
                r.stderr
            );
            assert!(
                r.stderr.contains(&format!("e.g. {arg} ")),
                "{what}: {:?} should give an example",
                r.stderr
            );

            // --json before or after the command
            let mut json_first = vec!["--json"];
            json_first.extend(&args);
            let mut json_last = args.clone();
            json_last.push("--json");
            for args in [json_first, json_last] {
                let what = format!("{args:?}");
                let r = run(&s, &args).await;
                let err = assert_json_error(&r, &what, "invalid_argument", why);
                assert_eq!(err["argument"], *arg, "{what}: {err}");
                assert!(err["message"].as_str().unwrap().contains(*arg), "{what}: {err}");
            }
        }
    }
    // nothing reached Redis
    let keys: Vec<String> = raw.keys("*").await.unwrap();
    assert!(keys.is_empty(), "{keys:?}");

    // other rejected command lines take the same shape
    let r = run(&s, &["--json", "hold", "x", "--spin", "--fenced"]).await;
    assert_json_error(&r, "conflicting flags", "invalid_argument", "cannot be used with");
    let r = run(&s, &["--json", "hold"]).await;
    assert_json_error(&r, "missing name", "invalid_argument", "required");
    let r = run(&s, &["--json", "frobnicate"]).await;
    assert_json_error(&r, "unknown command", "invalid_argument", "frobnicate");
    let r = run(&s, &["hold", "x", "--for"]).await;
    assert_one_line_error(&r, "missing value", "--for");
}

/// The limits themselves, zero where it means something, and `--owner 0` are accepted, and the
/// longest durations run without overflowing a timer.
#[tokio::test]
async fn durations_and_numbers_at_their_limits_work() {
    let s = RedisServer::start();
    let c = s.client(Config::default()).await;
    let mut raw = s.conn().await;

    // --for 0s releases at once; --wait 0s tries once
    let r = run(
        &s,
        &[
            "--json", "hold", "z", "--for", "0s", "--wait", "0s", "--owner", "0",
        ],
    )
    .await;
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let events = json_lines(&r.stdout);
    assert_eq!(events[0]["event"], "acquired", "{events:?}");
    assert!(events[0]["field"].as_str().unwrap().ends_with(":0"), "{events:?}");
    assert_eq!(events[1]["event"], "released", "{events:?}");
    let g = c.lock("z").unwrap().lock().await.unwrap();
    let r = run(&s, &["--json", "hold", "z", "--wait", "0s"]).await;
    assert_eq!(r.code, Some(3), "held elsewhere: tried once; {}", r.stderr);
    assert_eq!(json_lines(&r.stdout)[0]["event"], "not-acquired");
    g.unlock().await.unwrap();

    // the longest lease, and the largest owner id
    let max_owner = i64::MAX.to_string();
    let mut hold = Spawned::start(
        &s,
        &[
            "--json",
            "hold",
            "long",
            "--lease",
            "1000000000s",
            "--owner",
            &max_owner,
        ],
    );
    let acquired = hold.event(Duration::from_secs(20), "acquired").await;
    assert_eq!(acquired["lease_ms"], 1_000_000_000_000u64, "{acquired}");
    assert!(
        acquired["field"]
            .as_str()
            .unwrap()
            .ends_with(&format!(":{max_owner}")),
        "{acquired}"
    );
    let pttl: i64 = raw.pttl("long").await.unwrap();
    assert!(pttl > 999_000_000_000, "PTTL {pttl}");
    hold.signal("-INT");
    hold.event(Duration::from_secs(20), "released").await;
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));

    // --for at its maximum: holds (no timer overflow) until Ctrl-C
    let mut hold = Spawned::start(&s, &["hold", "longer", "--for", "1000000000s"]);
    let line = hold
        .line_where(Duration::from_secs(20), "acquired", |l| l.starts_with("acquired"))
        .await;
    assert!(line.ends_with("holding for 1000000000.000s"), "{line}");
    hold.signal("-INT");
    hold.line_where(Duration::from_secs(20), "released", |l| l.starts_with("released"))
        .await;
    assert_eq!(hold.exit_code(Duration::from_secs(20)).await, Some(0));

    // watch at the shortest and the longest interval
    for interval in ["10ms", "1000000000s"] {
        let mut w = Spawned::start(&s, &["--json", "watch", "w", "--interval", interval]);
        w.event(Duration::from_secs(20), "watching").await;
        w.event(Duration::from_secs(20), "state").await;
        // a change is still seen right after an unlock message
        let g = c.lock("w").unwrap().lock().await.unwrap();
        g.unlock().await.unwrap();
        w.event(Duration::from_secs(20), "message").await;
        w.signal("-INT");
        assert_eq!(
            w.exit_code(Duration::from_secs(20)).await,
            Some(0),
            "--interval {interval}"
        );
    }
}

/// Input that is wrong for what Redis holds (or for what the options name), found while running:
/// exit code 1, never 2.
#[tokio::test]
async fn bad_input_gives_a_one_line_error_and_exit_1() {
    let s = RedisServer::start();
    let mut raw = s.conn().await;
    let _: () = raw.set("plain-string", "x").await.unwrap();
    let _: () = raw.hset("not-a-lock", "color", "blue").await.unwrap();

    let r = run_url("http://127.0.0.1:1/", &["inspect", "x"]).await;
    assert_one_line_error(&r, "unknown URL scheme", "unknown URL scheme `http`");

    let r = run(&s, &["inspect", "plain-string"]).await;
    assert_one_line_error(&r, "a string key", "plain-string");
    let r = run(&s, &["hold", "plain-string", "--wait", "1s"]).await;
    assert_one_line_error(&r, "hold on a string key", "plain-string");
    let r = run(&s, &["inspect", "not-a-lock"]).await;
    assert_one_line_error(&r, "a hash that is not a lock", "not a lock");
    let r = run(&s, &["force-unlock", "plain-string", "--yes"]).await;
    assert_one_line_error(&r, "force-unlock on a string key", "plain-string");

    let r = run(&s, &["hold", "x", "--wait", "5x"]).await;
    assert_one_line_error(&r, "bad duration", "5x");
    let r = run(&s, &["hold", "x", "--lease", "soon"]).await;
    assert_one_line_error(&r, "bad lease", "soon");
    let r = run(&s, &["hold", "x", "--lease", "0s", "--wait", "1s"]).await;
    assert_one_line_error(&r, "zero lease", "lease");

    // the string and the hash are untouched
    let v: String = raw.get("plain-string").await.unwrap();
    assert_eq!(v, "x");
    let exists: i64 = raw.exists("x").await.unwrap();
    assert_eq!(exists, 0);
}

/// `--config FILE` (a Redisson config) replaces `--url`: the file's login and database win.
#[tokio::test]
async fn config_file_replaces_the_url() {
    let s = RedisServer::start_with(&["--requirepass", "pw"]);
    let dir = std::env::temp_dir().join(format!("cli-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("redisson.yaml");
    std::fs::write(
        &file,
        format!(
            "lockWatchdogTimeout: 30000\nsingleServerConfig:\n  address: \"redis://127.0.0.1:{}\"\n  password: pw\n  database: 4\n",
            s.port
        ),
    )
    .unwrap();
    let mut c = redis::Client::open(format!("redis://:pw@127.0.0.1:{}/4", s.port))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg("cfg:lock")
        .arg("11111111-2222-4333-8444-555555555555:1")
        .arg(1)
        .query_async(&mut c)
        .await
        .unwrap();
    // --url points nowhere: the file (login, database 4) is what is used
    let path = file.to_string_lossy().into_owned();
    let r = run_url(
        "redis://127.0.0.1:1/",
        &["--config", &path, "inspect", "cfg:lock"],
    )
    .await;
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(
        r.stdout.contains("11111111-2222-4333-8444-555555555555"),
        "{}",
        r.stdout
    );

    // a refused file is reported naming the key, nothing is connected
    std::fs::write(
        &file,
        "nameMapper: !<com.acme.Mapper> {}\nsingleServerConfig: {address: 'redis://127.0.0.1:1'}\n",
    )
    .unwrap();
    let r = run_url("redis://127.0.0.1:1/", &["--config", &path, "list"]).await;
    assert_eq!(r.code, Some(1), "stdout: {}", r.stdout);
    assert!(r.stderr.contains("nameMapper"), "{}", r.stderr);
    std::fs::remove_dir_all(&dir).ok();
}

/// Connection options that do not go together are usage errors (exit code 2, naming the option),
/// found before anything connects (nothing listens at these addresses); a file they name that
/// cannot be read is an error (exit code 1).
#[tokio::test]
async fn connection_options_that_do_not_go_together_are_usage_errors() {
    for (args, argument, needle) in [
        (
            &["--sentinel", "127.0.0.1:1", "inspect", "x"][..],
            "--master",
            "--master NAME",
        ),
        (&["--master", "locks", "inspect", "x"], "--master", "--sentinel"),
        (
            &["--url", "redis://127.0.0.1:1/", "--tls-insecure", "inspect", "x"],
            "--url",
            "not a rediss:// URL",
        ),
        (
            &[
                "--url",
                "rediss://127.0.0.1:1/",
                "--tls-key",
                "k.pem",
                "inspect",
                "x",
            ],
            "--tls-key",
            "needs --tls-cert",
        ),
        (&["--db", "-1", "inspect", "x"], "--db", "-1"),
    ] {
        let mut json = vec!["--json"];
        json.extend_from_slice(args);
        let r = super::run_env(&json, &[]).await;
        let err = assert_json_error(&r, &format!("{args:?}"), "invalid_argument", needle);
        assert_eq!(err["argument"], argument, "{args:?}: {err}");
        let r = super::run_env(args, &[]).await;
        assert_one_line_error(&r, &format!("{args:?}"), needle);
        assert_eq!(r.code, Some(2), "{args:?}");
    }
    let r = super::run_env(
        &[
            "--url",
            "rediss://127.0.0.1:1/",
            "--tls-ca",
            "/nonexistent/ca.pem",
            "inspect",
            "x",
        ],
        &[],
    )
    .await;
    assert_one_line_error(&r, "an unreadable --tls-ca", "/nonexistent/ca.pem");
    assert_eq!(r.code, Some(1));
}
