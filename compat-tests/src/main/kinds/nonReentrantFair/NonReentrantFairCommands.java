import org.redisson.api.RLock;

/**
 * {@code nonReentrantFair<Op> NAME ...}: {@code redisson.getNonReentrantFairLock(NAME)} (Redisson
 * 4.4.0+): the fair lock's queue, with a second acquisition by the holding thread refused instead of
 * counted. Operations: the shared ones of {@link Harness#lockOp} ({@code nonReentrantFairLock NAME [LEASE]},
 * {@code nonReentrantFairTryLock NAME [WAIT [LEASE]]}, {@code nonReentrantFairUnlock},
 * {@code nonReentrantFairForceUnlock}, {@code nonReentrantFairHoldCount}, {@code nonReentrantFairIsLocked},
 * {@code nonReentrantFairIsHeldByThread}, {@code nonReentrantFairRemainTTL}) and
 * {@code nonReentrantFairCounter NAME KEY ROUNDS SLEEP_MS [GAP_MS]} (the {@code counter} loop on this lock).
 */
public final class NonReentrantFairCommands implements KindCommands {
    public NonReentrantFairCommands() {
    }

    @Override
    public Object execute(Harness.Worker w, String cmd, String op, String[] a) throws Exception {
        Harness.requireName(cmd, a);
        RLock lock = Harness.redisson().getNonReentrantFairLock(a[0]);
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
