#!/usr/bin/env bash
# Smoke test of a built harness jar against a private, throw-away redis-server.
#
#   compat-tests/smoke-test.sh 3.52.0        (builds the jar first if needed)
#
# Starts redis-server on a random free loopback port (never 6379), drives the
# harness through the basic lock scenario, checks the responses and the Redis
# state (HGETALL / PTTL of the lock hash), and stops redis-server afterwards.
# Needs: java, mvn (for the build), redis-server, redis-cli, python3.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 REDISSON_VERSION" >&2; exit 2; }
VERSION="$1"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in java redis-server redis-cli python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "smoke-test: '$tool' not found" >&2; exit 1; }
done
JAR="$("$HERE/build-harness.sh" "$VERSION")"

WORK="$(mktemp -d)"
REDIS_PID=""
HARNESS_PID=""
cleanup() {
    if [ -n "$HARNESS_PID" ]; then kill "$HARNESS_PID" 2>/dev/null || true; fi
    if [ -n "$REDIS_PID" ]; then kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# --- private redis-server on a free random port
PORT=""
for _ in $(seq 1 20); do
    cand=$(( 20000 + RANDOM % 20000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$cand") 2>/dev/null; then PORT=$cand; break; fi
done
[ -n "$PORT" ] || { echo "smoke-test: no free port found" >&2; exit 1; }
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 1 100); do
    redis-cli -p "$PORT" ping >/dev/null 2>&1 && break
    sleep 0.05
done
redis-cli -p "$PORT" ping >/dev/null
RCLI=(redis-cli -h 127.0.0.1 -p "$PORT")

# --- harness, driven through a FIFO so we can interleave redis-cli checks
mkfifo "$WORK/in"
T0=$(date +%s%3N)
java -jar "$JAR" --url "redis://127.0.0.1:$PORT" --watchdog-ms 30000 \
    <"$WORK/in" >"$WORK/out" 2>"$WORK/err" &
HARNESS_PID=$!
exec 4>"$WORK/in"

wait_lines() { # wait until $WORK/out has >= $1 lines (timeout 60s)
    for _ in $(seq 1 1200); do
        [ "$(wc -l <"$WORK/out")" -ge "$1" ] && return 0
        sleep 0.05
    done
    echo "smoke-test: timeout waiting for $1 output lines" >&2
    cat "$WORK/out" "$WORK/err" >&2
    return 1
}

wait_lines 1
READY_MS=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["ts_ms"])' "$WORK/out")
echo "smoke-test: ready after $(( READY_MS - T0 )) ms (java start -> ready line)" >&2

N=1  # lines expected so far (ready line)
send() { echo "$*" >&4; N=$((N + 1)); }
step() { send "$@"; wait_lines "$N"; }   # one command, wait for its response
step 1 w1 hello
step 2 w2 hello
step 3 w1 lock L
step 4 w2 tryLock L
step 5 w1 holdCount L
step 6 w1 lock L
"${RCLI[@]}" HGETALL L >"$WORK/hgetall"
"${RCLI[@]}" PTTL L >"$WORK/pttl"
step 7 w1 isHeldByThread L
step 8 w2 isHeldByThread L
step 9 w1 remainTTL L
step 10 w1 unlock L
step 11 w1 unlock L
step 12 w1 unlock L
step 13 w2 tryLock L
step 14 w2 unlock L
step 15 w1 isLocked L
send 16 w1 counter CL ctr 20 1      # w1 and w2 run concurrently
step 17 w2 counter CL ctr 20 1
wait_lines "$N"
step 18 w1 writeLock RW
step 19 w2 readTryLock RW 100
step 20 w1 writeUnlock RW
send 21 w2 rwcounter RW rwc 20 50
step 22 w1 rwcounter RW rwc 20 50
step 23 w1 nosuchcommand
send 24 w1 exit
exec 4>&-
wait "$HARNESS_PID" && rc=0 || rc=$?
HARNESS_PID=""
"${RCLI[@]}" GET ctr >"$WORK/ctr"
"${RCLI[@]}" LLEN ctr:intervals >"$WORK/ctr_llen"
"${RCLI[@]}" LRANGE ctr:intervals 0 -1 >"$WORK/ctr_intervals"
"${RCLI[@]}" GET rwc >"$WORK/rwc"
"${RCLI[@]}" LRANGE rwc:intervals 0 -1 >"$WORK/rwc_intervals"

echo "--- harness stdout" >&2; cat "$WORK/out" >&2
if [ -s "$WORK/err" ]; then echo "--- harness stderr" >&2; cat "$WORK/err" >&2; fi

python3 - "$WORK" "$rc" "$VERSION" <<'PY'
import json, sys
work, rc, version = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [json.loads(l) for l in open(work + "/out")]
ready, resp = lines[0], {l["seq"]: l for l in lines[1:]}
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)
check(rc == 0, f"exit code {rc}")
check(ready.get("event") == "ready", "ready event")
check(ready.get("version") == version, f"version {ready.get('version')} != {version}")
cid = ready["clientId"]
check(sorted(resp) == list(range(1, 25)), f"one response per command: {sorted(resp)}")
for k in ("seq", "worker", "cmd", "ok", "result", "error", "errorClass", "threadId", "ts_ms", "start_ms"):
    check(all(k in r for r in resp.values()), f"field {k} in every response")
