import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.redisson.api.RLock;

/**
 * The benchmark commands scripts/bench sends (benches/locks/): acquire latency, throughput,
 * handoff, and the server-cost section's loops and held locks per kind ({@code lock}, {@code read}:
 * the read side of a read/write lock, {@code fair}).
 */
final class BenchCommands {
    private BenchCommands() {
    }

    /** Runs bench command CMD; every command of this class starts with {@code bench}. */
    static Object execute(String cmd, String[] a) throws Exception {
        switch (cmd) {
            case "benchLockUnlock":
                Harness.argc(cmd, a, 2, 2);
                return bench(Harness.redisson().getLock(a[0]), Harness.num(a[1]), false);
            case "benchTryLock":
                Harness.argc(cmd, a, 2, 2);
                return bench(Harness.redisson().getLock(a[0]), Harness.num(a[1]), true);
            case "benchAcquire":
                Harness.argc(cmd, a, 2, 2);
                return benchAcquire(Harness.redisson().getLock(a[0]), Harness.num(a[1]));
            case "benchThroughput":
                Harness.argc(cmd, a, 3, 3);
                return benchThroughput(a[0], (int) Harness.num(a[1]), Harness.num(a[2]));
            case "benchHandoff":
                Harness.argc(cmd, a, 3, 3);
                return benchHandoff(Harness.redisson().getLock(a[0]), (int) Harness.num(a[1]),
                        (int) Harness.num(a[2]));
            // ---- the server-cost section (benches/locks/sections/server_cost.rs); KIND = lock|read|fair
            case "benchThroughputKind":
                Harness.argc(cmd, a, 4, 4);
                benchLoopStart(a[0], a[1], (int) Harness.num(a[2]), 200);
                return benchLoopRun(Harness.num(a[3]));
            case "benchLoopStart":
                Harness.argc(cmd, a, 4, 4);
                return benchLoopStart(a[0], a[1], (int) Harness.num(a[2]), Harness.num(a[3]));
            case "benchLoopRun":
                Harness.argc(cmd, a, 1, 1);
                return benchLoopRun(Harness.num(a[0]));
            case "benchHold":
                Harness.argc(cmd, a, 3, 3);
                return benchHold(a[0], a[1], (int) Harness.num(a[2]));
            case "benchRelease":
                Harness.argc(cmd, a, 1, 1);
                return benchRelease(a[0]);
            default:
                throw new IllegalArgumentException("unknown command: " + cmd);
        }
    }

