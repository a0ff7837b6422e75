import java.util.concurrent.TimeUnit;

import org.redisson.api.RCountDownLatch;

/** The count-down latch commands: {@code latch<Op>} on {@code getCountDownLatch(NAME)}. */
final class LatchCommands {
    private LatchCommands() {
    }

    /**
     * The {@code RCountDownLatch} calls; {@code cmd} is the full command (for messages), {@code op}
     * the operation without the {@code latch} prefix, {@code a[0]} the latch name. {@code await}
     * blocks its worker until the count is 0 or the timeout ends; other workers go on meanwhile.
     */
    static Object execute(String cmd, String op, RCountDownLatch latch, String[] a) throws InterruptedException {
        switch (op) {
            case "trySetCount":
                Harness.argc(cmd, a, 2, 2);
                return latch.trySetCount(Harness.num(a[1]));
            case "countDown":
                Harness.argc(cmd, a, 1, 1);
                latch.countDown();
                return null;
            case "getCount":
                Harness.argc(cmd, a, 1, 1);
                return latch.getCount();
            case "await":
                Harness.argc(cmd, a, 2, 2);
                return latch.await(Harness.num(a[1]), TimeUnit.MILLISECONDS);
            case "delete":
                Harness.argc(cmd, a, 1, 1);
                return latch.delete();
            default:
                throw new IllegalArgumentException("unknown command: " + cmd + " (a count-down latch has"
                        + " latchTrySetCount, latchCountDown, latchGetCount, latchAwait, latchDelete)");
        }
    }
}
