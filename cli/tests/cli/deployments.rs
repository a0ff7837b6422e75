//! Every command on the deployments people run: a Redis Cluster reached by one node's URL, a
//! cluster behind one address (a cluster-enabled server owning every slot whose user may not run
//! CLUSTER commands: what a proxy looks like), a Sentinel-monitored master (`--sentinel`,
//! `--master`, and a Redisson config file with `sentinelServersConfig`), and a TLS server that
//! wants a client certificate and a password (given through the environment).

use std::time::Duration;

use redisson_lock::{Client, Config};
use serde_json::Value;

use super::{json_lines, run_env, Run, Spawned};
use crate::common::cluster::{one_address, Cluster};
use crate::common::topology::{Topology, MASTER};
use crate::common::{eventually, RedisServer};
use crate::pki::Pki;

const LIMIT: Duration = Duration::from_secs(20);

fn ok(r: &Run, what: &str) {
    assert_eq!(r.code, Some(0), "{what}: stdout {} stderr {}", r.stdout, r.stderr);
}

/// `args` after the connection options `conn`.
fn with<'a>(conn: &[&'a str], args: &[&'a str]) -> Vec<&'a str> {
    let mut all = conn.to_vec();
    all.extend_from_slice(args);
    all
}

/// The line of doctor check `name`.
fn doctor_line<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.get(6..).is_some_and(|r| r.starts_with(&format!("{name}: "))))
        .unwrap_or_else(|| panic!("no `{name}` line in\n{stdout}"))
}

/// The port of the master serving `key`'s slot (asked of `node`).
async fn owner(node: &RedisServer, key: &str) -> u16 {
    let mut c = node.conn().await;
    let slot: i64 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(&mut c)
        .await
        .unwrap();
    let ranges: Vec<redis::Value> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(&mut c)
        .await
        .unwrap();
    for r in ranges {
        let redis::Value::Array(parts) = r else { continue };
        let num = |v: &redis::Value| redis::from_redis_value_ref::<i64>(v).unwrap();
        if (num(&parts[0])..=num(&parts[1])).contains(&slot) {
            let redis::Value::Array(n) = &parts[2] else {
                panic!("{parts:?}")
            };
            return num(&n[1]) as u16;
        }
    }
    panic!("no master serves slot {slot}")
}

/// A hold, inspect, list, watch (with a message), force-unlock and raise-token, each through
/// the options `conn`; `raw` reads what they did. `name` must be free.
async fn every_command(conn: &[&str], env: &[(&str, &str)], c: &Client, name: &str) {
    // hold, then inspect and list see the holder
    let mut hold = Spawned::start_env(&with(conn, &["--json", "hold", name, "--owner", "7"]), env);
    let acquired = hold.event(LIMIT, "acquired").await;
    let field = acquired["field"].as_str().unwrap().to_owned();
    assert!(field.ends_with(":7"), "{acquired}");
    let r = run_env(&with(conn, &["--json", "inspect", name]), env).await;
    ok(&r, "inspect");
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["holders"][0]["field"], field.as_str(), "{v}");
    let pattern = format!("{name}*");
    let r = run_env(&with(conn, &["--json", "list", &pattern]), env).await;
    ok(&r, "list");
    let names: Vec<Value> = json_lines(&r.stdout).iter().map(|l| l["name"].clone()).collect();
    assert_eq!(names, vec![Value::from(name)], "{}", r.stdout);

    // watch sees the release's message and the state change
    let mut watch = Spawned::start_env(&with(conn, &["--json", "watch", name, "--interval", "5s"]), env);
    watch.event(LIMIT, "watching").await;
    watch.event(LIMIT, "state").await;
    hold.signal("-INT");
    hold.event(LIMIT, "released").await;
    assert_eq!(hold.exit_code(LIMIT).await, Some(0));
    let m = watch.event(LIMIT, "message").await;
    assert_eq!(m["message"], "0", "{m}");
    let state = watch.event(LIMIT, "state").await;
    assert_eq!(state["locked"], false, "{state}");
    watch.signal("-INT");
    assert_eq!(watch.exit_code(LIMIT).await, Some(0));

    // force-unlock of a lock held by the library's client
    let g = c.lock(name).unwrap().lock().await.unwrap();
    let r = run_env(&with(conn, &["--json", "force-unlock", name, "--yes"]), env).await;
    ok(&r, "force-unlock");
    assert_eq!(json_lines(&r.stdout)[0]["removed"], true, "{}", r.stdout);
    assert!(!c.lock(name).unwrap().is_locked().await.unwrap());
    drop(g);

    // raise-token, read back by the library's client
    let fenced = format!("{name}:fenced");
    let r = run_env(&with(conn, &["raise-token", &fenced, "500"]), env).await;
    ok(&r, "raise-token");
    assert_eq!(
        c.fenced_lock(&fenced).unwrap().get_token().await.unwrap(),
        Some(500)
    );
}

