import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import io.netty.buffer.ByteBuf;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RLock;
import org.redisson.api.RMap;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RSet;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.Codec;
import org.redisson.client.codec.LongCodec;
import org.redisson.client.codec.StringCodec;
import org.redisson.codec.JsonJacksonCodec;
import org.redisson.codec.Kryo5Codec;

/**
 * Map-entry objects ({@code RMap.getLock(key)} and the other per-entry getters, {@code RSet.getLock(value)}):
 * the names Redisson derives, and the lock of one map entry.
 *
 * <p>An entry is given as one token {@code MAP|CODEC|KEYTYPE|XHEX}: CODEC {@code string}, {@code long},
 * {@code json} (JsonJacksonCodec), {@code kryo5} (Kryo5Codec) or {@code default} (the client's configured
 * codec); KEYTYPE {@code string}, {@code long}, {@code int} or {@code uuid}; XHEX an {@code x} followed by the
 * hex of the key's UTF-8 text (a decimal number for long/int, the canonical text for uuid), so that empty keys,
 * blanks and non-ASCII keys survive the line protocol.
 */
final class MapEntryCommands {
    private MapEntryCommands() {
    }

    /**
     * {@code mapEntryName SPEC}, {@code mapLock<Op> SPEC [ARGS]} (the lock commands on {@code getLock(key)}), and
     * {@code mapEntryOp SPEC OBJECT OP [ARG]}: one call on one of the entry's objects, without waiting (see
     * {@link #entryOp}).
     */
    static Object execute(String cmd, String[] a) throws InterruptedException {
        if (cmd.equals("mapEntryDone")) {
            // the local cached maps mapEntryName made: destroyed (their topics unsubscribed)
            Harness.argc(cmd, a, 0, 0);
            int n = 0;
            for (java.util.Optional<Object> m : LOCAL_MAPS.values()) {
                if (m.isPresent()) {
                    call(m.get(), "destroy");
                    n++;
                }
            }
            LOCAL_MAPS.clear();
            return n;
        }
        if (a.length < 1) {
            throw new IllegalArgumentException(cmd + ": missing MAP|CODEC|KEYTYPE|XHEX");
        }
        Entry e = parse(a[0]);
        if (cmd.equals("mapEntryName")) {
            Harness.argc(cmd, a, 1, 1);
            return names(e);
        }
        if (cmd.equals("mapEntryOp")) {
            Harness.argc(cmd, a, 3, 4);
            return entryOp(cmd, e, a[1], a[2], a.length == 4 ? a[3] : null);
        }
        String op = Harness.opOf(cmd, "mapLock");
        if (op == null) {
            throw new IllegalArgumentException("unknown command: " + cmd + " (map entries have mapEntryName and"
                    + " mapLock<Op>)");
        }
        RLock lock = Harness.redisson().getMap(e.map, e.codec).getLock(e.key);
        return Harness.lockOp(cmd, op, lock, a);
    }

    /**
     * One call on an object of the entry, none of which waits: OBJECT {@code lock} ({@code getLock}),
     * {@code fairlock}, {@code read} / {@code write} (the sides of {@code getReadWriteLock}) with OP
     * {@code tryLock}, {@code unlock} or {@code isLocked}; {@code semaphore} with {@code trySetPermits N},
     * {@code tryAcquire} (one permit), {@code release} (one) or {@code availablePermits}; {@code pes}
     * ({@code getPermitExpirableSemaphore}) with {@code trySetPermits N}, {@code tryAcquire} (the permit id or
     * null), {@code release ID} or {@code availablePermits}; {@code latch} with {@code trySetCount N},
     * {@code countDown} or {@code getCount}.
     */
    static Object entryOp(String cmd, Entry e, String object, String op, String arg) {
        RMap<Object, Object> map = Harness.redisson().getMap(e.map, e.codec);
        switch (object) {
            case "lock":
                return lockOp(cmd, op, map.getLock(e.key));
            case "fairlock":
                return lockOp(cmd, op, map.getFairLock(e.key));
            case "read":
                return lockOp(cmd, op, map.getReadWriteLock(e.key).readLock());
            case "write":
                return lockOp(cmd, op, map.getReadWriteLock(e.key).writeLock());
            case "semaphore": {
                RSemaphore s = map.getSemaphore(e.key);
                switch (op) {
                    case "trySetPermits":
                        return s.trySetPermits(Integer.parseInt(need(cmd, arg)));
                    case "tryAcquire":
                        return s.tryAcquire();
                    case "release":
                        s.release();
                        return null;
                    case "availablePermits":
                        return s.availablePermits();
                    default:
                        break;
                }
                break;
            }
            case "pes": {
                RPermitExpirableSemaphore s = map.getPermitExpirableSemaphore(e.key);
                switch (op) {
                    case "trySetPermits":
                        return s.trySetPermits(Integer.parseInt(need(cmd, arg)));
                    case "tryAcquire":
                        return s.tryAcquire();
                    case "release":
                        s.release(need(cmd, arg));
                        return null;
                    case "availablePermits":
                        return s.availablePermits();
                    default:
                        break;
                }
                break;
            }
            case "latch": {
                RCountDownLatch l = map.getCountDownLatch(e.key);
                switch (op) {
                    case "trySetCount":
                        return l.trySetCount(Long.parseLong(need(cmd, arg)));
                    case "countDown":
                        l.countDown();
                        return null;
                    case "getCount":
                        return l.getCount();
                    default:
                        break;
                }
                break;
            }
            default:
                throw new IllegalArgumentException(cmd + ": unknown OBJECT " + object
                        + " (lock, fairlock, read, write, semaphore, pes, latch)");
        }
        throw new IllegalArgumentException(cmd + ": " + object + " has no OP " + op);
    }