h1, h2 = resp[1]["result"], resp[2]["result"]
check(h1["clientId"] == cid and h1["field"] == f"{cid}:{h1['threadId']}", "hello w1")
check(h1["threadId"] == resp[1]["threadId"] and h1["threadId"] != h2["threadId"], "distinct worker threads")
check(resp[3]["ok"] and resp[3]["result"] is None, "w1 lock")
check(resp[4]["ok"] and resp[4]["result"] is False, "w2 tryLock -> false")
check(resp[5]["result"] == 1, "holdCount 1")
check(resp[6]["ok"], "w1 re-lock")
hg = open(work + "/hgetall").read().split()
check(hg == [h1["field"], "2"], f"HGETALL L == [field, 2]: {hg}")
pttl = int(open(work + "/pttl").read())
check(25000 < pttl <= 30000, f"PTTL ~ watchdog: {pttl}")
check(resp[7]["result"] is True and resp[8]["result"] is False, "isHeldByThread")
check(25000 < resp[9]["result"] <= 30000, f"remainTTL {resp[9]['result']}")
check(resp[10]["ok"] and resp[11]["ok"], "unlock x2")
check(not resp[12]["ok"] and resp[12]["errorClass"] == "java.lang.IllegalMonitorStateException",
      f"third unlock -> IMSE: {resp[12]}")
check(resp[13]["result"] is True and resp[14]["ok"], "w2 tryLock -> true, unlock")
check(resp[15]["result"] is False, "isLocked false at end")
check(resp[16]["result"] == 20 and resp[17]["result"] == 20, "counter rounds")
ctr = int(open(work + "/ctr").read())
check(ctr == 40, f"ctr == 40: {ctr}")
check(int(open(work + "/ctr_llen").read()) == 40, "40 intervals")
iv = []
for s in open(work + "/ctr_intervals").read().split():
    tag, w, a, b = s.split(":")
    check(tag == "java" and w in ("w1", "w2") and int(a) <= int(b), f"interval format {s}")
    iv.append((int(a), int(b)))
iv.sort()
check(all(iv[i][1] <= iv[i + 1][0] for i in range(len(iv) - 1)), "counter intervals do not overlap")
check(resp[18]["ok"] and resp[19]["result"] is False and resp[20]["ok"], "write lock excludes reader")
writes = resp[21]["result"] + resp[22]["result"]
rwc = open(work + "/rwc").read().strip()
check(int(rwc or 0) == writes, f"rwc {rwc} == writes {writes}")
rw = [s.split(":") for s in open(work + "/rwc_intervals").read().split()]
check(len(rw) == 40 and all(p[0] == "java" and p[2] in ("r", "w") for p in rw), "rw intervals")
ws = sorted((int(p[3]), int(p[4])) for p in rw if p[2] == "w")
alls = [(int(p[3]), int(p[4]), p[2]) for p in rw]
for (a, b) in ws:
    for (c, d, k) in alls:
        if (c, d) != (a, b):
            check(d <= a or c >= b, f"write interval {a}-{b} overlaps {k} {c}-{d}")
check(not resp[23]["ok"] and resp[23]["errorClass"] == "java.lang.IllegalArgumentException", "unknown command")
check(resp[24]["ok"] and resp[24]["cmd"] == "exit", "exit")
if fails:
    print("SMOKE FAIL (" + version + "):\n  " + "\n  ".join(fails))
    sys.exit(1)
print(f"SMOKE OK ({version}): clientId={cid} field={h1['field']} HGETALL={hg} PTTL={pttl} ctr={ctr} rw_writes={writes}")
PY