/// Through the URL of one master, every command reaches the keys of the others: the CLI finds
/// the cluster from that node and talks to it as a cluster client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_works_on_a_cluster_through_one_node() {
    let cluster = Cluster::start(3, 0).await;
    let c = Client::builder().cluster(cluster.urls()).build().await.unwrap();
    let entry = &cluster.nodes[0];
    // a name whose slot another master serves
    let mut name = String::new();
    for i in 0.. {
        name = format!("cl:{i}");
        let fenced = format!("{name}:fenced");
        if owner(entry, &name).await != entry.port && owner(entry, &fenced).await != entry.port {
            break;
        }
    }
    let url = entry.url();
    every_command(&["--url", &url], &[], &c, &name).await;

    // a count's subscribers, summed over the masters: a classic subscriber counts where it is
    // connected, one on each master here
    let latch = format!("{name}:latch");
    assert!(c
        .count_down_latch(&latch)
        .unwrap()
        .try_set_count(2)
        .await
        .unwrap());
    let mut subscribers = Vec::new();
    for n in &cluster.nodes[..cluster.masters] {
        let mut p = redis::Client::open(n.url())
            .unwrap()
            .get_async_pubsub()
            .await
            .unwrap();
        p.subscribe(format!("redisson_countdownlatch__channel__{{{latch}}}"))
            .await
            .unwrap();
        subscribers.push(p);
    }
    let r = run_env(&["--url", &url, "--json", "inspect", &latch], &[]).await;
    ok(&r, "inspect of a count");
    let v = &json_lines(&r.stdout)[0];
    assert_eq!(v["count"], 2, "{v}");
    assert_eq!(v["channels"]["latch"]["subscribers"], 3, "{v}");
    assert_eq!(v["listeners"], "latch", "{v}");

    // doctor: the cluster's checks through that node, the server checks on every master
    let r = run_env(&["--url", &url, "doctor"], &[]).await;
    assert_eq!(
        r.code,
        Some(4),
        "persistence fails (no AOF): {}{}",
        r.stdout,
        r.stderr
    );
    let cluster_line = doctor_line(&r.stdout, "cluster");
    assert!(
        cluster_line.starts_with("ok") && cluster_line.contains("covered by 3 master(s)"),
        "{cluster_line}"
    );
    assert!(
        doctor_line(&r.stdout, "one-address").contains("a Redis Cluster of 3 master(s)"),
        "{}",
        r.stdout
    );
    let persistence = doctor_line(&r.stdout, "persistence");
    assert!(
        persistence.starts_with("FAIL") && persistence.contains("every master (3): appendonly no"),
        "{persistence}"
    );
    assert!(
        r.stdout.contains("a cluster of 3 master(s), via 127.0.0.1:"),
        "{}",
        r.stdout
    );
}

