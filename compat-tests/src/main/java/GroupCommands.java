import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * {@code group<Op> GROUP VALUES [ARGS]}: the grouped multi-lock {@code redisson.getMultiLock(GROUP, values)}
 * (RedissonFasterMultiLock, Redisson 3.38.0+), called by reflection so that this file compiles against every
 * version; an older one answers {@link UnsupportedOperationException}. VALUES is a comma-separated list of
 * {@code x<hex>} items, each the UTF-8 hex of one String value (encoded by the client's codec, as Redisson does).
 * Operations: those of {@link Harness#lockOp} with GROUP in place of the lock name ({@code groupLock GROUP VALUES
 * [LEASE]}, {@code groupTryLock GROUP VALUES [WAIT [LEASE]]}, {@code groupUnlock}, {@code groupForceUnlock},
 * {@code groupIsLocked}).
 */
final class GroupCommands {
    private GroupCommands() {
    }

    static Object execute(String cmd, String op, String[] a) throws Exception {
        if (a.length < 2) {
            throw new IllegalArgumentException(cmd + ": missing GROUP VALUES");
        }
        RLock lock = groupLock(a[0], values(cmd, a[1]));
        String[] rest = new String[a.length - 1];
        rest[0] = a[0];
        System.arraycopy(a, 2, rest, 1, a.length - 2);
        return Harness.lockOp(cmd, op, lock, rest);
    }

    private static List<Object> values(String cmd, String list) {
        List<Object> out = new ArrayList<>();
        for (String item : list.split(",")) {
            if (!item.startsWith("x") || (item.length() - 1) % 2 != 0) {
                throw new IllegalArgumentException(cmd + ": a value is x<hex of its UTF-8 text>, not " + item);
            }
            byte[] b = new byte[(item.length() - 1) / 2];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) Integer.parseInt(item.substring(1 + 2 * i, 3 + 2 * i), 16);
            }
            out.add(new String(b, StandardCharsets.UTF_8));
        }
        return out;
    }

    private static RLock groupLock(String group, Collection<Object> values) throws Exception {
        Method m;
        try {
            m = RedissonClient.class.getMethod("getMultiLock", String.class, Collection.class);
        } catch (NoSuchMethodException e) {
            throw new UnsupportedOperationException("unsupported: RedissonClient.getMultiLock(String, Collection)"
                    + " needs Redisson 3.38.0+ (this harness is built with Redisson " + Harness.redissonVersion() + ")");
        }
        try {
            return (RLock) m.invoke(Harness.redisson(), group, values);
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
