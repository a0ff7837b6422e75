import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.redisson.api.RAtomicLong;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;

/**
 * The semaphore commands of the harness (every Redisson version of the matrix; not lock kinds,
 * so never listed in {@code kinds}):
 * <ul>
 * <li>{@code semaphore<Op> NAME ...} on {@code getSemaphore(NAME)} ({@code RSemaphore});</li>
 * <li>{@code expirable<Op> NAME ...} on {@code getPermitExpirableSemaphore(NAME)}
 * ({@code RPermitExpirableSemaphore}); permit ids are Redisson's strings (32 hex digits), lists of
 * them are comma-separated.</li>
 * </ul>
 * Calls that only newer versions have ({@code RSemaphore.trySetPermits(int, Duration)} 3.29.0+,
 * {@code releaseIfExists} 4.0.0+; the expirable semaphore's multi-permit calls and
 * {@code setPermits} 3.23.4+, {@code getPermits} / {@code acquiredPermits} 3.19.1+,
 * {@code getLeaseTime} 3.41.0+) are made by reflection, so this file compiles against 3.17.7; on
 * a version without the method they answer {@code java.lang.UnsupportedOperationException}
 * {@code unsupported: RSemaphore.releaseIfExists(int) needs Redisson 4.0.0+ (this harness is built
 * with Redisson 3.52.0)}. Durations are milliseconds.
 */
final class SemaphoreCommands {
    private SemaphoreCommands() {
    }

    /** {@code semaphore<Op>}: {@code op} is the operation without the prefix, {@code a[0]} the name. */
    static Object semaphore(String cmd, String op, String[] a) throws Exception {
        RSemaphore s = Harness.redisson().getSemaphore(a[0]);
        switch (op) {
            case "trySetPermits":
                Harness.argc(cmd, a, 2, 3);
                if (a.length == 2) {
                    return s.trySetPermits(permits(a[1]));
                }
                return call(s, RSemaphore.class, "trySetPermits", "3.29.0",
                        new Class<?>[] {int.class, java.time.Duration.class},
                        permits(a[1]), java.time.Duration.ofMillis(Harness.num(a[2])));
            case "acquire":
                Harness.argc(cmd, a, 1, 2);
                s.acquire(a.length == 1 ? 1 : permits(a[1]));
                return null;
            case "tryAcquire":
                Harness.argc(cmd, a, 2, 3);
                if (a.length == 2) {
                    return s.tryAcquire(permits(a[1]));
                }
                return s.tryAcquire(permits(a[1]), Harness.num(a[2]), TimeUnit.MILLISECONDS);
            case "release":
                Harness.argc(cmd, a, 2, 2);
                s.release(permits(a[1]));
                return null;
            case "releaseIfExists":
                Harness.argc(cmd, a, 2, 2);
                return call(s, RSemaphore.class, "releaseIfExists", "4.0.0", new Class<?>[] {int.class},
                        permits(a[1]));
            case "availablePermits":
                Harness.argc(cmd, a, 1, 1);
                return s.availablePermits();
            case "drainPermits":
                Harness.argc(cmd, a, 1, 1);
                return s.drainPermits();
            case "addPermits":
                Harness.argc(cmd, a, 2, 2);
                s.addPermits(permits(a[1]));
                return null;
            case "delete":
                Harness.argc(cmd, a, 1, 1);
                return s.delete();
            case "remainTTL":
                Harness.argc(cmd, a, 1, 1);
                return s.remainTimeToLive();
            case "stress":
                Harness.argc(cmd, a, 5, 5);
                return stress(s, a[1], Harness.num(a[2]), Harness.num(a[3]), Harness.num(a[4]));
            default:
                throw new IllegalArgumentException("unknown command: " + cmd + " (a semaphore has"
                        + " semaphoreTrySetPermits, semaphoreAcquire, semaphoreTryAcquire, semaphoreRelease,"
                        + " semaphoreReleaseIfExists, semaphoreAvailablePermits, semaphoreDrainPermits,"
                        + " semaphoreAddPermits, semaphoreDelete, semaphoreRemainTTL, semaphoreStress)");
        }
    }