/// A cluster-enabled address whose user may not run CLUSTER commands (a proxy answers like
/// that): the CLI stays on the plain URL, and every command works there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_behind_one_address_stays_on_the_plain_url() {
    let s = one_address(&[]).await;
    let mut admin = s.conn().await;
    let () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("app")
        .arg(&["on", ">pw", "~*", "&*", "+@all", "-cluster"][..])
        .query_async(&mut admin)
        .await
        .unwrap();
    let url = format!("redis://app:pw@127.0.0.1:{}/", s.port);
    let c = Client::builder()
        .url(url.as_str())
        .config(Config::default())
        .build()
        .await
        .unwrap();
    every_command(&["--url", &url], &[], &c, "proxied").await;

    let r = run_env(&["--url", &url, "doctor"], &[]).await;
    let line = doctor_line(&r.stdout, "one-address");
    assert!(
        line.starts_with("ok") && line.contains("cluster behind one address: calls grouped by slot"),
        "{line}"
    );
    assert!(
        r.stdout.contains("(a cluster behind one address)"),
        "the summary says where: {}",
        r.stdout
    );
}

/// `--sentinel ADDR --master NAME` (and a config file with `sentinelServersConfig`): the commands
/// run on the master the sentinels name, doctor checks that master.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_works_through_sentinels() {
    let t = Topology::start().await;
    let c = t.client(Config::default()).await;
    let sentinels: Vec<String> = t
        .sentinels
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    let joined = sentinels.join(",");
    let conn = ["--sentinel", joined.as_str(), "--master", MASTER];
    every_command(&conn, &[], &c, "sent:lock").await;
    let master = t.master().await.expect("a master").port;

    let r = run_env(&with(&conn, &["doctor"]), &[]).await;
    assert_eq!(r.code, Some(0), "only warnings: {}{}", r.stdout, r.stderr);
    let replication = doctor_line(&r.stdout, "replication");
    assert!(replication.contains("2 replica(s)"), "{replication}");
    assert!(
        r.stdout.contains(&format!(
            "master `{MASTER}` at 127.0.0.1:{master} (from the sentinels)"
        )),
        "{}",
        r.stdout
    );

    // a Redisson config file naming the sentinels: watch and doctor take it too
    let dir = std::env::temp_dir().join(format!("cli-sentinel-{}-{}", std::process::id(), master));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("redisson.yaml");
    let addresses: Vec<String> = sentinels.iter().map(|a| format!("\"redis://{a}\"")).collect();
    std::fs::write(
        &file,
        format!(
            "sentinelServersConfig:\n  masterName: {MASTER}\n  sentinelAddresses: [{}]\n",
            addresses.join(", ")
        ),
    )
    .unwrap();
    let path = file.to_string_lossy().into_owned();
    let r = run_env(&["--config", &path, "doctor"], &[]).await;
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(
        doctor_line(&r.stdout, "replication").contains("2 replica(s)"),
        "{}",
        r.stdout
    );
    let mut w = Spawned::start_env(&["--config", &path, "--json", "watch", "sent:cfg"], &[]);
    w.event(LIMIT, "watching").await;
    let g = c.lock("sent:cfg").unwrap().lock().await.unwrap();
    g.unlock().await.unwrap();
    w.event(LIMIT, "message").await;
    w.signal("-INT");
    assert_eq!(w.exit_code(LIMIT).await, Some(0));
    std::fs::remove_dir_all(&dir).ok();
}

