//! The order database of the fenced-write example: SQLite, one row per order, one row per
//! payment. The example (`main.rs`) uses it, and so do the crate's tests (`tests/fenced/`) and the
//! interop matrix (its Java side runs the same statements over JDBC: `FencedWriteCommands.java`).
//!
//! **The invariant: an order is charged at most once** — at most one `payments` row per order —
//! whatever the lock did. A lock cannot promise that: its holder can pause (a GC pause, a slow
//! call, a network stall) past its lease, a second holder comes in, and both write. The
//! database can, because it sees every write in one order. Two ways are shown:
//!
//! * **Fencing token** ([`Guard::Fence`]): every lock acquisition takes a token higher than all
//!   before it (`RFencedLock`, the counter `redisson_lock_token:{name}`), and the order row keeps
//!   the highest token it has seen (`fence`). A holder first *claims* the row with its token
//!   (`fence < token`, else a newer holder was here: stop), then reads it, then writes only if
//!   its token is still the row's (`fence <= token`, in the same statement as the write). A
//!   holder that paused past its lease finds a newer token in the row and its write changes
//!   nothing.
//! * **Idempotency key** ([`Guard::IdempotencyKey`]): the payment carries a request id that names
//!   the operation (`charge:order:3`), not the attempt, and `request_id` is `UNIQUE`: a second
//!   charge of the same order is refused whoever sends it, and whenever.
//!
//! Why the claim: a database that checks the token only at write time orders the writes, but a
//! stale holder that writes *before* the new holder's first statement looks current to it — and
//! the new holder, having read "pending" just before, would charge again. Claiming before reading
//! means that from the new holder's first read on, every older token is refused.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, ErrorCode, TransactionBehavior};

/// The tables. `payments.request_id` is `UNIQUE`: the idempotency key.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS orders (
    id           INTEGER PRIMARY KEY,
    amount_cents INTEGER NOT NULL,
    status       TEXT    NOT NULL DEFAULT 'pending', -- 'pending' until charged, then 'paid'
    fence        INTEGER NOT NULL DEFAULT 0          -- the highest lock token this order has seen
);
CREATE TABLE IF NOT EXISTS payments (
    id           INTEGER PRIMARY KEY,
    order_id     INTEGER NOT NULL REFERENCES orders(id),
    request_id   TEXT    NOT NULL UNIQUE,            -- the idempotency key
    amount_cents INTEGER NOT NULL,
    worker       TEXT    NOT NULL,
    token        INTEGER NOT NULL                    -- the lock token its worker held
);";

/// How the database checks a charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// No check: the worker trusts that what it read under the lock is still true when it
    /// writes. A worker that paused past its lease charges a second time.
    Unguarded,
    /// The fencing token: claim the row with the token before reading it, write only while the
    /// token is still the row's.
    Fence,
    /// The idempotency key: the payment's request id names the operation, and it is `UNIQUE`.
    IdempotencyKey,
}

impl Guard {
    /// The request id a worker's payment carries: with an idempotency key the operation's own
    /// (the same for every worker and every retry); otherwise one per attempt, which is what
    /// code that never thought of a second attempt sends.
    pub fn request_id(self, order: i64, worker: &str) -> String {
        match self {
            Guard::IdempotencyKey => format!("charge:order:{order}"),
            Guard::Unguarded | Guard::Fence => format!("charge:order:{order}:{worker}"),
        }
    }
}

/// What a worker finds when it starts on an order, under the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Begin {
    /// The order waits for its charge of this amount.
    Pending { amount_cents: i64 },
    /// It was charged already: nothing to do.
    Paid,
    /// ([`Guard::Fence`]) The order has seen a token newer than ours (`fence`): another holder
    /// came after us, our lock is stale; do nothing.
    Stale { fence: u64 },
}

/// The outcome of a charge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Charge {
    /// The payment is written and the order paid.
    Written,
    /// The database refused it; nothing was written.
    Refused(Refusal),
}

/// Why the database refused a charge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The order's fence is above the worker's token: a newer lock holder claimed it.
    StaleToken { token: u64, fence: u64 },
    /// A payment with this request id exists already.
    DuplicateRequest { request_id: String },
}

/// One row of `payments`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payment {
    pub request_id: String,
    pub amount_cents: i64,
    pub worker: String,
    pub token: u64,
}

/// A connection to the order database; each worker opens its own (several threads or
/// processes, Java's too, share the file).
pub struct Orders {
    db: Connection,
}

impl Orders {
    /// Opens the database at `path`, creating the file and the tables when missing. Writers of
    /// other connections are waited for up to 5 s.
    pub fn open(path: &Path) -> rusqlite::Result<Orders> {
        let db = Connection::open(path)?;
        db.busy_timeout(Duration::from_secs(5))?;
        db.execute_batch(SCHEMA)?;
        Ok(Orders { db })
    }

