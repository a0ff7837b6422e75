-- Grouped lock: release one hold of every value of a set (Redisson 3.24+ unlock form, with the
-- idempotency latch), or all of the owner's holds of them.
-- KEYS[1] the group's hash, KEYS[2] unlock channel, KEYS[3] latch "redisson_unlock_latch:{G}:<request id>"
-- ARGV[1] message ("0"), ARGV[2] lease ms given to values still held afterwards, ARGV[3] owner,
-- ARGV[4] publish mode (lua/common/notify.lua, prepended), ARGV[5] latch TTL ms,
-- ARGV[6] "1" = release every hold of the owner on these values, "0" = one, ARGV[7] now (epoch
-- ms), ARGV[8..] the value ids
-- Reply: nil = the owner does not hold every value (nothing changed); 0 = some values still
--        held (counts decremented); 1 = every value released (message published). A repeated
--        request replays its first reply.
local group, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local message, lease, owner, publish_cmd, latch_ms, all, now =
  ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])

local earlier = redis.call('get', latch)
if earlier then
  return tonumber(earlier)
end

-- all or nothing: every value must still be the owner's
for i = 8, #ARGV do
  local v = ARGV[i]
  if redis.call('hget', group, v) ~= owner then
    return nil
  end
  local deadline = tonumber(redis.call('hget', group, v .. ':' .. owner .. ':expire_time'))
  if deadline == nil or deadline < now then
    return nil
  end
end

local freed, kept = false, false
local until_ms = now + lease
for i = 8, #ARGV do
  local v = ARGV[i]
  local expire_field, count_field = v .. ':' .. owner .. ':expire_time', v .. ':' .. owner .. ':lock_count'
  local left = 0
  if all ~= '1' then
    left = redis.call('hincrby', group, count_field, -1)
  end
  if left <= 0 then
    redis.call('hdel', group, v, expire_field, count_field)
    freed = true
  else
    if tonumber(redis.call('hget', group, expire_field)) < until_ms then
      redis.call('hset', group, expire_field, until_ms)
    end
    kept = true
  end
end

if freed then
  notify(publish_cmd, channel, message)
end
if kept then
  if redis.call('pttl', group) < lease then
    redis.call('pexpire', group, lease)
  end
  redis.call('set', latch, '0', 'px', latch_ms)
  return 0
end
redis.call('set', latch, '1', 'px', latch_ms)
return 1
