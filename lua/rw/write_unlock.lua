-- Write lock: release one write hold (Redisson 3.44+ form, with the idempotency latch), or all of
-- an owner's write holds.
-- KEYS[1] lock hash N, KEYS[2] channel "redisson_rwlock:{N}", KEYS[3] latch
-- ARGV[1] message ("1": wake every waiter), ARGV[2] lease ms re-applied after a partial release,
-- ARGV[3] write field, ARGV[4] publish mode ("PUBLISH", "SPUBLISH" or "BOTH", lua/common/notify.lua), ARGV[5] latch TTL ms,
-- ARGV[6] "1" = release every write hold of the owner (its client's last known one), "0" = one
-- Reply: nil = not held; 0 = still held (re-entrant); 1 = write released (the hash is deleted and
-- waiters woken, or, when the owner also holds read locks, the lock stays in read mode: a
-- finished downgrade, with no message).
local lock_key, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local message, lease_ms, writer, publish_cmd, latch_ms, all = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

local earlier = redis.call('get', latch)
if earlier then
  return tonumber(earlier)
end

local mode = redis.call('hget', lock_key, 'mode')
if mode == false then
  notify(publish_cmd, channel, message)
  -- not a number: a retry of this request replays "not held" too
  redis.call('set', latch, 'none', 'px', latch_ms)
  return nil
end
if mode ~= 'write' or redis.call('hexists', lock_key, writer) == 0 then
  return nil
end

local holds = 0
if all ~= '1' then
  holds = redis.call('hincrby', lock_key, writer, -1)
end
if holds > 0 then
  redis.call('pexpire', lock_key, lease_ms)
  redis.call('set', latch, '0', 'px', latch_ms)
  return 0
end

redis.call('hdel', lock_key, writer)
if redis.call('hlen', lock_key) == 1 then
  redis.call('del', lock_key)
  notify(publish_cmd, channel, message)
else
  redis.call('hset', lock_key, 'mode', 'read')
end
redis.call('set', latch, '1', 'px', latch_ms)
return 1