    /// Adds a pending order.
    pub fn add_order(&self, id: i64, amount_cents: i64) -> rusqlite::Result<()> {
        self.db.execute(
            "INSERT INTO orders (id, amount_cents) VALUES (?1, ?2)",
            params![id, amount_cents],
        )?;
        Ok(())
    }

    /// Starts work on `order` as the lock holder with `token`: with [`Guard::Fence`] it claims
    /// the order first ([`claim`](Self::claim)), then reads it.
    pub fn begin(&self, order: i64, token: u64, guard: Guard) -> rusqlite::Result<Begin> {
        if guard == Guard::Fence {
            if let Some(fence) = self.claim(order, token)? {
                return Ok(Begin::Stale { fence });
            }
        }
        self.read(order)
    }

    /// Records `token` as the order's fence if it is higher than every token the order has
    /// seen (`None`: claimed); otherwise changes nothing and returns `Some` of the fence that is
    /// not lower (a newer holder's). From a successful claim on, every write with an older token
    /// is refused.
    pub fn claim(&self, order: i64, token: u64) -> rusqlite::Result<Option<u64>> {
        let claimed = self.db.execute(
            "UPDATE orders SET fence = ?2 WHERE id = ?1 AND fence < ?2",
            params![order, token],
        )?;
        if claimed == 1 {
            Ok(None)
        } else {
            self.fence(order).map(Some)
        }
    }

    /// The order's state, without any check.
    pub fn read(&self, order: i64) -> rusqlite::Result<Begin> {
        let (status, amount_cents): (String, i64) = self.db.query_row(
            "SELECT status, amount_cents FROM orders WHERE id = ?1",
            params![order],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(if status == "paid" {
            Begin::Paid
        } else {
            Begin::Pending { amount_cents }
        })
    }

    /// Charges `order`: marks it paid and writes the payment, in one transaction, checked as
    /// `guard` says. `token` is the worker's lock token (recorded with the payment; with
    /// [`Guard::Fence`] it must still be the order's fence).
    pub fn charge(
        &mut self,
        order: i64,
        amount_cents: i64,
        token: u64,
        worker: &str,
        guard: Guard,
    ) -> rusqlite::Result<Charge> {
        let request_id = guard.request_id(order, worker);
        let tx = self
            .db
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let updated = if guard == Guard::Fence {
            // the fencing check and the write are one statement: no newer token can come between
            tx.execute(
                "UPDATE orders SET status = 'paid', fence = ?2 WHERE id = ?1 AND fence <= ?2",
                params![order, token],
            )?
        } else {
            tx.execute("UPDATE orders SET status = 'paid' WHERE id = ?1", params![order])?
        };
        if updated == 0 && guard != Guard::Fence {
            return Err(rusqlite::Error::QueryReturnedNoRows); // no such order
        }
        if updated == 0 {
            let fence = tx.query_row("SELECT fence FROM orders WHERE id = ?1", params![order], |r| {
                r.get(0)
            })?;
            return Ok(Charge::Refused(Refusal::StaleToken { token, fence }));
        }
        let inserted = tx.execute(
            "INSERT INTO payments (order_id, request_id, amount_cents, worker, token)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![order, request_id, amount_cents, worker, token],
        );
        match inserted {
            Ok(_) => {}
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {
                // dropping `tx` rolls the order's update back
                return Ok(Charge::Refused(Refusal::DuplicateRequest { request_id }));
            }
            Err(e) => return Err(e),
        }
        tx.commit()?;
        Ok(Charge::Written)
    }

    /// The order's fence: the highest token it has seen (0: none yet).
    pub fn fence(&self, order: i64) -> rusqlite::Result<u64> {
        self.db
            .query_row("SELECT fence FROM orders WHERE id = ?1", params![order], |r| {
                r.get(0)
            })
    }

    /// The highest fence of all orders: what the token counter must be raised past after it
    /// went back (`RFencedLock::raise_token_to`).
    pub fn highest_fence(&self) -> rusqlite::Result<u64> {
        self.db
            .query_row("SELECT coalesce(max(fence), 0) FROM orders", [], |r| r.get(0))
    }

    /// The payments of `order`, oldest first.
    pub fn payments(&self, order: i64) -> rusqlite::Result<Vec<Payment>> {
        let mut q = self.db.prepare(
            "SELECT request_id, amount_cents, worker, token FROM payments WHERE order_id = ?1 ORDER BY id",
        )?;
        let rows = q.query_map(params![order], |r| {
            Ok(Payment {
                request_id: r.get(0)?,
                amount_cents: r.get(1)?,
                worker: r.get(2)?,
                token: r.get(3)?,
            })
        })?;
        rows.collect()
    }
}
