-- The loss watch's probe of tracking without echo, run once on a connection whose tracking is
-- `NOLOOP` (the pub/sub connection, before it tracks anything else): it writes its first key, as
-- a renewal writes a lock, then reads it, as a renewal ends; the second key it declares and never
-- touches. Writes from another connection must then push the first key (it stayed tracked through
-- the script's own write) and not the second (the server tracks the keys a script reads, not
-- every key it declares, as servers before Redis 7.2 do).
-- KEYS[1], KEYS[2] the probe keys `redisson_lock_probe:{<client id>}:1` and `:2`
-- ARGV[1] the first key's TTL in ms
-- Reply: 1 (the first key exists).
redis.call('set', KEYS[1], '1', 'px', ARGV[1])
return redis.call('exists', KEYS[1])
