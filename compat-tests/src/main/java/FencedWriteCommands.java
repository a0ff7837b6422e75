import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code orders<Op> DB ...}: the Java service of the fenced-write scenario (matrix scenario 58). It
 * charges an order in the SQLite database file DB over JDBC (sqlite-jdbc), with the statements of
 * {@code examples/fenced_write/orders.rs} (the Rust side creates the schema and reads the
 * outcome). The invariant the statements keep: an order is charged at most once, also when a lock
 * holder paused past its lease writes after the next holder did.
 *
 * <p>No Redisson call here, so every version has these commands: the worker takes the fenced lock
 * and its token with the {@code fenced*} commands and passes the token in. GUARD is {@code fence}
 * (claim the order with the token before reading it; write only while the token is still the
 * order's), {@code key} (the payment's request id is the operation's, {@code charge:order:ORDER},
 * and {@code UNIQUE}) or {@code none}.
 * <ul>
 * <li>{@code ordersBegin DB ORDER TOKEN GUARD}: with {@code fence}, first
 * {@code UPDATE orders SET fence = TOKEN WHERE id = ORDER AND fence < TOKEN} (no row: a newer
 * holder claimed it); then reads the order. Result
 * {@code {"begin":"pending"|"paid"|"stale","amount":CENTS,"fence":N}}.</li>
 * <li>{@code ordersCharge DB ORDER AMOUNT TOKEN WORKER GUARD}: in one transaction, marks the order
 * paid (with {@code fence}: {@code ... WHERE id = ORDER AND fence <= TOKEN}) and inserts the
 * payment (request id {@code charge:order:ORDER} with {@code key}, else
 * {@code charge:order:ORDER:WORKER}). Result {@code {"charge":"written"}},
 * {@code {"charge":"stale-token","fence":N}} or
 * {@code {"charge":"duplicate-request","requestId":"..."}}; nothing is written when refused.</li>
 * </ul>
 */
final class FencedWriteCommands {
    /** SQLite's primary result code for a constraint violation (here: the UNIQUE request id). */
    private static final int SQLITE_CONSTRAINT = 19;

    private FencedWriteCommands() {
    }

    static Object execute(String cmd, String op, String[] a) throws SQLException {
        switch (op) {
            case "begin":
                Harness.argc(cmd, a, 4, 4);
                return begin(a[0], Harness.num(a[1]), Harness.num(a[2]), guard(cmd, a[3]));
            case "charge":
                Harness.argc(cmd, a, 6, 6);
                return charge(a[0], Harness.num(a[1]), Harness.num(a[2]), Harness.num(a[3]), a[4],
                        guard(cmd, a[5]));
            default:
                throw new IllegalArgumentException("unknown command: " + cmd
                        + " (the order commands are ordersBegin, ordersCharge)");
        }
    }

    private static String guard(String cmd, String g) {
        if (!g.equals("fence") && !g.equals("key") && !g.equals("none")) {
            throw new IllegalArgumentException(cmd + ": GUARD is fence, key or none, not " + g);
        }
        return g;
    }

    /** A connection that waits up to 5 s for the other processes' writers (the Rust side). */
    private static Connection open(String db) throws SQLException {
        Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
        try (Statement st = c.createStatement()) {
            st.execute("PRAGMA busy_timeout = 5000");
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static long fence(Connection c, long order) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT fence FROM orders WHERE id = ?")) {
            q.setLong(1, order);
            try (ResultSet r = q.executeQuery()) {
                if (!r.next()) {
                    throw new IllegalArgumentException("no order " + order);
                }
                return r.getLong(1);
            }
        }
    }

    private static Map<String, Object> begin(String db, long order, long token, String guard) throws SQLException {
        Map<String, Object> out = new LinkedHashMap<>();
        try (Connection c = open(db)) {
            if (guard.equals("fence")) {
                // the claim: from here on, every write with an older token is refused
                try (PreparedStatement claim = c.prepareStatement(
                        "UPDATE orders SET fence = ?2 WHERE id = ?1 AND fence < ?2")) {
                    claim.setLong(1, order);
                    claim.setLong(2, token);
                    if (claim.executeUpdate() == 0) {
                        out.put("begin", "stale");
                        out.put("fence", fence(c, order));
                        return out;
                    }
                }
            }
            try (PreparedStatement q = c.prepareStatement(
                    "SELECT status, amount_cents, fence FROM orders WHERE id = ?1")) {
                q.setLong(1, order);
                try (ResultSet r = q.executeQuery()) {
                    if (!r.next()) {
                        throw new IllegalArgumentException("no order " + order);
                    }
                    out.put("begin", r.getString(1).equals("paid") ? "paid" : "pending");
                    out.put("amount", r.getLong(2));
                    out.put("fence", r.getLong(3));
                }
            }
        }
        return out;
    }

    private static Map<String, Object> charge(String db, long order, long amount, long token, String worker,
            String guard) throws SQLException {
        String requestId = guard.equals("key") ? "charge:order:" + order : "charge:order:" + order + ":" + worker;
        Map<String, Object> out = new LinkedHashMap<>();
        try (Connection c = open(db)) {
            c.setAutoCommit(false);
            try {
                int updated;
                // with the fence, the check and the write are one statement: no newer token can
                // come between them
                String update = guard.equals("fence")
                        ? "UPDATE orders SET status = 'paid', fence = ?2 WHERE id = ?1 AND fence <= ?2"
                        : "UPDATE orders SET status = 'paid' WHERE id = ?1";
                try (PreparedStatement u = c.prepareStatement(update)) {
                    u.setLong(1, order);
                    if (guard.equals("fence")) {
                        u.setLong(2, token);
                    }
                    updated = u.executeUpdate();
                }
                if (updated == 0) {
                    if (!guard.equals("fence")) {
                        throw new IllegalArgumentException("no order " + order);
                    }
                    out.put("charge", "stale-token");
                    out.put("fence", fence(c, order));
                    c.rollback();
                    return out;
                }
                try (PreparedStatement ins = c.prepareStatement("INSERT INTO payments"
                        + " (order_id, request_id, amount_cents, worker, token) VALUES (?1, ?2, ?3, ?4, ?5)")) {
                    ins.setLong(1, order);
                    ins.setString(2, requestId);
                    ins.setLong(3, amount);
                    ins.setString(4, worker);
                    ins.setLong(5, token);
                    ins.executeUpdate();
                } catch (SQLException e) {
                    if ((e.getErrorCode() & 0xff) != SQLITE_CONSTRAINT) {
                        throw e;
                    }
                    c.rollback(); // the order's update goes with it
                    out.put("charge", "duplicate-request");
                    out.put("requestId", requestId);
                    return out;
                }
                c.commit();
                out.put("charge", "written");
                return out;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }
}