    private static Object lockOp(String cmd, String op, RLock lock) {
        switch (op) {
            case "tryLock":
                return lock.tryLock();
            case "unlock":
                lock.unlock();
                return null;
            case "isLocked":
                return lock.isLocked();
            default:
                throw new IllegalArgumentException(cmd + ": a lock has no OP " + op + " (tryLock, unlock, isLocked)");
        }
    }

    private static String need(String cmd, String arg) {
        if (arg == null) {
            throw new IllegalArgumentException(cmd + ": this OP takes an argument");
        }
        return arg;
    }

    /** The bytes the codec encodes the key to, and every name Redisson derives from the entry. */
    static Map<String, Object> names(Entry e) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("codec", e.codec.getClass().getName());
        r.put("mapKeyBytes", hex(e.codec.getMapKeyEncoder(), e.key));
        r.put("valueBytes", hex(e.codec.getValueEncoder(), e.key));
        RedissonClient redisson = Harness.redisson();
        RMap<Object, Object> map = redisson.getMap(e.map, e.codec);
        r.put("lock", map.getLock(e.key).getName());
        r.put("fairlock", map.getFairLock(e.key).getName());
        // RReadWriteLock is no RObject in every version: its name is its sides' name
        r.put("rw_lock", map.getReadWriteLock(e.key).readLock().getName());
        r.put("semaphore", map.getSemaphore(e.key).getName());
        r.put("permitexpirablesemaphore", map.getPermitExpirableSemaphore(e.key).getName());
        r.put("countdownlatch", map.getCountDownLatch(e.key).getName());
        r.put("rw_lock.write", map.getReadWriteLock(e.key).writeLock().getName());
        RSet<Object> set = redisson.getSet(e.map, e.codec);
        r.put("set.lock", set.getLock(e.key).getName());
        r.put("set.fairlock", set.getFairLock(e.key).getName());
        r.put("set.rw_lock", set.getReadWriteLock(e.key).readLock().getName());
        r.put("set.semaphore", set.getSemaphore(e.key).getName());
        r.put("set.permitexpirablesemaphore", set.getPermitExpirableSemaphore(e.key).getName());
        r.put("set.countdownlatch", set.getCountDownLatch(e.key).getName());
        // the containers that inherit the getters: each prefix's six names, as far as this version
        // has them (by reflection, so every version's jar builds)
        containerNames(r, "mapcache", redisson.getMapCache(e.map, e.codec), e.key);
        containerNames(r, "setcache", redisson.getSetCache(e.map, e.codec), e.key);
        containerNames(r, "listmultimap", redisson.getListMultimap(e.map, e.codec), e.key);
        containerNames(r, "setmultimap", redisson.getSetMultimap(e.map, e.codec), e.key);
        // one local cached map per map and codec for the harness' life: each subscribes to its
        // invalidation topic, and hundreds made and destroyed in a row exhaust the subscriptions
        Object local = LOCAL_MAPS.computeIfAbsent(e.map + "|" + e.codec.getClass().getName(),
                k -> java.util.Optional.ofNullable(localCachedMap(redisson, e))).orElse(null);
        if (local != null) {
            containerNames(r, "localcachedmap", local, e.key);
        }
        return r;
    }

    /** The local cached maps made so far, by map name and codec class (empty: this version has none). */
    private static final java.util.concurrent.ConcurrentHashMap<String, java.util.Optional<Object>> LOCAL_MAPS =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** The six getters' names on {@code container} under {@code prefix.<suffix>}; a getter it lacks is left out. */
    private static void containerNames(Map<String, Object> r, String prefix, Object container, Object key) {
        String[][] getters = {
            {"getLock", "lock"},
            {"getFairLock", "fairlock"},
            {"getReadWriteLock", "rw_lock"},
            {"getSemaphore", "semaphore"},
            {"getPermitExpirableSemaphore", "permitexpirablesemaphore"},
            {"getCountDownLatch", "countdownlatch"},
        };
        for (String[] g : getters) {
            Object o;
            try {
                o = container.getClass().getMethod(g[0], Object.class).invoke(container, key);
            } catch (NoSuchMethodException ex) {
                continue;
            } catch (ReflectiveOperationException ex) {
                throw new IllegalStateException(prefix + "." + g[0] + ": " + ex.getCause(), ex.getCause());
            }
            if (g[1].equals("rw_lock")) {
                o = call(o, "readLock");
            }
            r.put(prefix + "." + g[1], call(o, "getName"));
        }
    }

    /**
     * {@code getLocalCachedMap} of the entry's map and codec: {@code (LocalCachedMapOptions.name(n).codec(c))} in
     * newer versions, {@code (String, Codec, LocalCachedMapOptions.defaults())} in older ones; null if neither.
     */
    private static Object localCachedMap(RedissonClient redisson, Entry e) {
        try {
            Class<?> options = Class.forName("org.redisson.api.options.LocalCachedMapOptions");
            Object o = options.getMethod("name", String.class).invoke(null, e.map);
            o = options.getMethod("codec", Codec.class).invoke(o, e.codec);
            return RedissonClient.class.getMethod("getLocalCachedMap", options).invoke(redisson, o);
        } catch (ClassNotFoundException | NoSuchMethodException ex) {
            // an older version: below
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("getLocalCachedMap: " + ex.getCause(), ex.getCause());
        }
        try {
            Class<?> options = Class.forName("org.redisson.api.LocalCachedMapOptions");
            Object o = options.getMethod("defaults").invoke(null);
            return RedissonClient.class.getMethod("getLocalCachedMap", String.class, Codec.class, options)
                    .invoke(redisson, e.map, e.codec, o);
        } catch (ClassNotFoundException | NoSuchMethodException ex) {
            return null;
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("getLocalCachedMap: " + ex.getCause(), ex.getCause());
        }
    }

    private static Object call(Object o, String method) {
        try {
            return o.getClass().getMethod(method).invoke(o);
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException(method + ": " + ex, ex);
        }
    }

    static final class Entry {
        String map;
        Codec codec;
        Object key;
    }

    static Entry parse(String spec) {
        String[] p = spec.split("\\|", -1);
        if (p.length != 4 || !p[3].startsWith("x")) {
            throw new IllegalArgumentException("expected MAP|CODEC|KEYTYPE|XHEX, got " + spec);
        }
        Entry e = new Entry();
        e.map = p[0];
        e.codec = codec(p[1]);
        String text = new String(unhex(p[3].substring(1)), StandardCharsets.UTF_8);
        switch (p[2]) {
            case "string":
                e.key = text;
                break;
            case "long":
                e.key = Long.valueOf(text);
                break;
            case "int":
                e.key = Integer.valueOf(text);
                break;
            case "uuid":
                e.key = UUID.fromString(text);
                break;
            default:
                throw new IllegalArgumentException("unknown KEYTYPE " + p[2] + " (string, long, int, uuid)");
        }
        return e;
    }

    static Codec codec(String name) {
        switch (name) {
            case "string":
                return StringCodec.INSTANCE;
            case "long":
                return LongCodec.INSTANCE;
            case "json":
                return new JsonJacksonCodec();
            case "kryo5":
                return new Kryo5Codec();
            case "default":
                return Harness.redisson().getConfig().getCodec();
            default:
                throw new IllegalArgumentException("unknown CODEC " + name + " (string, long, json, kryo5, default)");
        }
    }

    static String hex(org.redisson.client.protocol.Encoder encoder, Object key) {
        ByteBuf buf;
        try {
            buf = encoder.encode(key);
        } catch (java.io.IOException ex) {
            throw new IllegalStateException("encode failed: " + ex, ex);
        }
        try {
            StringBuilder sb = new StringBuilder();
            for (int i = buf.readerIndex(); i < buf.writerIndex(); i++) {
                sb.append(String.format("%02x", buf.getByte(i) & 0xff));
            }
            return sb.toString();
        } finally {
            buf.release();
        }
    }

    static byte[] unhex(String s) {
        if (s.length() % 2 != 0) {
            throw new IllegalArgumentException("odd hex length: " + s);
        }
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
