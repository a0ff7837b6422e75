/**
 * The commands of one optional lock kind ({@code <kind><Op> NAME ...}). An implementation lives in
 * {@code src/main/kinds/<kind>/<Kind>Commands.java} and is compiled only for Redisson versions
 * that have the kind (see {@code kinds.properties} and build-harness.sh); {@link Harness} loads it
 * with {@code Class.forName} and needs a public no-argument constructor.
 */
public interface KindCommands {
    /**
     * Runs one command on the worker's thread.
     *
     * @param w   the worker
     * @param cmd the full command, for messages ({@code fencedGetToken})
     * @param op  the command without the kind prefix, first letter lower case ({@code getToken})
     * @param a   the arguments; {@code a[0]} is the lock name
     * @return the JSON result (null, Boolean, Number, String, Map, List)
     * @throws IllegalArgumentException for an unknown operation or bad arguments
     */
    Object execute(Harness.Worker w, String cmd, String op, String[] a) throws Exception;
}
