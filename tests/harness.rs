//! The test harness' own promise: a redis-server a test starts is its own, never another
//! test's server that happens to answer on the port it picked (tests run side by side, and
//! some flush, restart or fail over their server).

mod common;

use common::RedisServer;

#[test]
fn a_port_another_server_answers_on_is_not_taken_as_ours() {
    let other = RedisServer::start();
    // the child started on that port cannot bind it and exits; the one that answers is not it
    assert!(
        RedisServer::try_start_on(other.port, &[]).is_none(),
        "a server on port {} that this test did not start was taken as its own",
        other.port
    );
    // a free port still works, and the first server was left alone, its directory too
    assert!(other.dir().is_dir(), "{}", other.dir().display());
    let mine = RedisServer::try_start_on(common::free_port(), &[]).expect("a server on a free port");
    assert_ne!(mine.port, other.port);
    let mut c = redis::Client::open(other.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}
