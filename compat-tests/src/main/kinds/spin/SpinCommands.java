import org.redisson.api.RLock;

/**
 * {@code spin<Op> NAME ...}: {@code redisson.getSpinLock(NAME)} (Redisson 3.15.0+), a lock that
 * waits by retrying with a back-off instead of subscribing to a channel. Operations: the shared
 * ones of {@link Harness#lockOp} ({@code spinLock NAME [LEASE]}, {@code spinTryLock NAME [WAIT
 * [LEASE]]}, {@code spinUnlock}, {@code spinForceUnlock}, {@code spinHoldCount},
 * {@code spinIsLocked}, {@code spinIsHeldByThread}, {@code spinRemainTTL}) and
 * {@code spinCounter NAME KEY ROUNDS SLEEP_MS [GAP_MS]} (the {@code counter} loop on the spin lock).
 */
public final class SpinCommands implements KindCommands {
    public SpinCommands() {
    }

    @Override
    public Object execute(Harness.Worker w, String cmd, String op, String[] a) throws Exception {
        Harness.requireName(cmd, a);
        RLock lock = Harness.redisson().getSpinLock(a[0]);
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
