//! Every public type can cross threads and live in a `'static` task (`Send + Sync + 'static`),
//! and every future the async API returns is `Send` (a tokio multi-threaded runtime may move it
//! between workers). Checked by the compiler: a type or future that loses one of these bounds
//! makes this target fail to build.

use std::future::Future;
use std::time::Duration;

use redisson_lock::inspect;

fn shareable<T: Send + Sync + 'static>() {}

fn send<F: Future + Send>(f: F) -> F {
    f
}

macro_rules! all_shareable {
    ($($t:ty),* $(,)?) => {
        $( shareable::<$t>(); )*
    };
}

#[cfg(feature = "redisson-config")]
#[test]
fn the_redisson_config_types_are_send_sync_static() {
    all_shareable!(redisson_lock::RedissonConfig, redisson_lock::RedissonServers);
}

#[test]
fn public_types_are_send_sync_static() {
    use redisson_lock::*;
    use redisson_lock::{blocking, inspect, kinds};
    all_shareable!(
        Client,
        ClientStats,
        ClientBuilder,
        Config,
        Connection,
        Error,
        OwnerId,
        LostReason,
        LeaseState,
        LossDetection,
        Ttl,
        Unlocked,
        BackOff,
        Box<dyn AnyLock>,
        Box<dyn AnyGuard>,
        RMultiLock,
        MultiGuard,
        Member,
        RReadWriteLock,
        RLock,
        LockGuard,
        RFairLock,
        FairGuard,
        RNonReentrantFairLock,
        NonReentrantFairGuard,
        RFencedLock,
        FencedGuard,
        RSpinLock,
        SpinGuard,
        RNonReentrantLock,
        NonReentrantGuard,
        RReadLock,
        ReadGuard,
        RWriteLock,
        WriteGuard,
        kinds::Reentrant,
        kinds::Fair,
        kinds::NonReentrantFair,
        kinds::Fenced,
        kinds::Spin,
        kinds::NonReentrant,
        kinds::Read,
        kinds::Write,
        inspect::LockInfo,
        inspect::Holder,
        inspect::Waiter,
        inspect::Field,
        inspect::Layout,
        inspect::KeySpec,
        inspect::ChannelSpec,
        blocking::Client,
        blocking::RLock,
        blocking::LockGuard,
        blocking::RFencedLock,
        blocking::FencedGuard,
        blocking::RReadWriteLock,
        blocking::RMultiLock,
        blocking::MultiGuard,
    );
}

/// Never called: it only has to compile.
#[allow(dead_code)]
async fn async_api_futures_are_send(
    client: redisson_lock::Client,
    fenced: redisson_lock::RFencedLock,
    rw: redisson_lock::RReadWriteLock,
    multi: redisson_lock::RMultiLock,
    any: Box<dyn redisson_lock::AnyLock>,
    mut conn: redisson_lock::Connection,
) -> redisson_lock::Result<()> {
    let d = Duration::from_millis(1);
    let lock = client.lock("a")?;
    let g = send(lock.lock()).await?;
    let again = send(g.reenter()).await?;
    send(again.reenter_with_lease(d)).await?.unlock().await?;
    let _lost = send(g.lost());
    send(again.unlock()).await?;
    send(g.unlock()).await?;
    let _g = send(lock.lock_with_lease(d)).await?;
    send(lock.try_lock()).await?;
    send(lock.try_lock_for(d)).await?;
    send(lock.try_lock_with_lease(d, d)).await?;
    send(lock.run(async {})).await?;
    send(lock.unlock()).await.ok();
    send(lock.force_unlock()).await?;
    send(lock.is_locked()).await?;
    send(lock.is_held()).await.ok();
    send(lock.is_held_by(7)).await?;
    send(lock.hold_count()).await.ok();
    send(lock.remain_time_to_live()).await?;
    send(lock.ttl()).await?;
    let (_token, fg) = send(fenced.lock_and_get_token()).await?;
    send(fenced.try_lock_and_get_token()).await?;
    send(fenced.try_lock_for_and_get_token(d)).await?;
    send(fenced.try_lock_with_lease_and_get_token(d, d)).await?;
    let _held = send(fenced.lock_with_lease_and_get_token(d)).await?;
    send(fenced.get_token()).await?;
    send(fenced.raise_token_to(1)).await?;
    send(fg.unlock()).await?;
    let w = send(rw.write_lock().lock()).await?;
    send(send(w.downgrade()).await?.unlock()).await?;
    let mg = send(multi.lock()).await?;
    let _lost = send(mg.lost());
    send(mg.unlock()).await?;
    send(multi.try_lock_for(d)).await?;
    send(any.lock()).await?;
    send(inspect::inspect(&mut conn, "a")).await?;
    send(inspect::scan_locks(&mut conn, "a*")).await?;
    send(redisson_lock::Client::connect("redis://127.0.0.1/")).await?;
    send(client.shutdown()).await
}

#[test]
fn the_async_api_compiles_as_send() {
    // the assertion is that `async_api_futures_are_send` compiled; its own future is `Send` too
    fn check<F: Future + Send>(
        _: fn(
            redisson_lock::Client,
            redisson_lock::RFencedLock,
            redisson_lock::RReadWriteLock,
            redisson_lock::RMultiLock,
            Box<dyn redisson_lock::AnyLock>,
            redisson_lock::Connection,
        ) -> F,
    ) {
    }
    check(async_api_futures_are_send);
}
