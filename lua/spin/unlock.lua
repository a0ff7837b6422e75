-- Spin lock: release one hold, or all of an owner's holds. Redisson's RSpinLock unlock (3.24+ form,
-- with the idempotency latch): the RLock release without any publish (spin waiters only poll).
-- KEYS[1] lock hash, KEYS[2] latch "redisson_unlock_latch:{N}:<request id>"
-- ARGV[1] TTL ms re-applied after a partial release, ARGV[2] owner field, ARGV[3] latch TTL ms,
-- ARGV[4] "1" = release every hold of the owner (its client's last known one), "0" = release one
-- Reply: nil = the owner holds nothing (nothing changed); 0 = still held; 1 = released (key deleted).
-- A repeated request replays its first reply.
local lock_key, latch = KEYS[1], KEYS[2]
local ttl_ms, owner, latch_ms, all = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local earlier = redis.call('get', latch)
if earlier then
  return tonumber(earlier)
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
return 1