    /**
     * {@code expirable<Op>}: {@code op} is the operation without the prefix, {@code a[0]} the name.
     * Redisson's synchronous calls report some refusals (releasing a permit that is not held, the
     * lease of an unknown id) as a {@code RedisException} "Unexpected exception while processing
     * command" wrapping the real exception; the answer keeps that class and adds the cause to the
     * message: {@code ... (cause: java.lang.IllegalArgumentException: Permit with id ... )}.
     */
    static Object expirable(String cmd, String op, String[] a) throws Exception {
        try {
            return expirableOp(cmd, op, a);
        } catch (org.redisson.client.RedisException e) {
            Throwable cause = e.getCause();
            if (cause == null || e.getClass() != org.redisson.client.RedisException.class) {
                throw e;
            }
            throw new org.redisson.client.RedisException(e.getMessage() + " (cause: " + cause.getClass().getName()
                    + ": " + cause.getMessage() + ")", cause);
        }
    }

    private static Object expirableOp(String cmd, String op, String[] a) throws Exception {
        RPermitExpirableSemaphore s = Harness.redisson().getPermitExpirableSemaphore(a[0]);
        Class<?> api = RPermitExpirableSemaphore.class;
        switch (op) {
            case "trySetPermits":
                Harness.argc(cmd, a, 2, 2);
                return s.trySetPermits(permits(a[1]));
            case "setPermits":
                Harness.argc(cmd, a, 2, 2);
                call(s, api, "setPermits", "3.23.4", new Class<?>[] {int.class}, permits(a[1]));
                return null;
            case "addPermits":
                Harness.argc(cmd, a, 2, 2);
                s.addPermits(permits(a[1]));
                return null;
            case "acquire":
                Harness.argc(cmd, a, 1, 2);
                return a.length == 1 ? s.acquire() : s.acquire(Harness.num(a[1]), TimeUnit.MILLISECONDS);
            case "acquireMany":
                Harness.argc(cmd, a, 2, 3);
                if (a.length == 2) {
                    return call(s, api, "acquire", "3.23.4", new Class<?>[] {int.class}, permits(a[1]));
                }
                return call(s, api, "acquire", "3.23.4", new Class<?>[] {int.class, long.class, TimeUnit.class},
                        permits(a[1]), Harness.num(a[2]), TimeUnit.MILLISECONDS);
            case "tryAcquire":
                Harness.argc(cmd, a, 1, 3);
                if (a.length == 1) {
                    return s.tryAcquire();
                } else if (a.length == 2) {
                    return s.tryAcquire(Harness.num(a[1]), TimeUnit.MILLISECONDS);
                }
                return s.tryAcquire(Harness.num(a[1]), Harness.num(a[2]), TimeUnit.MILLISECONDS);
            case "tryAcquireMany":
                Harness.argc(cmd, a, 4, 4);
                return call(s, api, "tryAcquire", "3.23.4",
                        new Class<?>[] {int.class, long.class, long.class, TimeUnit.class},
                        permits(a[1]), Harness.num(a[2]), Harness.num(a[3]), TimeUnit.MILLISECONDS);
            case "release":
                Harness.argc(cmd, a, 2, 2);
                s.release(a[1]);
                return null;
            case "tryRelease":
                Harness.argc(cmd, a, 2, 2);
                return s.tryRelease(a[1]);
            case "releaseMany":
                Harness.argc(cmd, a, 2, 2);
                call(s, api, "release", "3.23.4", new Class<?>[] {List.class}, ids(a[1]));
                return null;
            case "tryReleaseMany":
                Harness.argc(cmd, a, 2, 2);
                return call(s, api, "tryRelease", "3.23.4", new Class<?>[] {List.class}, ids(a[1]));
            case "updateLeaseTime":
                Harness.argc(cmd, a, 3, 3);
                return s.updateLeaseTime(a[1], Harness.num(a[2]), TimeUnit.MILLISECONDS);
            case "getLeaseTime":
                Harness.argc(cmd, a, 2, 2);
                return call(s, api, "getLeaseTime", "3.41.0", new Class<?>[] {String.class}, a[1]);
            case "availablePermits":
                Harness.argc(cmd, a, 1, 1);
                return s.availablePermits();
            case "acquiredPermits":
                Harness.argc(cmd, a, 1, 1);
                return call(s, api, "acquiredPermits", "3.19.1", new Class<?>[0]);
            case "getPermits":
                Harness.argc(cmd, a, 1, 1);
                return call(s, api, "getPermits", "3.19.1", new Class<?>[0]);
            case "delete":
                Harness.argc(cmd, a, 1, 1);
                return s.delete();
            default:
                throw new IllegalArgumentException("unknown command: " + cmd + " (a permit-expirable semaphore"
                        + " has expirableTrySetPermits, expirableSetPermits, expirableAddPermits, expirableAcquire,"
                        + " expirableAcquireMany, expirableTryAcquire, expirableTryAcquireMany, expirableRelease,"
                        + " expirableTryRelease, expirableReleaseMany, expirableTryReleaseMany,"
                        + " expirableUpdateLeaseTime, expirableGetLeaseTime, expirableAvailablePermits,"
                        + " expirableAcquiredPermits, expirableGetPermits, expirableDelete)");
        }
    }

