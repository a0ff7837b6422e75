import org.redisson.api.RLock;

/**
 * {@code nonReentrant<Op> NAME ...}: {@code redisson.getNonReentrantLock(NAME)} (Redisson 4.4.0+).
 * A second acquisition by the holding thread throws instead of counting up. Operations: the shared
 * ones of {@link Harness#lockOp} ({@code nonReentrantLock NAME [LEASE]},
 * {@code nonReentrantTryLock NAME [WAIT [LEASE]]}, {@code nonReentrantUnlock},
 * {@code nonReentrantForceUnlock}, {@code nonReentrantHoldCount}, {@code nonReentrantIsLocked},
 * {@code nonReentrantIsHeldByThread}, {@code nonReentrantRemainTTL}) and
 * {@code nonReentrantCounter NAME KEY ROUNDS SLEEP_MS [GAP_MS]} (the {@code counter} loop on this lock).
 */
public final class NonReentrantCommands implements KindCommands {
    public NonReentrantCommands() {
    }

    @Override
    public Object execute(Harness.Worker w, String cmd, String op, String[] a) throws Exception {
        Harness.requireName(cmd, a);
        RLock lock = Harness.redisson().getNonReentrantLock(a[0]);
        if (op.equals("counter")) {
            Harness.argc(cmd, a, 4, 5);
            return Harness.counter(w, a[1], Harness.num(a[2]), Harness.num(a[3]), Harness.gapMs(a), () -> {
                lock.lock();
                return null;
            }, lock::unlock);
        }
        return Harness.lockOp(cmd, op, lock, a);
    }
}
