//! The lock kinds. Each is one `lua/<kind>/` folder plus one module here that says what it sends
//! and how it reads the replies (the seam, `crate::kind`); its type here names it in the generic
//! public API: [`Lock<K>`](crate::Lock) and [`Guard<K>`](crate::Guard) are written once for every
//! kind, and [`RLock`](crate::RLock), [`RFairLock`](crate::RFairLock), ... are their aliases.
//! A kind's type documents what it keeps in Redis and what it adds to the generic API.

pub(crate) mod fair;
pub(crate) mod fenced;
pub(crate) mod non_reentrant;
pub(crate) mod reentrant;
pub(crate) mod rw;
pub(crate) mod spin;

pub use fair::{Fair, FairKind, NonReentrantFair};
pub use fenced::Fenced;
pub use non_reentrant::NonReentrant;
pub use reentrant::Reentrant;
pub use rw::{Read, Write};
pub use spin::Spin;
