//! `tracing` spans around acquire and release carry the lock's key and the owner's hash field
//! (what a log line or a trace needs to tell two holders apart), for a guard's unlock and for
//! the queued release of a dropped guard.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{eventually, RedisServer};
use redisson_lock::Config;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// A span's name and fields (as recorded, last value wins).
type SpanRecord = (String, HashMap<String, String>);

/// Every span this test saw, by id.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<HashMap<u64, SpanRecord>>>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Seen {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .insert(id.into_u64(), (attrs.metadata().name().to_owned(), fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some((_, fields)) = self.0.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
}

impl Seen {
    fn spans(&self, name: &str) -> Vec<HashMap<String, String>> {
        self.0
            .lock()
            .unwrap()
            .values()
            .filter(|(n, _)| n == name)
            .map(|(_, f)| f.clone())
            .collect()
    }
}

#[tokio::test(flavor = "current_thread")]
async fn acquire_and_release_spans_name_the_key_and_the_owner() {
    let seen = Seen::default();
    let subscriber = tracing_subscriber::registry()
        .with(seen.clone())
        .with(tracing_subscriber::filter::LevelFilter::DEBUG);
    let _default = tracing::subscriber::set_default(subscriber);

    let s = RedisServer::start();
    let client = s.client(Config::default()).await;
    let lock = client.lock("span:order:7").unwrap();
    let g = lock.lock().await.unwrap();
    let field = g.field().to_owned();
    g.unlock().await.unwrap();

    let acquires = seen.spans("acquire");
    assert!(
        acquires
            .iter()
            .any(|f| f.get("key").map(String::as_str) == Some("span:order:7")
                && f.get("field") == Some(&field)
                && f.get("kind").map(String::as_str) == Some("lock")),
        "an acquire span with key, owner field and kind: {acquires:?}"
    );
    let releases = seen.spans("release");
    assert!(
        releases
            .iter()
            .any(|f| f.get("key").map(String::as_str) == Some("span:order:7")
                && f.get("field") == Some(&field)),
        "a release span with key and owner field: {releases:?}"
    );

    // a dropped guard's queued release is traced the same way
    let g = lock.lock().await.unwrap();
    let dropped_field = g.field().to_owned();
    drop(g);
    eventually(Duration::from_secs(5), "the queued release ran", || {
        let c = client.clone();
        async move { c.stats().holds == 0 && c.stats().queued_releases == 0 }
    })
    .await;
    let releases = seen.spans("release");
    assert!(
        releases.iter().any(|f| f.get("field") == Some(&dropped_field)
            && f.get("on_drop").map(String::as_str) == Some("true")),
        "the release on drop: {releases:?}"
    );
}