    /**
     * {@code semaphoreStress NAME KEY DURATION_MS MAX_HOLD_MS MAX}: rounds until DURATION_MS has
     * passed (a round in progress is finished): {@code acquire(1)}; {@code INCR KEY} (how many
     * are inside now, counted by every party of both languages); hold a random 0..MAX_HOLD_MS ms;
     * {@code DECR KEY}; {@code release(1)}. Result: {@code {"rounds":R,"maxInside":M,"over":O}},
     * O = the rounds whose INCR gave more than MAX.
     */
    private static Object stress(RSemaphore s, String key, long durationMs, long maxHoldMs, long max)
            throws InterruptedException {
        RAtomicLong inside = Harness.redisson().getAtomicLong(key);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(durationMs);
        long rounds = 0;
        long maxInside = 0;
        long over = 0;
        while (System.nanoTime() < end) {
            s.acquire(1);
            try {
                long n = inside.incrementAndGet();
                maxInside = Math.max(maxInside, n);
                if (n > max) {
                    over++;
                }
                long hold = maxHoldMs > 0 ? ThreadLocalRandom.current().nextLong(maxHoldMs + 1) : 0;
                if (hold > 0) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(hold));
                }
                inside.decrementAndGet();
            } finally {
                s.release(1);
            }
            rounds++;
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("rounds", rounds);
        r.put("maxInside", maxInside);
        r.put("over", over);
        return r;
    }

    private static int permits(String s) {
        long n = Harness.num(s);
        if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("not an int: " + s);
        }
        return (int) n;
    }

    private static List<String> ids(String list) {
        List<String> out = new ArrayList<>(Arrays.asList(list.split(",")));
        out.removeIf(String::isEmpty);
        return out;
    }

    /**
     * {@code api.name(types)} on {@code target} by reflection: the API of newer Redisson versions.
     * A missing method answers {@link UnsupportedOperationException}; the method's own exception is
     * rethrown as it is.
     */
    private static Object call(Object target, Class<?> api, String name, String since, Class<?>[] types,
            Object... args) throws Exception {
        Method m;
        try {
            m = api.getMethod(name, types);
        } catch (NoSuchMethodException e) {
            StringBuilder sig = new StringBuilder();
            for (Class<?> t : types) {
                sig.append(sig.length() == 0 ? "" : ", ").append(t.getSimpleName());
            }
            throw new UnsupportedOperationException("unsupported: " + api.getSimpleName() + "." + name + "(" + sig
                    + ") needs Redisson " + since + "+ (this harness is built with Redisson "
                    + Harness.redissonVersion() + ")");
        }
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw e;
        }
    }
}
