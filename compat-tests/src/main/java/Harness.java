import java.io.BufferedReader;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.api.RBucket;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RList;
import org.redisson.api.RLock;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;

/**
 * Interop harness: drives real Redisson locks from a line-based protocol.
 *
 * <pre>
 *   java -jar harness-V.jar --url redis://127.0.0.1:PORT --watchdog-ms 30000 [--bench]
 *   java -jar harness-V.jar --cluster --url redis://127.0.0.1:P1,redis://127.0.0.1:P2 ...
 * </pre>
 *
 * With {@code --cluster} (repeatable {@code --url}, or comma-separated URLs) Redisson runs in
 * cluster mode ({@code useClusterServers()}, reads from masters). Its sharded pub/sub choice is
 * Redisson's own default for the version: classic before 3.22, sharded from 3.22 on a server
 * that supports it ({@code shardedSubscriptionMode} AUTO since 3.29).
 *
 * stdin:  one command per line, {@code SEQ WORKER CMD ARGS...}
 * stdout: one JSON object per line (a "ready" event, then exactly one response per command).
 * See README.md in this directory for the full contract.
 *
 * This file only uses Redisson API that exists in 3.17.x .. 4.x ({@code getLock},
 * {@code getReadWriteLock}, {@code getFairLock}, {@code getCountDownLatch}; the semaphores'
 * {@code getSemaphore} and {@code getPermitExpirableSemaphore} in {@link SemaphoreCommands}, which
 * makes the calls of newer versions by reflection). The lock kinds that need a newer Redisson (spin,
 * fenced, non-reentrant, non-reentrant fair: see {@code kinds.properties}) live in
 * {@code src/main/kinds/<kind>/<Kind>Commands.java}; build-harness.sh compiles them only for versions
 * that have them, and {@link #loadKinds()} finds them with {@code Class.forName}.
 */
public final class Harness {

    /** Real stdout; System.out is redirected to stderr so no library can corrupt the protocol. */
    private static PrintStream protocolOut;
    private static final Object OUT_LOCK = new Object();

    private static RedissonClient redisson;
    /** `--url redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER` selects Redisson's sentinel mode. */
    private static final String SENTINEL_SCHEME = "redis-sentinel://";
    private static String clientId;
    private static boolean benchMode;
    private static long exitGraceMs = 10_000;

    /** Bumped by {@code stopContend}: every running {@code contend} loop ends after its current round. */
    private static final AtomicLong STOP_GENERATION = new AtomicLong();

    /** Only touched by the stdin reader (main) thread. */
    private static final Map<String, Worker> WORKERS = new LinkedHashMap<>();

    /** The kinds every harness has ({@code getLock}, {@code getReadWriteLock}, {@code getFairLock}). */
    private static final List<String> CORE_KINDS = List.of("lock", "readWrite", "fair");
    /** Optional kinds compiled into this jar: kind id (= command prefix) -> its commands. */
    private static final Map<String, KindCommands> KINDS = new LinkedHashMap<>();
    /** Optional kinds not compiled into this jar: kind id -> the error their commands answer. */
    private static final Map<String, String> UNSUPPORTED = new LinkedHashMap<>();

    private Harness() {
    }

    // ------------------------------------------------------------------ main

    /** A top-level {@code lockWatchdogTimeout} key in a YAML or JSON config file. */
    private static final java.util.regex.Pattern WATCHDOG_KEY =
            java.util.regex.Pattern.compile("(?:^|[\\s{,])\"?lockWatchdogTimeout\"?\\s*:");

    /**
     * {@code --config FILE}: the Redisson config file as the service using it would load it
     * ({@code Config.fromYAML}, which also reads JSON), used as it is, except that
     * {@code --watchdog-ms} is applied when the file sets no {@code lockWatchdogTimeout}.
     */
    private static Config fileConfig(String path, long watchdogMs) throws IOException {
        File file = new File(path);
        Config config = Config.fromYAML(file);
        String text = new String(java.nio.file.Files.readAllBytes(file.toPath()), StandardCharsets.UTF_8);
        if (!WATCHDOG_KEY.matcher(text).find()) {
            config.setLockWatchdogTimeout(watchdogMs);
        }
        return config;
    }

    private static void fatal(Throwable t) {
        Map<String, Object> fatal = new LinkedHashMap<>();
        fatal.put("event", "fatal");
        fatal.put("error", message(t));
        fatal.put("errorClass", t.getClass().getName());
        fatal.put("ts_ms", System.currentTimeMillis());
        emit(Json.write(fatal));
        t.printStackTrace(System.err);
        System.exit(1);
    }

