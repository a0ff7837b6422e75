import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.redisson.api.RLock;

/**
 * The fault suite's Java party (tests/faults/): {@code clock}, {@code contend NAMES ROUNDS
 * MAX_HOLD_MS [BUDGET_MS]} and {@code stopContend}.
 */
final class FaultCommands {
    private FaultCommands() {
    }

    /** {@code clock}: this JVM's monotonic and wall clocks, read together. */
    static Object clock() {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("nanoTime", System.nanoTime());
        r.put("epochMicros", Harness.epochMicros());
        return r;
    }

    /** {@code stopContend}: every running {@code contend} loop ends after its current round. */
    static long stopContend() {
        return STOP_GENERATION.incrementAndGet();
    }

    /** Bumped by {@code stopContend}: every running {@code contend} loop ends after its current round. */
    private static final AtomicLong STOP_GENERATION = new AtomicLong();

    /**
     * {@code contend NAMES ROUNDS MAX_HOLD_MS [BUDGET_MS]}: the fault suite's Java holder. Each round
     * picks one of the comma-separated NAMES at random, {@code lock()}s it (watchdog mode), holds it
     * for 0..MAX_HOLD_MS ms, and {@code unlock()}s it; every time is {@code System.nanoTime()}
     * (CLOCK_MONOTONIC on Linux HotSpot, the clock of the Rust histories). Exceptions are recorded
     * per round and never end the loop. After an unlock that returned, {@code getHoldCount()}: a
     * count left over means this thread held the lock more than once (Redisson re-sent an acquire
     * whose reply was lost, or this {@code lock()} re-entered a hold left by an earlier round whose
     * {@code lock()} threw after it had run or whose {@code unlock()} failed); the round is
     * {@code partial} and the thread unlocks the extra holds, so a stuck hold does not live on
     * through later re-entries.
     *
     * <p>Ends after ROUNDS rounds (0 = no limit), when BUDGET_MS (0 = no limit) have passed since
     * the command started, or at a {@code stopContend} from any worker; a round in progress is
     * finished first. One response with every round.
     */
    static Object contend(String namesArg, long rounds, long maxHoldMs, long budgetMs) {
        String[] names = namesArg.split(",");
        for (String n : names) {
            if (n.isEmpty()) {
                throw new IllegalArgumentException("contend: empty lock name in " + namesArg);
            }
        }
        if (rounds < 0 || maxHoldMs < 0 || maxHoldMs > 60_000 || budgetMs < 0) {
            throw new IllegalArgumentException("contend: bad ROUNDS/MAX_HOLD_MS/BUDGET_MS");
        }
        if (rounds == 0 && budgetMs == 0) {
            throw new IllegalArgumentException("contend: needs ROUNDS or BUDGET_MS (or both)");
        }
        RLock[] locks = new RLock[names.length];
        for (int i = 0; i < names.length; i++) {
            locks[i] = Harness.redisson().getLock(names[i]);
        }
        long generation = STOP_GENERATION.get();
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long maxHoldNs = maxHoldMs * 1_000_000L;
        long t0 = System.nanoTime();
        List<Object> out = new ArrayList<>();
        String stopped = "rounds";
        long sections = 0;
        for (long i = 0; rounds == 0 || i < rounds; i++) {
            if (STOP_GENERATION.get() != generation) {
                stopped = "stopContend";
                break;
            }
            if (budgetMs > 0 && System.nanoTime() - t0 >= budgetMs * 1_000_000L) {
                stopped = "budget";
                break;
            }
            int k = rnd.nextInt(locks.length);
            RLock lock = locks[k];
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("lock", k);
            r.put("acquire_ns", System.nanoTime());
            try {
                lock.lock();
            } catch (Throwable t) {
                r.put("done_ns", System.nanoTime());
                r.put("outcome", "lock-error");
                putError(r, t);
                out.add(r);
                // Redis may be unreachable: do not spin
                LockSupport.parkNanos(rnd.nextLong(10_000_000L, 50_000_001L));
                continue;
            }
            long start = System.nanoTime();
            long until = start + (maxHoldNs > 0 ? rnd.nextLong(maxHoldNs + 1) : 0);
            for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
            long end = System.nanoTime();
            r.put("start_ns", start);
            r.put("end_ns", end);
            sections++;
            String outcome;
            try {
                lock.unlock();
                outcome = "released";
                try {
                    int extra = lock.getHoldCount();
                    if (extra > 0) {
                        outcome = "partial";
                        r.put("extra", extra);
                        for (int j = 0; j < extra; j++) {
                            lock.unlock();
                        }
                    }
                } catch (Throwable t) {
                    r.put("checkErrorClass", t.getClass().getName());
                    String m = Harness.message(t);
                    r.put("checkError", m.length() > 300 ? m.substring(0, 300) : m);
                }
            } catch (IllegalMonitorStateException e) {
                outcome = "not-held";
                putError(r, e);
            } catch (Throwable t) {
                outcome = "unlock-error";
                putError(r, t);
            }
            r.put("unlock_ns", System.nanoTime());
            r.put("outcome", outcome);
            out.add(r);
        }
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("names", java.util.Arrays.asList(names));
        res.put("threadId", Thread.currentThread().getId());
        res.put("field", Harness.clientId() + ":" + Thread.currentThread().getId());
        res.put("stopped", stopped);
        res.put("elapsed_ns", System.nanoTime() - t0);
        res.put("sections", sections);
        res.put("rounds", out);
        return res;
    }

    private static void putError(Map<String, Object> r, Throwable t) {
        r.put("errorClass", t.getClass().getName());
        String m = Harness.message(t);
        r.put("error", m.length() > 300 ? m.substring(0, 300) : m);
    }
}
