-- RLock: release one hold (Redisson 3.24+ form, with the idempotency latch), or all of an
-- owner's holds.
-- KEYS[1] lock hash, KEYS[2] unlock channel, KEYS[3] latch "redisson_unlock_latch:{N}:<request id>"
-- ARGV[1] message to publish ("0"), ARGV[2] TTL ms re-applied after a partial release,
-- ARGV[3] owner field, ARGV[4] publish mode ("PUBLISH", "SPUBLISH" or "BOTH", lua/common/notify.lua), ARGV[5] latch TTL ms,
-- ARGV[6] "1" = release every hold of the owner (the client's last known hold of this field:
--         counts left behind by holds it already knows are lost go too), "0" = release one.
-- Reply: nil = the owner holds nothing (nothing changed); 0 = still held (count decremented);
--        1 = fully released (key deleted, message published). A repeated request replays its first reply.
local lock_key, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local message, ttl_ms, owner, publish_cmd, latch_ms, all = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

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
notify(publish_cmd, channel, message)
redis.call('set', latch, '1', 'px', latch_ms)
return 1