    public static void main(String[] args) throws Exception {
        protocolOut = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);

        List<String> urls = new ArrayList<>();
        boolean cluster = false;
        String configFile = null;
        long watchdogMs = 30_000;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--url": {
                    String v = requireArg(args, ++i, a);
                    if (v.startsWith(SENTINEL_SCHEME)) {
                        urls.add(v); // its commas separate sentinels, not URLs
                        break;
                    }
                    for (String u : v.split(",")) {
                        if (!u.isEmpty()) {
                            urls.add(u);
                        }
                    }
                    break;
                }
                case "--cluster":
                    cluster = true;
                    break;
                case "--config":
                    configFile = requireArg(args, ++i, a);
                    break;
                case "--watchdog-ms":
                    watchdogMs = Long.parseLong(requireArg(args, ++i, a));
                    break;
                case "--exit-grace-ms":
                    exitGraceMs = Long.parseLong(requireArg(args, ++i, a));
                    break;
                case "--bench":
                    benchMode = true;
                    break;
                case "-h":
                case "--help":
                    System.err.println("usage: java -jar harness.jar [--cluster] --url redis://HOST:PORT[,redis://HOST:PORT...]|redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER | --config redisson.yaml|.json [--watchdog-ms MS] [--exit-grace-ms MS] [--bench]");
                    System.exit(0);
                    break;
                default:
                    System.err.println("harness: unknown argument: " + a);
                    System.exit(2);
            }
        }
        if (urls.isEmpty() == (configFile == null)) {
            System.err.println("harness: exactly one of --url and --config is required");
            System.exit(2);
        }
        if (!cluster && urls.size() > 1) {
            System.err.println("harness: several --url need --cluster");
            System.exit(2);
        }

        try {
            if (configFile != null) {
                redisson = Redisson.create(fileConfig(configFile, watchdogMs));
                clientId = redisson.getId();
                loadKinds();
            }
        } catch (Throwable t) {
            fatal(t);
        }

        if (configFile == null) try {
            Config config = new Config();
            config.setLockWatchdogTimeout(watchdogMs);
            config.setThreads(4);
            config.setNettyThreads(8);
            if (cluster) {
                config.useClusterServers()
                        .addNodeAddress(urls.toArray(new String[0]))
                        .setReadMode(ReadMode.MASTER)
                        .setMasterConnectionPoolSize(8)
                        .setMasterConnectionMinimumIdleSize(1)
                        .setSlaveConnectionPoolSize(2)
                        .setSlaveConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionPoolSize(4)
                        .setSubscriptionConnectionMinimumIdleSize(1);
            } else if (urls.get(0).startsWith(SENTINEL_SCHEME)) {
                // redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER_NAME: Redisson's sentinel mode
                String url = urls.get(0);
                String rest = url.substring(SENTINEL_SCHEME.length());
                int slash = rest.lastIndexOf('/');
                if (slash <= 0 || slash == rest.length() - 1) {
                    throw new IllegalArgumentException("sentinel URL needs hosts and a master name: " + url);
                }
                org.redisson.config.SentinelServersConfig sentinel = config.useSentinelServers()
                        .setMasterName(rest.substring(slash + 1))
                        .setScanInterval(200)
                        .setMasterConnectionPoolSize(8)
                        .setMasterConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionPoolSize(2)
                        .setSubscriptionConnectionMinimumIdleSize(1);
                for (String node : rest.substring(0, slash).split(",")) {
                    sentinel.addSentinelAddress("redis://" + node);
                }
            } else {
                config.useSingleServer()
                        .setAddress(urls.get(0))
                        .setConnectionPoolSize(8)
                        .setConnectionMinimumIdleSize(1)
                        .setSubscriptionConnectionPoolSize(2)
                        .setSubscriptionConnectionMinimumIdleSize(1);
            }
            redisson = Redisson.create(config);
            clientId = redisson.getId();
            loadKinds();
        } catch (Throwable t) {
            fatal(t);
        }

        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("event", "ready");
        ready.put("clientId", clientId);
        ready.put("version", redissonVersion());
        ready.put("kinds", kinds());
        ready.put("ts_ms", System.currentTimeMillis());
        emit(Json.write(ready));

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String trimmed = line.trim();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            String[] tok = trimmed.split("\\s+");
            Long seq = null;
            if (tok.length >= 1) {
                try {
                    seq = Long.parseLong(tok[0]);
                } catch (NumberFormatException e) {
                    seq = null;
                }
            }
            if (seq == null || tok.length < 3) {
                emitMalformed(seq, tok.length >= 2 ? tok[1] : null, tok.length >= 3 ? tok[2] : null,
                        "malformed command line (expected 'SEQ WORKER CMD ARGS...'): " + trimmed);
                continue;
            }
            String workerName = tok[1];
            String cmd = tok[2];
            String[] cmdArgs = new String[tok.length - 3];
            System.arraycopy(tok, 3, cmdArgs, 0, cmdArgs.length);

            Worker w = worker(workerName);
            if (cmd.equals("exit")) {
                long startMs = System.currentTimeMillis();
                drainAll(startMs + exitGraceMs);
                emitResponse(seq, workerName, cmd, true, null, null, w.threadId, startMs);
                shutdownAndExit(0);
                return;
            }
            final long fseq = seq;
            w.executor.execute(() -> runCommand(fseq, w, cmd, cmdArgs));
        }
        // stdin EOF: let already-submitted commands finish (bounded), then shut down.
        drainAll(System.currentTimeMillis() + exitGraceMs);
        shutdownAndExit(0);
    }

    private static String requireArg(String[] args, int i, String flag) {
        if (i >= args.length) {
            System.err.println("harness: " + flag + " needs a value");
            System.exit(2);
        }
        return args[i];
    }

    // --------------------------------------------------------------- workers

    /** A named worker: one platform thread running its commands in order. */
    static final class Worker {
        final String name;
        final ExecutorService executor;
        final long threadId;

        Worker(String name) {
            this.name = name;
            final Thread[] holder = new Thread[1];
            this.executor = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "harness-worker-" + name);
                t.setDaemon(true);
                holder[0] = t;
                return t;
            });
            // Start the thread now so its id is known (also used for the exit response).
            try {
                executor.submit(() -> { }).get();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            this.threadId = holder[0].getId();
        }
    }

    private static Worker worker(String name) {
        return WORKERS.computeIfAbsent(name, Worker::new);
    }

    /** Waits until every worker has finished all commands submitted so far, or the deadline passes. */
    private static void drainAll(long deadlineMs) {
        List<Future<?>> barriers = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Worker w : WORKERS.values()) {
            barriers.add(w.executor.submit(() -> { }));
            names.add(w.name);
        }
        for (int i = 0; i < barriers.size(); i++) {
            long left = deadlineMs - System.currentTimeMillis();
            try {
                barriers.get(i).get(Math.max(left, 0), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                System.err.println("harness: worker " + names.get(i) + " still busy at shutdown; abandoning it");
            } catch (Exception e) {
                System.err.println("harness: worker " + names.get(i) + " drain failed: " + e);
            }
        }
    }

    private static void shutdownAndExit(int code) {
        synchronized (OUT_LOCK) {
            protocolOut.flush();
        }
        try {
            redisson.shutdown(0, 2, TimeUnit.SECONDS);
        } catch (Throwable t) {
            System.err.println("harness: redisson shutdown failed: " + t);
        }
        System.exit(code);
    }

    // -------------------------------------------------------------- commands

    private static void runCommand(long seq, Worker w, String cmd, String[] a) {
        long startMs = System.currentTimeMillis();
        Object result;
        try {
            result = execute(w, cmd, a);
        } catch (Throwable t) {
            emitResponse(seq, w.name, cmd, false, null, t, Thread.currentThread().getId(), startMs);
            if (t instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        emitResponse(seq, w.name, cmd, true, result, null, Thread.currentThread().getId(), startMs);
    }

    private static Object execute(Worker w, String cmd, String[] a) throws Exception {
        switch (cmd) {
            case "hello": {
                argc(cmd, a, 0, 0);
                long tid = Thread.currentThread().getId();
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("clientId", clientId);
                r.put("threadId", tid);
                r.put("field", clientId + ":" + tid);
                r.put("kinds", kinds());
                return r;
            }
            case "capabilities": {
                argc(cmd, a, 0, 0);
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("version", redissonVersion());
                r.put("kinds", kinds());
                r.put("unsupported", new LinkedHashMap<>(UNSUPPORTED));
                return r;
            }
            case "sleep":
                argc(cmd, a, 1, 1);
                Thread.sleep(num(a[0]));
                return null;

            // ---- plain reentrant lock
            case "lock":
            case "tryLock":
            case "unlock":
            case "forceUnlock":
            case "holdCount":
            case "isLocked":
            case "isHeldByThread":
            case "remainTTL":
                requireName(cmd, a);
                return lockOp(cmd, cmd, redisson.getLock(a[0]), a);

            case "counter": {
                argc(cmd, a, 4, 5);
                RLock lock = redisson.getLock(a[0]);
                return counter(w, a[1], num(a[2]), num(a[3]), gapMs(a), () -> {
                    lock.lock();
                    return null;
                }, lock::unlock);
            }
            case "rwcounter":
                argc(cmd, a, 4, 4);
                return rwcounter(w, a[0], a[1], num(a[2]), num(a[3]));

            // ---- the fault suite's Java party (tests/faults/)
            case "clock": {
                argc(cmd, a, 0, 0);
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("nanoTime", System.nanoTime());
                r.put("epochMicros", epochMicros());
                return r;
            }
            case "contend":
                argc(cmd, a, 3, 4);
                return contend(a[0], num(a[1]), num(a[2]), a.length == 4 ? num(a[3]) : 0);
            case "stopContend":
                argc(cmd, a, 0, 0);
                return STOP_GENERATION.incrementAndGet();

            case "benchLockUnlock":
                argc(cmd, a, 2, 2);
                return bench(redisson.getLock(a[0]), num(a[1]), false);
            case "benchTryLock":
                argc(cmd, a, 2, 2);
                return bench(redisson.getLock(a[0]), num(a[1]), true);
            // ---- benchmark-only commands used by scripts/bench (benches/locks/)
            case "benchAcquire":
                argc(cmd, a, 2, 2);
                return benchAcquire(redisson.getLock(a[0]), num(a[1]));
            case "benchThroughput":
                argc(cmd, a, 3, 3);
                return benchThroughput(a[0], (int) num(a[1]), num(a[2]));
            case "benchHandoff":
                argc(cmd, a, 3, 3);
                return benchHandoff(redisson.getLock(a[0]), (int) num(a[1]), (int) num(a[2]));
            // ---- the server-cost section (benches/locks/sections/server_cost.rs); KIND = lock|read|fair
            case "benchThroughputKind":
                argc(cmd, a, 4, 4);
                benchLoopStart(a[0], a[1], (int) num(a[2]), 200);
                return benchLoopRun(num(a[3]));
            case "benchLoopStart":
                argc(cmd, a, 4, 4);
                return benchLoopStart(a[0], a[1], (int) num(a[2]), num(a[3]));
            case "benchLoopRun":
                argc(cmd, a, 1, 1);
                return benchLoopRun(num(a[0]));
            case "benchHold":
                argc(cmd, a, 3, 3);
                return benchHold(a[0], a[1], (int) num(a[2]));
            case "benchRelease":
                argc(cmd, a, 1, 1);
                return benchRelease(a[0]);

            default:
                break;
        }
        // ---- fair lock (every version): fair<Op> on getFairLock(NAME)
        String fairOp = opOf(cmd, "fair");
        if (fairOp != null) {
            requireName(cmd, a);
            RLock fair = redisson.getFairLock(a[0]);
            if (fairOp.equals("counter")) {
                argc(cmd, a, 4, 5);
                return counter(w, a[1], num(a[2]), num(a[3]), gapMs(a), () -> {
                    fair.lock();
                    return null;
                }, fair::unlock);
            }
            return lockOp(cmd, fairOp, fair, a);
        }
        // ---- MultiLock (every version): multi<Op> on new RedissonMultiLock(getLock(n1), getLock(n2), ...)
        // for NAMES = "n1,n2,..." (members in that order); lock, tryLock, unlock and counter only: the
        // other RLock calls are unsupported by RedissonMultiLock itself
        String multiOp = opOf(cmd, "multi");
        if (multiOp != null) {
            requireName(cmd, a);
            RLock multi = multiLock(a[0]);
            switch (multiOp) {
                case "counter":
                    argc(cmd, a, 4, 5);
                    return counter(w, a[1], num(a[2]), num(a[3]), gapMs(a), () -> {
                        multi.lock();
                        return null;
                    }, multi::unlock);
                case "lock":
                case "tryLock":
                case "unlock":
                    return lockOp(cmd, multiOp, multi, a);
                default:
                    throw new IllegalArgumentException("unknown command: " + cmd
                            + " (a multi-lock has multiLock, multiTryLock, multiUnlock, multiCounter)");
            }
        }
        // ---- count-down latch (every version): latch<Op> on getCountDownLatch(NAME); not a lock kind,
        // so it is not listed in "kinds"
        String latchOp = opOf(cmd, "latch");
        if (latchOp != null) {
            if (a.length < 1) {
                throw new IllegalArgumentException(cmd + ": missing latch NAME");
            }
            return latchOp(cmd, latchOp, redisson.getCountDownLatch(a[0]), a);
        }
        // ---- semaphores (every version): semaphore<Op> on getSemaphore(NAME), expirable<Op> on
        // getPermitExpirableSemaphore(NAME) (SemaphoreCommands; newer calls by reflection); not lock
        // kinds, so not listed in "kinds"
        String semaphoreOp = opOf(cmd, "semaphore");
        if (semaphoreOp != null) {
            if (a.length < 1) {
                throw new IllegalArgumentException(cmd + ": missing semaphore NAME");
            }
            return SemaphoreCommands.semaphore(cmd, semaphoreOp, a);
        }
        String expirableOp = opOf(cmd, "expirable");
        if (expirableOp != null) {
            if (a.length < 1) {
                throw new IllegalArgumentException(cmd + ": missing semaphore NAME");
            }
            return SemaphoreCommands.expirable(cmd, expirableOp, a);
        }
        // ---- the fenced-write scenario's order database (FencedWriteCommands: JDBC, every version)
        String ordersOp = opOf(cmd, "orders");
        if (ordersOp != null) {
            return FencedWriteCommands.execute(cmd, ordersOp, a);
        }
        // ---- optional kinds: <kind><Op> (spinLock, fencedGetToken, nonReentrantTryLock, ...); the
        // longest kind id wins, so nonReentrantFairLock goes to nonReentrantFair, not nonReentrant
        String kind = null;
        for (String k : kindIds()) {
            if (opOf(cmd, k) != null && (kind == null || k.length() > kind.length())) {
                kind = k;
            }
        }
        if (kind != null) {
            KindCommands commands = KINDS.get(kind);
            if (commands == null) {
                throw new UnsupportedOperationException(UNSUPPORTED.get(kind));
            }
            return commands.execute(w, cmd, opOf(cmd, kind), a);
        }
        // ---- read/write lock: readX / writeX
        String sub = null;
        boolean read = false;
        if (cmd.startsWith("read") && cmd.length() > 4) {
            sub = cmd.substring(4);
            read = true;
        } else if (cmd.startsWith("write") && cmd.length() > 5) {
            sub = cmd.substring(5);
        }
        if (sub != null) {
            String op = Character.toLowerCase(sub.charAt(0)) + sub.substring(1);
            switch (op) {
                case "lock":
                case "tryLock":
                case "unlock":
                case "forceUnlock":
                case "holdCount":
                case "isLocked":
                case "isHeldByThread":
                case "remainTTL":
                    requireName(cmd, a);
                    RReadWriteLock rw = redisson.getReadWriteLock(a[0]);
                    return lockOp(cmd, op, read ? rw.readLock() : rw.writeLock(), a);
                default:
                    break;
            }
        }
        throw new IllegalArgumentException("unknown command: " + cmd);
    }

    /**
     * The operations every lock kind shares; {@code cmd} is the full command (for messages),
     * {@code op} the operation without the kind's prefix ({@code lock}, {@code tryLock}, ...),
     * {@code a[0]} the lock name.
     */
    static Object lockOp(String cmd, String op, RLock lock, String[] a) throws InterruptedException {
        switch (op) {
            case "lock":
                argc(cmd, a, 1, 2);
                if (a.length == 1) {
                    lock.lock();
                } else {
                    lock.lock(num(a[1]), TimeUnit.MILLISECONDS);
                }
                return null;
            case "tryLock":
                argc(cmd, a, 1, 3);
                if (a.length == 1) {
                    return lock.tryLock();
                } else if (a.length == 2) {
                    return lock.tryLock(num(a[1]), TimeUnit.MILLISECONDS);
                } else {
                    return lock.tryLock(num(a[1]), num(a[2]), TimeUnit.MILLISECONDS);
                }
            case "unlock":
                argc(cmd, a, 1, 1);
                lock.unlock();
                return null;
            case "forceUnlock":
                argc(cmd, a, 1, 1);
                return lock.forceUnlock();
            case "holdCount":
                argc(cmd, a, 1, 1);
                return lock.getHoldCount();
            case "isLocked":
                argc(cmd, a, 1, 1);
                return lock.isLocked();
            case "isHeldByThread":
                argc(cmd, a, 1, 1);
                return lock.isHeldByCurrentThread();
            case "remainTTL":
                argc(cmd, a, 1, 1);
                return lock.remainTimeToLive();
            default:
                throw new IllegalArgumentException("unknown command: " + cmd);
        }
    }

    /**
     * The {@code RCountDownLatch} calls; {@code cmd} is the full command (for messages), {@code op}
     * the operation without the {@code latch} prefix, {@code a[0]} the latch name. {@code await}
     * blocks its worker until the count is 0 or the timeout ends; other workers go on meanwhile.
     */
    static Object latchOp(String cmd, String op, RCountDownLatch latch, String[] a) throws InterruptedException {
        switch (op) {
            case "trySetCount":
                argc(cmd, a, 2, 2);
                return latch.trySetCount(num(a[1]));
            case "countDown":
                argc(cmd, a, 1, 1);
                latch.countDown();
                return null;
            case "getCount":
                argc(cmd, a, 1, 1);
                return latch.getCount();
            case "await":
                argc(cmd, a, 2, 2);
                return latch.await(num(a[1]), TimeUnit.MILLISECONDS);
            case "delete":
                argc(cmd, a, 1, 1);
                return latch.delete();
            default:
                throw new IllegalArgumentException("unknown command: " + cmd + " (a count-down latch has"
                        + " latchTrySetCount, latchCountDown, latchGetCount, latchAwait, latchDelete)");
        }
    }

    /** One acquisition of a {@code counter} round; returns a tag for the interval record, or null. */
    interface Acquire {
        String acquire() throws Exception;
    }

    /**
     * The {@code counter} loop of every kind: ROUNDS times {@code acquire}, GET KEY, sleep, SET n+1,
     * RPUSH {@code java:<worker>[:<tag>]:<startMicros>:<endMicros>} to {@code KEY:intervals},
     * {@code release}. Returns the rounds done.
     */
    /** The optional GAP_MS (5th argument) of the {@code counter} commands; 0 when absent. */
    static long gapMs(String[] a) {
        return a.length > 4 ? num(a[4]) : 0;
    }

    static long counter(Worker w, String key, long rounds, long sleepMs, Acquire acquire, Runnable release)
            throws Exception {
        return counter(w, key, rounds, sleepMs, 0, acquire, release);
    }

    /**
     * The {@code counter} loop; after every round but the last the worker sleeps GAP_MS (if &gt; 0)
     * <em>outside</em> the lock, so that polling waiters (spin locks) find it free now and then.
     */
    static long counter(Worker w, String key, long rounds, long sleepMs, long gapMs, Acquire acquire,
            Runnable release) throws Exception {
        RBucket<String> value = redisson.getBucket(key, StringCodec.INSTANCE);
        RList<String> intervals = redisson.getList(key + ":intervals", StringCodec.INSTANCE);
        long done = 0;
        for (long i = 0; i < rounds; i++) {
            String tag = acquire.acquire();
            try {
                long start = epochMicros();
                String v = value.get();
                long n = v == null ? 0 : Long.parseLong(v.trim());
                if (sleepMs > 0) {
                    Thread.sleep(sleepMs);
                }
                value.set(Long.toString(n + 1));
                long end = epochMicros();
                intervals.add("java:" + w.name + (tag == null ? "" : ":" + tag) + ":" + start + ":" + end);
            } finally {
                release.run();
            }
            done++;
            if (gapMs > 0 && done < rounds) {
                Thread.sleep(gapMs);
            }
        }
        return done;
    }

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
    private static Object contend(String namesArg, long rounds, long maxHoldMs, long budgetMs) {
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
            locks[i] = redisson.getLock(names[i]);
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
                    String m = message(t);
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
        res.put("field", clientId + ":" + Thread.currentThread().getId());
        res.put("stopped", stopped);
        res.put("elapsed_ns", System.nanoTime() - t0);
        res.put("sections", sections);
        res.put("rounds", out);
        return res;
    }

    private static void putError(Map<String, Object> r, Throwable t) {
        r.put("errorClass", t.getClass().getName());
        String m = message(t);
        r.put("error", m.length() > 300 ? m.substring(0, 300) : m);
    }

    private static long rwcounter(Worker w, String name, String key, long rounds, long writePercent) {
        RReadWriteLock rw = redisson.getReadWriteLock(name);
        RBucket<String> value = redisson.getBucket(key, StringCodec.INSTANCE);
        RList<String> intervals = redisson.getList(key + ":intervals", StringCodec.INSTANCE);
        long writes = 0;
        for (long i = 0; i < rounds; i++) {
            boolean write = ThreadLocalRandom.current().nextInt(100) < writePercent;
            RLock lock = write ? rw.writeLock() : rw.readLock();
            lock.lock();
            try {
                long start = epochMicros();
                String v = value.get();
                long n = v == null ? 0 : Long.parseLong(v.trim());
                if (write) {
                    value.set(Long.toString(n + 1));
                }
                long end = epochMicros();
                intervals.add("java:" + w.name + ":" + (write ? "w" : "r") + ":" + start + ":" + end);
            } finally {
                lock.unlock();
            }
            if (write) {
                writes++;
            }
        }
        return writes;
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
            RLock lock = redisson.getLock(prefix + ":" + t);
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
                return redisson.getLock(name);
            case "read":
                return redisson.getReadWriteLock(name).readLock();
            case "fair":
                return redisson.getFairLock(name);
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

    // ---------------------------------------------------------------- helpers

    /** Wall-clock epoch microseconds (Instant has microsecond precision on Linux, Java 15+). */
    static long epochMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** The client (for the kind command classes). */
    static RedissonClient redisson() {
        return redisson;
    }

    /**
     * The operation of {@code cmd} under kind prefix {@code prefix}, first letter lower case
     * ({@code opOf("fairTryLock", "fair")} = {@code tryLock}), or null when {@code cmd} is not
     * {@code <prefix><Upper...>}.
     */
    /** A RedissonMultiLock over the plain locks named in the comma-separated NAMES, in that order. */
    static RLock multiLock(String names) {
        String[] each = names.split(",");
        RLock[] locks = new RLock[each.length];
        for (int i = 0; i < each.length; i++) {
            if (each[i].isEmpty()) {
                throw new IllegalArgumentException("empty member name in " + names);
            }
            locks[i] = redisson.getLock(each[i]);
        }
        return new RedissonMultiLock(locks);
    }

    static String opOf(String cmd, String prefix) {
        if (cmd.length() > prefix.length() && cmd.startsWith(prefix)
                && Character.isUpperCase(cmd.charAt(prefix.length()))) {
            String op = cmd.substring(prefix.length());
            return Character.toLowerCase(op.charAt(0)) + op.substring(1);
        }
        return null;
    }

    static void requireName(String cmd, String[] a) {
        if (a.length < 1) {
            throw new IllegalArgumentException(cmd + ": missing lock NAME");
        }
    }

    static void argc(String cmd, String[] a, int min, int max) {
        if (a.length < min || a.length > max) {
            throw new IllegalArgumentException(cmd + ": expected " + (min == max ? "" + min : min + ".." + max)
                    + " argument(s), got " + a.length);
        }
    }

    static long num(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an integer: " + s);
        }
    }

    private static String message(Throwable t) {
        String m = t.getMessage();
        return m != null ? m : t.toString();
    }

    /**
     * Finds the optional kinds listed in {@code kinds.properties}: {@code <Kind>Commands} is in the
     * jar only when build-harness.sh compiled {@code src/main/kinds/<kind>/} for this Redisson
     * version; otherwise the kind's commands answer {@code unsupported: <title> needs Redisson <since>+}.
     */
    static void loadKinds() {
        Properties p = properties("/kinds.properties");
        for (String kind : kindIds(p)) {
            String cls = Character.toUpperCase(kind.charAt(0)) + kind.substring(1) + "Commands";
            String needs = "unsupported: " + p.getProperty(kind + ".title", kind) + " needs Redisson "
                    + p.getProperty(kind + ".since", "?") + "+ (this harness is built with Redisson "
                    + redissonVersion() + ")";
            try {
                KINDS.put(kind, (KindCommands) Class.forName(cls).getDeclaredConstructor().newInstance());
            } catch (ClassNotFoundException e) {
                UNSUPPORTED.put(kind, needs);
            } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
                UNSUPPORTED.put(kind, needs + "; loading " + cls + " failed: " + e);
                System.err.println("harness: cannot load " + cls + ": " + e);
            }
        }
    }

    private static List<String> kindIds() {
        List<String> ids = new ArrayList<>(KINDS.keySet());
        ids.addAll(UNSUPPORTED.keySet());
        return ids;
    }

    private static List<String> kindIds(Properties p) {
        List<String> ids = new ArrayList<>();
        for (String k : p.getProperty("kinds", "").trim().split("\\s+")) {
            if (!k.isEmpty()) {
                ids.add(k);
            }
        }
        return ids;
    }

    /** The kinds this jar supports, core first: {@code ["lock","readWrite","spin",...]}. */
    static List<String> kinds() {
        List<String> all = new ArrayList<>(CORE_KINDS);
        all.addAll(KINDS.keySet());
        return all;
    }

    static String redissonVersion() {
        // The Maven metadata of the bundled Redisson jar is kept by the shade plugin.
        String v = readProperty("/META-INF/maven/org.redisson/redisson/pom.properties", "version");
        if (v == null) {
            v = readProperty("/harness.properties", "redisson.version");
        }
        return v != null ? v : "unknown";
    }

    private static String readProperty(String resource, String key) {
        return properties(resource).getProperty(key);
    }

    /** A bundled properties file; empty when missing or unreadable. */
    private static Properties properties(String resource) {
        Properties p = new Properties();
        try (InputStream in = Harness.class.getResourceAsStream(resource)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            System.err.println("harness: cannot read " + resource + ": " + e);
        }
        return p;
    }

    // ----------------------------------------------------------------- output

    static void emit(String line) {
        synchronized (OUT_LOCK) {
            protocolOut.print(line);
            protocolOut.print('\n');
            protocolOut.flush();
        }
    }

    private static void emitResponse(long seq, String worker, String cmd, boolean ok, Object result, Throwable err,
                                     Long threadId, long startMs) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", seq);
        m.put("worker", worker);
        m.put("cmd", cmd);
        m.put("ok", ok);
        m.put("result", result);
        m.put("error", err == null ? null : message(err));
        m.put("errorClass", err == null ? null : err.getClass().getName());
        m.put("threadId", threadId);
        m.put("ts_ms", System.currentTimeMillis());
        m.put("start_ms", startMs);
        emit(Json.write(m));
    }

    private static void emitMalformed(Long seq, String worker, String cmd, String msg) {
        long now = System.currentTimeMillis();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", seq);
        m.put("worker", worker);
        m.put("cmd", cmd);
        m.put("ok", false);
        m.put("result", null);
        m.put("error", msg);
        m.put("errorClass", IllegalArgumentException.class.getName());
        m.put("threadId", null);
        m.put("ts_ms", now);
        m.put("start_ms", now);
        emit(Json.write(m));
    }

    /** Minimal JSON writer for null, Boolean, Number, String, Map, List, long[]. */
    static final class Json {
        private Json() {
        }

        static String write(Object v) {
            StringBuilder sb = new StringBuilder(64);
            write(sb, v);
            return sb.toString();
        }

        private static void write(StringBuilder sb, Object v) {
            if (v == null) {
                sb.append("null");
            } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long
                    || v instanceof Short || v instanceof Byte) {
                sb.append(v);
            } else if (v instanceof Number) {
                double d = ((Number) v).doubleValue();
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    sb.append("null");
                } else {
                    sb.append(v);
                }
            } else if (v instanceof long[]) {
                long[] arr = (long[]) v;
                sb.append('[');
                for (int i = 0; i < arr.length; i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    sb.append(arr[i]);
                }
                sb.append(']');
            } else if (v instanceof Map) {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    string(sb, String.valueOf(e.getKey()));
                    sb.append(':');
                    write(sb, e.getValue());
                }
                sb.append('}');
            } else if (v instanceof Iterable) {
                sb.append('[');
                boolean first = true;
                for (Object o : (Iterable<?>) v) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    write(sb, o);
                }
                sb.append(']');
            } else {
                string(sb, v.toString());
            }
        }

        private static void string(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"':
                        sb.append("\\\"");
                        break;
                    case '\\':
                        sb.append("\\\\");
                        break;
                    case '\n':
                        sb.append("\\n");
                        break;
                    case '\r':
                        sb.append("\\r");
                        break;
                    case '\t':
                        sb.append("\\t");
                        break;
                    case '\b':
                        sb.append("\\b");
                        break;
                    case '\f':
                        sb.append("\\f");
                        break;
                    default:
                        if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                            sb.append(String.format("\\u%04x", (int) c));
                        } else {
                            sb.append(c);
                        }
                }
            }
            sb.append('"');
        }
    }
}
