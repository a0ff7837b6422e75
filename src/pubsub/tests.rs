//! Unit tests of the hub: message semantics, reference counting, modes, health and stale
//! subscriptions (the ones that need a server are in `tests/pubsub.rs`).

use super::*;
use redis::{PushInfo, PushKind, Value};

fn message(channel: &str, payload: &str) -> PushInfo {
    PushInfo {
        kind: PushKind::Message,
        data: vec![
            Value::BulkString(channel.as_bytes().to_vec()),
            Value::BulkString(payload.as_bytes().to_vec()),
        ],
    }
}

async fn waiters(hub: &Arc<Hub>, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    let mut v = Vec::new();
    for _ in 0..n {
        let sub = hub
            .subscribe("ch", super::Messages::Unlock, Duration::from_secs(1))
            .await
            .unwrap();
        v.push(tokio::spawn(async move { sub.channel().notify.notified().await }));
    }
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    v
}

#[tokio::test]
async fn zero_wakes_one_one_wakes_all_others_are_ignored() {
    let channels = Hub::new_channels();
    let hub = Arc::new(Hub::new(channels.clone(), None, PubSubCommands::Classic));
    let handler = push_handler(Pushes {
        channels,
        ..Default::default()
    });
    let ws = waiters(&hub, 3).await;
    assert_eq!(hub.waiter_count(), 3);

    handler(message("ch", "7")).unwrap();
    handler(message("other", "0")).unwrap();
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        ws.iter().filter(|w| w.is_finished()).count(),
        0,
        "unknown payloads and channels wake nobody"
    );

    handler(message("ch", "0")).unwrap();
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        ws.iter().filter(|w| w.is_finished()).count(),
        1,
        "`0` wakes exactly one"
    );

    handler(message("ch", "1")).unwrap();
    for w in ws {
        tokio::time::timeout(Duration::from_secs(1), w)
            .await
            .unwrap()
            .unwrap();
    }
}

#[test]
fn backoff_doubles_to_a_cap_and_one_probe_goes_through_per_period() {
    let ms = Duration::from_millis;
    assert_eq!(Health::backoff(1), ms(100));
    assert_eq!(Health::backoff(2), ms(200));
    assert_eq!(Health::backoff(3), ms(400));
    assert_eq!(Health::backoff(7), ms(5000));
    assert_eq!(Health::backoff(u32::MAX), ms(5000));

    let t0 = Instant::now();
    let mut h = Health::default();
    assert!(h.is_healthy());
    assert!(
        h.admit(t0).is_ok() && h.admit(t0).is_ok(),
        "healthy: never refused"
    );

    h.failed(t0, &Failure::Timeout(ms(300)));
    assert!(!h.is_healthy());
    assert!(matches!(h.admit(t0 + ms(1)), Err(Error::CommandTimeout(d)) if d == ms(300)));
    assert!(h.admit(t0 + ms(99)).is_err());
    assert!(h.admit(t0 + ms(100)).is_ok(), "the period is over: one probe");
    assert!(h.admit(t0 + ms(101)).is_err(), "only one per period");
    assert!(h.admit(t0 + ms(200)).is_ok(), "the probe did not answer: another");

    h.failed(t0 + ms(300), &Failure::Timeout(ms(300)));
    assert!(h.admit(t0 + ms(499)).is_err(), "second failure: 200 ms");
    assert!(h.admit(t0 + ms(500)).is_ok());

    h.succeeded();
    assert!(h.is_healthy());
    assert!(h.admit(t0 + ms(501)).is_ok() && h.admit(t0 + ms(501)).is_ok());
    h.failed(t0 + ms(600), &Failure::Timeout(ms(300)));
    assert!(
        h.admit(t0 + ms(699)).is_err() && h.admit(t0 + ms(700)).is_ok(),
        "reset to 100 ms"
    );
}

#[tokio::test]
async fn channels_are_refcounted_and_removed_with_their_last_user() {
    let channels = Hub::new_channels();
    let hub = Arc::new(Hub::new(channels, None, PubSubCommands::Classic));
    assert!(hub.is_healthy());
    let a1 = hub
        .subscribe("a", super::Messages::Unlock, Duration::ZERO)
        .await
        .unwrap();
    let a2 = hub
        .subscribe("a", super::Messages::Unlock, Duration::ZERO)
        .await
        .unwrap();
    let b = hub
        .subscribe("b", super::Messages::Unlock, Duration::ZERO)
        .await
        .unwrap();
    assert!(Arc::ptr_eq(&a1.channel(), &a2.channel()));
    assert_eq!((hub.channel_count(), hub.waiter_count()), (2, 3));
    drop(a1);
    assert_eq!((hub.channel_count(), hub.waiter_count()), (2, 2));
    drop(b);
    assert_eq!((hub.channel_count(), hub.waiter_count()), (1, 1));
    drop(a2);
    assert_eq!((hub.channel_count(), hub.waiter_count()), (0, 0));
}

