//! `raise-token`: lifts a fenced lock's token counter (`redisson_lock_token:{NAME}`) to at least
//! a floor, never lowering it: the operator's recovery after Redis lost the counter (a restart
//! without persistence, a failover to a replica that missed increments), when the protected
//! resource refuses every new holder because it has stored higher fences than Redis now hands
//! out. The raise is one script (`RFencedLock::raise_token_to`); the value shown before it is a
//! separate read, for the report only.

use serde_json::json;

use redisson_lock::{inspect, Client};

use crate::render::Out;
use crate::{now_ms, Failure, Outcome};

pub(crate) async fn raise_token(
    client: &Client,
    out: &Out,
    name: &str,
    floor: u64,
) -> Result<Outcome, Failure> {
    let lock = client.fenced_lock(name)?;
    let key = inspect::fence_token_key(name);
    let before = lock.get_token().await?;
    let after = lock.raise_token_to(floor).await?;
    let raised = before.map_or(after > 0, |b| after > b);
    out.emit(
        json!({
            "event": "raise-token",
            "name": name,
            "key": key,
            "floor": floor,
            "before": before,
            "after": after,
            "raised": raised,
            "ts_ms": now_ms(),
        }),
        || {
            let was = before.map_or_else(|| "no counter".to_owned(), |b| b.to_string());
            if raised {
                format!(
                    "raised {key} from {was} to {after}: the next acquisition takes {}",
                    after + 1
                )
            } else {
                format!("{key} is {after} ({was} before), not below {floor}: unchanged")
            }
        },
    );
    Ok(Outcome::Done)
}
