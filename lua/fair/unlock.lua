-- Fair lock: release one hold (or all of an owner's holds) and wake only the head of the queue
-- on its own channel (Redisson's RFairLock unlock, 3.24+ form with the idempotency latch).
-- KEYS[1] lock hash N, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] unlock channel base
-- "redisson_lock__channel:{N}" (the head waiter's channel is KEYS[4] .. ':' .. its field),
-- KEYS[5] latch "redisson_unlock_latch:{N}:<request id>"
-- ARGV[1] message ("0"), ARGV[2] TTL ms re-applied after a partial release, ARGV[3] owner field,
-- ARGV[4] now (client epoch ms), ARGV[5] publish mode ("PUBLISH", "SPUBLISH" or "BOTH", lua/common/notify.lua), ARGV[6] latch TTL ms,
-- ARGV[7] "1" = release every hold of the owner (its client's last known one), "0" = one
-- Reply: nil = the owner holds nothing (also when the lock is gone altogether: Redisson counts
--        that as a success, we report it; the head waiter is still woken); 0 = still held;
--        1 = released (key deleted, the head waiter woken). A repeated request replays its reply.
local lock_key, queue, deadlines, channel, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local message, ttl_ms, owner, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local publish_cmd, latch_ms, all = ARGV[5], ARGV[6], ARGV[7]

local earlier = redis.call('get', latch)
if earlier then
  return tonumber(earlier)
end

-- (lua/fair/purge.lua is prepended)
purge_stale(queue, deadlines, now)

local function wake_head()
  local head = redis.call('lindex', queue, 0)
  if head ~= false then
    notify(publish_cmd, channel .. ':' .. head, message)
  end
end

if redis.call('exists', lock_key) == 0 then
  wake_head()
  return nil
end
if redis.call('hexists', lock_key, owner) == 0 then
  return nil
end
if all ~= '1' then
  local remaining = redis.call('hincrby', lock_key, owner, -1)
  if remaining > 0 then
    redis.call('pexpire', lock_key, ttl_ms)
    redis.call('set', latch, '0', 'px', latch_ms)
    return 0
  end
end
redis.call('del', lock_key)
redis.call('set', latch, '1', 'px', latch_ms)
wake_head()
return 1