#[test]
fn each_mode_has_its_script_argument_and_commands() {
    let all = [
        PubSubCommands::Classic,
        PubSubCommands::Sharded,
        PubSubCommands::Both,
    ];
    let args: Vec<&str> = all.iter().map(|m| m.script_arg()).collect();
    assert_eq!(
        args,
        ["PUBLISH", "SPUBLISH", "BOTH"],
        "lua/common/notify.lua's values"
    );
    let kinds: Vec<(bool, bool)> = all.iter().map(|m| (m.classic(), m.sharded())).collect();
    assert_eq!(kinds, [(true, false), (false, true), (true, true)]);
}

#[tokio::test]
async fn a_sharded_message_wakes_the_same_channel() {
    // PubSubCommands::Both listens on the classic and the sharded channel of one name: either wakes
    let channels = Hub::new_channels();
    let hub = Arc::new(Hub::new(channels.clone(), None, PubSubCommands::Both));
    let handler = push_handler(Pushes {
        channels,
        ..Default::default()
    });
    let ws = waiters(&hub, 2).await;
    let mut push = message("ch", "0");
    push.kind = PushKind::SMessage;
    handler(push).unwrap();
    handler(message("ch", "0")).unwrap();
    for w in ws {
        tokio::time::timeout(Duration::from_secs(1), w)
            .await
            .unwrap()
            .unwrap();
    }
}

#[tokio::test]
async fn joining_without_a_command_only_when_already_subscribed() {
    let channels = Hub::new_channels();
    let hub = Arc::new(Hub::new(channels, None, PubSubCommands::Classic));
    assert!(
        hub.join_subscribed("ch").is_none(),
        "no pub/sub connection: nothing to join"
    );
    // (with a connection: see tests/rlock.rs, a second waiter on a subscribed channel
    // makes one attempt before it sleeps)
}

#[tokio::test]
async fn a_server_side_sunsubscribe_makes_subscriptions_stale_and_wakes_waiters() {
    let channels = Hub::new_channels();
    let hub = Arc::new(Hub::new(channels.clone(), None, PubSubCommands::Sharded));
    let handler = push_handler(Pushes {
        channels,
        ..Default::default()
    });
    let sub = hub
        .subscribe("ch", super::Messages::Unlock, Duration::ZERO)
        .await
        .unwrap();
    let ws = waiters(&hub, 2).await;
    let sunsubscribe = || PushInfo {
        kind: PushKind::SUnsubscribe,
        data: vec![Value::BulkString(b"ch".to_vec()), Value::Int(0)],
    };
    handler(sunsubscribe()).unwrap();
    assert!(!sub.is_stale(), "not subscribed yet: nothing was dropped");
    sub.channel().state.lock().subscribed = true;
    handler(sunsubscribe()).unwrap();
    assert!(sub.is_stale(), "the server dropped the subscription");
    for w in ws {
        tokio::time::timeout(Duration::from_secs(1), w)
            .await
            .unwrap()
            .unwrap();
    }
    let again = hub
        .subscribe("ch", super::Messages::Unlock, Duration::ZERO)
        .await
        .unwrap();
    assert!(!again.is_stale(), "a new user joins after the drop");
}

#[tokio::test]
async fn disconnection_wakes_everyone_and_makes_subscriptions_stale() {
    let channels = Hub::new_channels();
    let hub = Arc::new(Hub::new(channels.clone(), None, PubSubCommands::Classic));
    let handler = push_handler(Pushes {
        channels,
        ..Default::default()
    });
    let sub = hub
        .subscribe("ch", super::Messages::Unlock, Duration::ZERO)
        .await
        .unwrap();
    sub.channel().state.lock().subscribed = true;
    let ws = waiters(&hub, 2).await;
    handler(PushInfo {
        kind: PushKind::Disconnection,
        data: vec![],
    })
    .unwrap();
    assert!(
        sub.is_stale(),
        "messages sent while disconnected are lost: the waiter joins again and re-tries"
    );
    for w in ws {
        tokio::time::timeout(Duration::from_secs(1), w)
            .await
            .unwrap()
            .unwrap();
    }
}