    /** 2000 warm-up tryLock+unlock, then ITERS iterations timing tryLock() alone (unlock untimed). */
    private static Object benchAcquire(RLock lock, long iters) {
        if (iters < 0 || iters > 10_000_000) {
            throw new IllegalArgumentException("ITERS out of range: " + iters);
        }
        for (int i = 0; i < 2000; i++) {
            if (lock.tryLock()) {
                lock.unlock();
            }
        }
        long failures = 0;
        long[] ns = new long[(int) iters];
        for (int i = 0; i < ns.length; i++) {
            long t0 = System.nanoTime();
            boolean ok = lock.tryLock();
            ns[i] = System.nanoTime() - t0;
            if (ok) {
                lock.unlock();
            } else {
                failures++;
            }
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("iters", iters);
        r.put("failures", failures);
        r.put("ns", ns);
        return r;
    }

    /** THREADS threads, each lock()+unlock() on its own key PREFIX:i for MILLIS after 200 warm-up rounds. */
    private static Object benchThroughput(String prefix, int threads, long millis) throws Exception {
        if (threads < 1 || threads > 4096 || millis < 1) {
            throw new IllegalArgumentException("bad THREADS/MILLIS");
        }
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads + 1);
        java.util.concurrent.atomic.AtomicLong ops = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            RLock lock = Harness.redisson().getLock(prefix + ":" + t);
            Thread th = new Thread(() -> {
                try {
                    for (int i = 0; i < 200; i++) {
                        lock.lock();
                        lock.unlock();
                    }
                    start.await();
                    long n = 0;
                    while (!stop.get()) {
                        lock.lock();
                        lock.unlock();
                        n++;
                    }
                    ops.addAndGet(n);
                } catch (Exception e) {
                    System.err.println("harness: benchThroughput thread failed: " + e);
                }
            });
            th.setDaemon(true);
            th.start();
            ts.add(th);
        }
        start.await();
        long t0 = System.nanoTime();
        Thread.sleep(millis);
        stop.set(true);
        for (Thread th : ts) {
            th.join();
        }
        long elapsed = System.nanoTime() - t0;
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("threads", threads);
        r.put("ops", ops.get());
        r.put("elapsed_ns", elapsed);
        return r;
    }

    /**
     * WAITERS+1 threads take turns on one lock with lock()/unlock(), holding it 2 ms. The first
     * holder waits until everyone is queued; a thread that released waits for the next grant before queueing again,
     * so every grant is a handoff to a waiter. Result: per handoff, nanos from the releaser's
     * unlock() return to the next holder's lock() return.
     */
    private static Object benchHandoff(RLock lock, int waiters, int handoffs) throws Exception {
        if (waiters < 1 || waiters > 4096 || handoffs < 1 || handoffs > 1_000_000) {
            throw new IllegalArgumentException("bad WAITERS/HANDOFFS");
        }
        final int n = waiters + 1;
        final long[] acq = new long[handoffs + n + 2];
        final long[] rel = new long[handoffs + n + 2];
        final java.util.concurrent.atomic.AtomicLong gen = new java.util.concurrent.atomic.AtomicLong();
        final Object mon = new Object();
        final java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(n);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            Thread th = new Thread(() -> {
                started.countDown();
                try {
                    while (true) {
                        lock.lock();
                        long now = System.nanoTime();
                        long g = gen.incrementAndGet();
                        if (g < acq.length) {
                            acq[(int) g] = now;
                        }
                        synchronized (mon) {
                            mon.notifyAll();
                        }
                        if (g == 1) {
                            started.await();
                            Thread.sleep(200 + n);
                        } else {
                            Thread.sleep(2); // short critical section: the previous holder re-queues meanwhile
                        }
                        boolean last = g > handoffs;
                        lock.unlock();
                        if (g < rel.length) {
                            rel[(int) g] = System.nanoTime();
                        }
                        if (last) {
                            return;
                        }
                        synchronized (mon) {
                            while (gen.get() <= g) {
                                mon.wait();
                            }
                        }
                        if (gen.get() > handoffs) {
                            return;
                        }
                    }
                } catch (Exception e) {
                    System.err.println("harness: benchHandoff thread failed: " + e);
                }
            });
            th.setDaemon(true);
            th.start();
            ts.add(th);
        }
        // the last grant wakes nobody: whoever still waits gets the lock after it, sees the end, leaves
        for (Thread th : ts) {
            th.join();
        }
        long[] ns = new long[handoffs];
        for (int g = 1; g <= handoffs; g++) {
            ns[g - 1] = acq[g + 1] - rel[g];
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("waiters", waiters);
        r.put("handoffs", handoffs);
        r.put("ns", ns);
        return r;
    }

    /** The lock of bench KIND ({@code lock}, {@code read}: the read side of a read/write lock, {@code fair}) on NAME. */
    private static RLock benchKindLock(String kind, String name) {
        switch (kind) {
            case "lock":
                return Harness.redisson().getLock(name);
            case "read":
                return Harness.redisson().getReadWriteLock(name).readLock();
            case "fair":
                return Harness.redisson().getFairLock(name);
            default:
                throw new IllegalArgumentException("bad KIND (lock|read|fair): " + kind);
        }
    }

    /** The threads of the loop {@code benchLoopStart} started, waiting for {@code benchLoopRun}. */
    private static final class BenchLoop {
        final java.util.concurrent.CountDownLatch ready;
        final java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.atomic.AtomicLong ops = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicLong failures = new java.util.concurrent.atomic.AtomicLong();
        final List<Thread> threads = new ArrayList<>();

        BenchLoop(int n) {
            ready = new java.util.concurrent.CountDownLatch(n);
        }
    }

    private static BenchLoop benchLoop;

    /**
     * {@code benchLoopStart KIND PREFIX THREADS WARMUP_MS}: THREADS threads, each lock() + unlock()
     * (watchdog mode) on its own lock PREFIX:i of KIND for WARMUP_MS (at least once); returns once
     * every thread has warmed up and waits for {@code benchLoopRun}, so the caller can read the
     * server's counters in between.
     */
    private static Object benchLoopStart(String kind, String prefix, int threads, long warmupMs) throws Exception {
        if (threads < 1 || threads > 4096 || warmupMs < 0) {
            throw new IllegalArgumentException("bad THREADS/WARMUP_MS");
        }
        if (benchLoop != null) {
            throw new IllegalStateException("a bench loop is already started");
        }
        BenchLoop loop = new BenchLoop(threads);
        for (int t = 0; t < threads; t++) {
            RLock lock = benchKindLock(kind, prefix + ":" + t);
            Thread th = new Thread(() -> {
                try {
                    long until = System.nanoTime() + warmupMs * 1_000_000L;
                    do {
                        lock.lock();
                        lock.unlock();
                    } while (System.nanoTime() < until);
                } catch (Exception e) {
                    loop.failures.incrementAndGet();
                    System.err.println("harness: benchLoopStart warm-up failed: " + e);
                    return;
                } finally {
                    loop.ready.countDown();
                }
                try {
                    loop.go.await();
                    long n = 0;
                    while (!loop.stop.get()) {
                        lock.lock();
                        lock.unlock();
                        n++;
                    }
                    loop.ops.addAndGet(n);
                } catch (Exception e) {
                    loop.failures.incrementAndGet();
                    System.err.println("harness: benchLoopRun thread failed: " + e);
                }
            });
            th.setDaemon(true);
            th.start();
            loop.threads.add(th);
        }
        loop.ready.await();
        benchLoop = loop;
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("threads", threads);
        r.put("failures", loop.failures.get());
        return r;
    }

    /** {@code benchLoopRun MILLIS}: runs the started loop for MILLIS, stops it; ops and elapsed time. */
    private static Object benchLoopRun(long millis) throws Exception {
        BenchLoop loop = benchLoop;
        if (loop == null) {
            throw new IllegalStateException("no bench loop started (benchLoopStart)");
        }
        benchLoop = null;
        long t0 = System.nanoTime();
        loop.go.countDown();
        Thread.sleep(millis);
        loop.stop.set(true);
        for (Thread th : loop.threads) {
            th.join();
        }
        long elapsed = System.nanoTime() - t0;
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("threads", loop.threads.size());
        r.put("ops", loop.ops.get());
        r.put("failures", loop.failures.get());
        r.put("elapsed_ns", elapsed);
        return r;
    }

    /** Locks held by {@code benchHold}, per PREFIX (only touched by the worker that runs them). */
    private static final Map<String, List<RLock>> BENCH_HELD = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * {@code benchHold KIND PREFIX N}: lock() (watchdog mode) N locks PREFIX:0..N-1 of KIND on this
     * worker's thread, one after the other, and keep them (renewed by the watchdog) until
     * {@code benchRelease PREFIX} on the same worker.
     */
    private static Object benchHold(String kind, String prefix, int n) {
        if (n < 1 || n > 1_000_000) {
            throw new IllegalArgumentException("bad N");
        }
        if (BENCH_HELD.containsKey(prefix)) {
            throw new IllegalStateException("already holding " + prefix);
        }
        long t0 = System.nanoTime();
        List<RLock> held = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            RLock lock = benchKindLock(kind, prefix + ":" + i);
            lock.lock();
            held.add(lock);
        }
        BENCH_HELD.put(prefix, held);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("held", held.size());
        r.put("elapsed_ns", System.nanoTime() - t0);
        return r;
    }

    /** {@code benchRelease PREFIX}: unlock() every lock {@code benchHold PREFIX} took. */
    private static Object benchRelease(String prefix) {
        List<RLock> held = BENCH_HELD.remove(prefix);
        if (held == null) {
            throw new IllegalStateException("not holding " + prefix);
        }
        long failures = 0;
        for (RLock lock : held) {
            try {
                lock.unlock();
            } catch (Exception e) {
                failures++;
            }
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("released", held.size() - failures);
        r.put("failures", failures);
        return r;
    }

    private static Object bench(RLock lock, long iters, boolean tryLock) {
        if (iters < 0 || iters > 10_000_000) {
            throw new IllegalArgumentException("ITERS out of range: " + iters);
        }
        long failures = 0;
        for (int i = 0; i < 2000; i++) {
            if (tryLock) {
                if (lock.tryLock()) {
                    lock.unlock();
                }
            } else {
                lock.lock();
                lock.unlock();
            }
        }
        long[] ns = new long[(int) iters];
        for (int i = 0; i < ns.length; i++) {
            long t0 = System.nanoTime();
            if (tryLock) {
                if (lock.tryLock()) {
                    lock.unlock();
                } else {
                    failures++;
                }
            } else {
                lock.lock();
                lock.unlock();
            }
            ns[i] = System.nanoTime() - t0;
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("iters", iters);
        if (tryLock) {
            r.put("failures", failures);
        }
        r.put("ns", ns);
        return r;
    }
}
