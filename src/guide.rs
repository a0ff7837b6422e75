//! The guides, as they are in the repository's `docs/` directory: for Redisson users, the
//! guarantees, deployment, operations and the wire protocol. These modules hold no code; each
//! renders one guide, and its Rust blocks are doctests.
//!
//! | guide | what |
//! |---|---|
//! | [`from_redisson`] | coming from Redisson: every lock method, error and config key, the pitfalls, the differences on purpose |
//! | [`guarantees`] | what holds when requests time out, futures are dropped, Redis stalls or a service shuts down, and the tests that show it |
//! | [`deployment`] | standalone, Sentinel, Cluster, one address, managed services; pub/sub modes, failover, loss detection, `redisson.yaml` |
//! | [`operations`] | `redisson-lock doctor`, ACL rules, metrics, logs |
//! | [`protocol`] | the keys, hash fields, scripts, channels and messages shared with Redisson |
//!
//! The command-line tool's manual is
//! [docs/cli.md](https://github.com/redisson-lock/redisson-lock/blob/main/docs/cli.md) in the
//! repository.

// A guide links to another with a reference link (`[text][deployment-lost]`) whose label the
// Markdown file defines at its foot for GitHub (`deployment.md#...`). The definitions below come
// first in each module's docs, and the first definition of a label wins, so on docs.rs the same
// links lead to the rendered modules. tests/markdown.rs checks that every label a guide uses is
// defined in both places.
macro_rules! guide_links {
    () => {
        "[cli]: https://github.com/redisson-lock/redisson-lock/blob/main/docs/cli.md\n\
         [deployment-lost]: crate::guide::deployment#knowing-a-lock-is-lost\n\
         [deployment-one-address]: crate::guide::deployment#a-cluster-behind-one-address\n\
         [deployment-pubsub]: crate::guide::deployment#redis-cluster-which-pubsub-mode\n\
         [deployment-yaml]: crate::guide::deployment#using-your-redissonyaml\n\
         [deployment-versions]: crate::guide::deployment#supported-redis-versions\n\
         [operations-metrics]: crate::guide::operations#metrics\n\
         [operations-acl]: crate::guide::operations#acl-rules-for-the-locks\n\
         [protocol]: crate::guide::protocol\n\
         [protocol-renewal]: crate::guide::protocol#5-renewal\n\
         [guarantees-cannot]: crate::guide::guarantees#what-a-redis-lock-cannot-promise\n\
         [guarantees-may-have-run]: crate::guide::guarantees#every-request-may-have-run\n\n"
    };
}

// The guides whose examples use every feature (Redisson's config files, TLS) are doctests of a
// build with all of them (`--all-features`, as the suite runs); without them their examples are
// not collected.
#[cfg(any(
    not(doctest),
    all(feature = "tls-rustls", feature = "metrics", feature = "redisson-config")
))]
pub mod from_redisson {
    #![doc = guide_links!()]
    #![doc = include_str!("../docs/from-redisson.md")]
}

pub mod guarantees {
    #![doc = guide_links!()]
    #![doc = include_str!("../docs/guarantees.md")]
}

#[cfg(any(
    not(doctest),
    all(feature = "tls-rustls", feature = "metrics", feature = "redisson-config")
))]
pub mod deployment {
    #![doc = guide_links!()]
    #![doc = include_str!("../docs/deployment.md")]
}

pub mod operations {
    #![doc = guide_links!()]
    #![doc = include_str!("../docs/operations.md")]
}

pub mod protocol {
    #![doc = guide_links!()]
    #![doc = include_str!("../docs/protocol.md")]
}
