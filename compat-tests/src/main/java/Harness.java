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

import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.api.RBucket;
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
            case "clock":
                argc(cmd, a, 0, 0);
                return FaultCommands.clock();
            case "contend":
                argc(cmd, a, 3, 4);
                return FaultCommands.contend(a[0], num(a[1]), num(a[2]), a.length == 4 ? num(a[3]) : 0);
            case "stopContend":
                argc(cmd, a, 0, 0);
                return FaultCommands.stopContend();

            default:
                break;
        }
        // ---- benchmark-only commands used by scripts/bench (benches/locks/)
        if (cmd.startsWith("bench")) {
            return BenchCommands.execute(cmd, a);
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
        // ---- map entries (every version): mapEntryName and mapLock<Op> on getMap(MAP, CODEC).getLock(KEY)
        // (MapEntryCommands; the entry is one MAP|CODEC|KEYTYPE|XHEX token); checked before the
        // other prefixes, which none of them shares
        if (cmd.equals("mapEntryName") || cmd.equals("mapEntryOp") || cmd.equals("mapEntryDone") || opOf(cmd, "mapLock") != null) {
            return MapEntryCommands.execute(cmd, a);
        }
        // ---- grouped multi-lock (3.38.0+, by reflection): group<Op> on getMultiLock(GROUP, values)
        // (GroupCommands); not an optional kind: every jar has the commands, older versions answer
        // "unsupported"
        String groupOp = opOf(cmd, "group");
        if (groupOp != null) {
            return GroupCommands.execute(cmd, groupOp, a);
        }
        // ---- count-down latch (every version): latch<Op> on getCountDownLatch(NAME); not a lock kind,
        // so it is not listed in "kinds"
        String latchOp = opOf(cmd, "latch");
        if (latchOp != null) {
            if (a.length < 1) {
                throw new IllegalArgumentException(cmd + ": missing latch NAME");
            }
            return LatchCommands.execute(cmd, latchOp, redisson.getCountDownLatch(a[0]), a);
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

    /** One acquisition of a {@code counter} round; returns a tag for the interval record, or null. */
    interface Acquire {
        String acquire() throws Exception;
    }

    /** The optional GAP_MS (5th argument) of the {@code counter} commands; 0 when absent. */
    static long gapMs(String[] a) {
        return a.length > 4 ? num(a[4]) : 0;
    }

    /**
     * The {@code counter} loop of every kind: ROUNDS times {@code acquire}, GET KEY, sleep, SET n+1,
     * RPUSH {@code java:<worker>[:<tag>]:<startMicros>:<endMicros>} to {@code KEY:intervals},
     * {@code release}. Returns the rounds done.
     */
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

    // ---------------------------------------------------------------- helpers

    /** Wall-clock epoch microseconds (Instant has microsecond precision on Linux, Java 15+). */
    static long epochMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /** Redisson's client id: the UUID its hash fields start with. */
    static String clientId() {
        return clientId;
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

    static String message(Throwable t) {
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

}
