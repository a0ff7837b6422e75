//! Serves the lock metrics on `/metrics` (Prometheus text format) while a few tasks contend for
//! one lock.
//!
//! ```text
//! cargo run -p redisson-lock-examples --example metrics --features metrics -- redis://127.0.0.1:6379 127.0.0.1:9898
//! curl -s http://127.0.0.1:9898/metrics | grep redisson_lock
//! ```
//!
//! Any `metrics` recorder works the same way (OpenTelemetry bridges, StatsD, ...): the crate only
//! talks to the `metrics` facade.

use std::net::SocketAddr;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    let listen: SocketAddr = args.next().unwrap_or_else(|| "127.0.0.1:9898".into()).parse()?;
    PrometheusBuilder::new().with_http_listener(listen).install()?;
    println!("serving metrics on http://{listen}/metrics");

    let client = redisson_lock::Client::connect(&url).await?;
    let mut tasks = Vec::new();
    for i in 0..4 {
        let lock = client.lock("example:metrics")?;
        tasks.push(tokio::spawn(async move {
            loop {
                match lock.lock().await {
                    Ok(guard) => {
                        tokio::time::sleep(Duration::from_millis(20 + 10 * i)).await;
                        if let Err(e) = guard.unlock().await {
                            eprintln!("unlock: {e}");
                        }
                    }
                    Err(e) => {
                        eprintln!("lock: {e}");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                }
            }
        }));
    }
    tokio::signal::ctrl_c().await?;
    client.shutdown().await?;
    Ok(())
}
