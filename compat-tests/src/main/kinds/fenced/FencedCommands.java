import java.util.concurrent.TimeUnit;

import org.redisson.api.RFencedLock;

/**
 * {@code fenced<Op> NAME ...}: {@code redisson.getFencedLock(NAME)} (Redisson 3.19.0+), a lock
 * whose every acquisition gets a fencing token. Operations (durations in ms, tokens are JSON
 * numbers, {@code null} = not acquired):
 * <ul>
 * <li>{@code fencedLockAndGetToken NAME [LEASE]}: {@code lockAndGetToken()} /
 * {@code lockAndGetToken(LEASE, ms)}, the token;</li>
 * <li>{@code fencedTryLockAndGetToken NAME [WAIT [LEASE]]}: {@code tryLockAndGetToken(0, ms)} (one
 * attempt) / {@code tryLockAndGetToken(WAIT, ms)} / {@code tryLockAndGetToken(WAIT, LEASE, ms)},
 * the token or null;</li>
 * <li>{@code fencedGetToken NAME}: {@code getToken()};</li>
 * <li>{@code fencedCounter NAME KEY ROUNDS SLEEP_MS [GAP_MS]}: the {@code counter} loop acquiring with
 * {@code lockAndGetToken()}; records are {@code java:<worker>:t<token>:<startMicros>:<endMicros>};</li>
 * <li>the shared ones of {@link Harness#lockOp}: {@code fencedLock}, {@code fencedTryLock},
 * {@code fencedUnlock}, {@code fencedForceUnlock}, {@code fencedHoldCount}, {@code fencedIsLocked},
 * {@code fencedIsHeldByThread}, {@code fencedRemainTTL}.</li>
 * </ul>
 */
public final class FencedCommands implements KindCommands {
    public FencedCommands() {
    }

    @Override
    public Object execute(Harness.Worker w, String cmd, String op, String[] a) throws Exception {
        Harness.requireName(cmd, a);
        RFencedLock lock = Harness.redisson().getFencedLock(a[0]);
        switch (op) {
            case "lockAndGetToken":
                Harness.argc(cmd, a, 1, 2);
                return a.length == 1 ? lock.lockAndGetToken()
                        : lock.lockAndGetToken(Harness.num(a[1]), TimeUnit.MILLISECONDS);
            case "tryLockAndGetToken":
                Harness.argc(cmd, a, 1, 3);
                if (a.length == 1) {
                    return lock.tryLockAndGetToken(0, TimeUnit.MILLISECONDS);
                } else if (a.length == 2) {
                    return lock.tryLockAndGetToken(Harness.num(a[1]), TimeUnit.MILLISECONDS);
                }
                return lock.tryLockAndGetToken(Harness.num(a[1]), Harness.num(a[2]), TimeUnit.MILLISECONDS);
            case "getToken":
                Harness.argc(cmd, a, 1, 1);
                return lock.getToken();
            case "counter":
                Harness.argc(cmd, a, 4, 5);
                return Harness.counter(w, a[1], Harness.num(a[2]), Harness.num(a[3]), Harness.gapMs(a),
                        () -> "t" + lock.lockAndGetToken(), lock::unlock);
            default:
                return Harness.lockOp(cmd, op, lock, a);
        }
    }
}