/// A TLS port that wants a client certificate, and a password: `rediss://` with `--tls-ca`,
/// `--tls-cert` and `--tls-key`, the password from `REDISSON_LOCK_PASSWORD` (or
/// `REDIS_PASSWORD`), never printed; `--tls-insecure` for a certificate nobody trusts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_works_over_tls_with_the_password_from_the_environment() {
    let Some(pki) = Pki::for_test("every_command_works_over_tls_with_the_password_from_the_environment")
    else {
        return;
    };
    let (s, port) = pki.start_server_with(&pki.server, "yes", &["--requirepass", "s3cret-pw"]);
    let url = format!("rediss://127.0.0.1:{port}/");
    let (ca, cert, key) = (
        pki.ca.display().to_string(),
        pki.client.cert.display().to_string(),
        pki.client.key.display().to_string(),
    );
    let conn = [
        "--url",
        url.as_str(),
        "--tls-ca",
        ca.as_str(),
        "--tls-cert",
        cert.as_str(),
        "--tls-key",
        key.as_str(),
    ];
    let env = [("REDISSON_LOCK_PASSWORD", "s3cret-pw")];
    let c = Client::builder()
        .url(format!("redis://:s3cret-pw@127.0.0.1:{}/", s.port))
        .build()
        .await
        .unwrap();
    every_command(&conn, &env, &c, "tls:lock").await;

    let r = run_env(&with(&conn, &["doctor"]), &[("REDIS_PASSWORD", "s3cret-pw")]).await;
    assert_eq!(
        r.code,
        Some(4),
        "persistence fails (no AOF): {}{}",
        r.stdout,
        r.stderr
    );
    assert!(
        doctor_line(&r.stdout, "version").starts_with("ok"),
        "{}",
        r.stdout
    );
    assert!(doctor_line(&r.stdout, "acl").starts_with("ok"), "{}", r.stdout);

    // a wrong password: an error that does not print it
    let r = run_env(
        &with(&conn, &["inspect", "tls:lock"]),
        &[("REDISSON_LOCK_PASSWORD", "not-the-pw-9f2")],
    )
    .await;
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(!r.stderr.contains("not-the-pw-9f2"), "{}", r.stderr);
    assert!(r.stderr.contains("cannot"), "{}", r.stderr);
    // without the client certificate the server refuses the connection
    let r = run_env(&["--url", &url, "--tls-ca", &ca, "inspect", "tls:lock"], &env).await;
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    // --tls-* with a redis:// URL, or a certificate without its key: usage errors
    let plain = format!("redis://127.0.0.1:{}/", s.port);
    let r = run_env(&["--url", &plain, "--tls-ca", &ca, "inspect", "x"], &env).await;
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("not a rediss:// URL"), "{}", r.stderr);
    let r = run_env(&["--url", &url, "--tls-cert", &cert, "inspect", "x"], &env).await;
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("--tls-key"), "{}", r.stderr);

    // a certificate from an unknown CA: refused, unless --tls-insecure
    let (_foreign, foreign_port) = pki.start_server(&pki.foreign, "no");
    let foreign = format!("rediss://127.0.0.1:{foreign_port}/");
    let r = run_env(&["--url", &foreign, "--tls-ca", &ca, "inspect", "x"], &[]).await;
    assert_eq!(r.code, Some(1), "an untrusted certificate: {}", r.stderr);
    let r = run_env(&["--url", &foreign, "--tls-insecure", "inspect", "x"], &[]).await;
    ok(&r, "--tls-insecure");
    assert!(r.stdout.contains("not locked"), "{}", r.stdout);
    let mut w = Spawned::start_env(
        &["--url", &foreign, "--tls-insecure", "--json", "watch", "x"],
        &[],
    );
    w.event(LIMIT, "watching").await;
    w.signal("-INT");
    assert_eq!(w.exit_code(LIMIT).await, Some(0));
    // the server's own view: the hold and force-unlock above left nothing behind
    let mut raw = redis::Client::open(format!("redis://:s3cret-pw@127.0.0.1:{}/", s.port))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    eventually(LIMIT, "no lock left", || {
        let mut raw = raw.clone();
        async move {
            let n: i64 = redis::cmd("EXISTS")
                .arg("tls:lock")
                .query_async(&mut raw)
                .await
                .unwrap();
            n == 0
        }
    })
    .await;
    let _: () = redis::cmd("PING").query_async(&mut raw).await.unwrap();
}
