//! Model checks (loom) of one channel's state in the hub: every interleaving of waiters
//! joining and leaving with the channel's driver, with the real hub, channel state, driver and
//! `Notify` protocol, against a modelled server whose SUBSCRIBE may time out (having run or
//! not: the driver cannot tell). What must hold in every interleaving:
//! - a waiter told it is subscribed is subscribed on the server for as long as it stays;
//! - one command of a channel is in flight at a time (one driver per channel);
//! - when every waiter has left, the server keeps no subscription and the hub no channel;
//! - a joiner waiting for a SUBSCRIBE is told how it ended (a lost wake-up is a deadlock).
//!
//! Run by `scripts/test` (`LOOM_MAX_PREEMPTIONS` bounds the preemptions explored).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use loom::future::block_on;
use loom::sync::{mpsc, Mutex as LoomMutex};
use loom::thread;

use super::channel::Change;
use super::*;

const CHANNEL: &str = "redisson_lock__channel:{lock}";

type Driver = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The server's side of one channel, and the thread the channel's drivers run on.
pub(crate) struct Server {
    state: LoomMutex<ServerState>,
    /// Where the hub starts drivers: one thread runs them one after another (the hub starts
    /// a channel's next driver only once the previous one has let go of the channel).
    drivers: LoomMutex<Option<mpsc::Sender<Option<Driver>>>>,
}

#[derive(Default)]
struct ServerState {
    subscribed: bool,
    in_flight: bool,
    /// How the next SUBSCRIBEs end: `Some(ran)` times out (after running, or not).
    subscribes: VecDeque<Option<bool>>,
}

impl Server {
    /// The server, and the thread that runs the drivers until [`stop_drivers`](Self::stop_drivers).
    fn new(subscribes: &[Option<bool>]) -> (Arc<Server>, thread::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel::<Option<Driver>>();
        let server = Server {
            state: LoomMutex::new(ServerState {
                subscribes: subscribes.iter().copied().collect(),
                ..ServerState::default()
            }),
            drivers: LoomMutex::new(Some(tx)),
        };
        let runner = thread::spawn(move || {
            while let Ok(Some(drive)) = rx.recv() {
                block_on(drive);
            }
        });
        (Arc::new(server), runner)
    }

    fn lock(&self) -> loom::sync::MutexGuard<'_, ServerState> {
        self.state.lock().expect("unpoisoned")
    }

    fn subscribed(&self) -> bool {
        self.lock().subscribed
    }

    /// One command, as the hub's connection would send it.
    pub(super) fn command(&self, change: &Change) -> std::result::Result<(), Failure> {
        {
            let mut s = self.lock();
            assert!(!s.in_flight, "two commands of one channel in flight: two drivers");
            s.in_flight = true;
        }
        thread::yield_now(); // the round trip
        let mut s = self.lock();
        s.in_flight = false;
        match change {
            Change::Unsubscribe => {
                s.subscribed = false;
                Ok(())
            }
            Change::Subscribe => match s.subscribes.pop_front().flatten() {
                None => {
                    s.subscribed = true;
                    Ok(())
                }
                Some(ran) => {
                    s.subscribed |= ran;
                    Err(Failure::Timeout(Duration::from_secs(1)))
                }
            },
        }
    }

    /// Runs a channel's driver on the drivers' thread.
    pub(super) fn spawn_driver(&self, drive: impl Future<Output = ()> + Send + 'static) {
        let drivers = self.drivers.lock().expect("unpoisoned");
        let tx = drivers
            .as_ref()
            .expect("a driver started after every waiter left");
        tx.send(Some(Box::pin(drive))).expect("the drivers' thread runs");
    }

    /// No driver starts any more: the drivers' thread ends after the ones started so far.
    fn stop_drivers(&self) {
        let tx = self.drivers.lock().expect("unpoisoned").take();
        tx.expect("stopped once")
            .send(None)
            .expect("the drivers' thread runs");
    }
}

fn hub(server: &Arc<Server>) -> Arc<Hub> {
    Arc::new(Hub::new(
        Hub::new_channels(),
        Some(PubSubConn::Model(server.clone())),
        PubSubCommands::Classic,
    ))
}

/// A waiter: joins the channel, checks the server has it while it stays, leaves.
fn spawn_waiter(hub: &Arc<Hub>, server: &Arc<Server>) -> thread::JoinHandle<()> {
    let (hub, server) = (hub.clone(), server.clone());
    thread::spawn(move || {
        block_on(async {
            if let Ok(sub) = hub
                .subscribe(CHANNEL, super::Messages::Unlock, Duration::from_secs(1))
                .await
            {
                assert!(
                    server.subscribed(),
                    "a waiter was told it is subscribed; the server disagrees"
                );
                thread::yield_now();
                assert!(
                    server.subscribed(),
                    "the server dropped a subscription a waiter still uses"
                );
                drop(sub);
            }
        })
    })
}

/// Two waiters on one channel; then nothing may be left on either side.
fn two_waiters(subscribes: &[Option<bool>]) {
    let (server, drivers) = Server::new(subscribes);
    let hub = hub(&server);
    let waiters = [spawn_waiter(&hub, &server), spawn_waiter(&hub, &server)];
    for w in waiters {
        w.join().expect("waiter");
    }
    server.stop_drivers();
    drivers.join().expect("drivers");
    assert!(
        !server.subscribed(),
        "the server keeps a subscription nobody uses"
    );
    assert_eq!(hub.channel_count(), 0, "the hub keeps a channel nobody uses");
    assert_eq!(hub.waiter_count(), 0);
}

#[test]
fn waiters_share_one_subscription_and_leave_nothing_subscribed() {
    loom::model(|| two_waiters(&[]));
}

#[test]
fn a_subscribe_that_timed_out_after_running_is_undone() {
    loom::model(|| two_waiters(&[Some(true)]));
}

#[test]
fn a_subscribe_that_timed_out_before_running_is_retried_or_forgotten() {
    loom::model(|| two_waiters(&[Some(false)]));
}
