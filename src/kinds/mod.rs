//! The lock kinds: each is one `lua/<kind>/` folder plus one module here that describes its
//! requests, decodes its replies and states its wake policy (the seam: [`crate::kind`]),
//! with thin, separately documented public types over the generic core.

pub(crate) mod fair;
pub(crate) mod fenced;
pub(crate) mod lock;
pub(crate) mod non_reentrant;
pub(crate) mod rw;
pub(crate) mod spin;
