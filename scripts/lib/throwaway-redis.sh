# A throwaway redis-server on a free loopback port, for scripts/demo and scripts/examples
# (sourced, not run). Never 6379: a port in 20000-59999 that nothing answers on; no persistence.
#
#   start_throwaway_redis DIR    # its log (DIR/redis.log) and working directory in DIR
#
# sets THROWAWAY_REDIS_PORT and THROWAWAY_REDIS_PID (the caller stops that process), or returns 1.
# The binary: $REDIS_SERVER, else redis-server on PATH.

# port -> 0 when a redis answers PONG there
redis_ping() {
    local reply=""
    { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
    printf 'PING\r\n' >&3
    read -r -t 1 reply <&3 || true
    exec 3>&- 3<&-
    [[ "$reply" == "+PONG"* ]]
}

start_throwaway_redis() {
    local dir=$1 port rpid
    THROWAWAY_REDIS_PORT=""
    THROWAWAY_REDIS_PID=""
    for _ in $(seq 1 20); do
        port=$(( 20000 + RANDOM % 40000 ))
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi # taken
        "${REDIS_SERVER:-redis-server}" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
            --daemonize no --protected-mode no --dir "$dir" --logfile "$dir/redis.log" &
        rpid=$!
        for _ in $(seq 1 100); do
            if redis_ping "$port"; then
                THROWAWAY_REDIS_PORT=$port
                THROWAWAY_REDIS_PID=$rpid
                return 0
            fi
            kill -0 "$rpid" 2>/dev/null || break
            sleep 0.05
        done
        # not up in 5 s, or it exited (the port was taken meanwhile): try another port
        kill "$rpid" 2>/dev/null || true
        wait "$rpid" 2>/dev/null || true
    done
    return 1
}
