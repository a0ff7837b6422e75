-- Read lock: release one read hold (Redisson 3.44+ form, with the idempotency latch), or all of an
-- owner's read holds.
-- KEYS[1] lock hash N, KEYS[2] channel "redisson_rwlock:{N}",
-- KEYS[3] this reader's timeout-key prefix, KEYS[4] the key prefix KP ("{N}", or N when N has "{"),
-- KEYS[5] latch "redisson_unlock_latch:{N}:<request id>"
-- ARGV[1] message ("0"), ARGV[2] read field, ARGV[3] publish mode ("PUBLISH", "SPUBLISH" or "BOTH", lua/common/notify.lua), ARGV[4] latch TTL ms,
-- ARGV[5] "1" = release every read hold of the owner (its client's last known one), "0" = one
-- Reply: nil = not held (nothing changed, except the Redisson-compatible publish when the lock is
-- gone altogether); 0 = the hash still lives (others or our other holds); 1 = the hash was deleted.
local lock_key, channel, timeout_prefix, key_prefix, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local message, reader, publish_cmd, latch_ms, all = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

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
if redis.call('hexists', lock_key, reader) == 0 then
  return nil
end

if all == '1' then
  local count = tonumber(redis.call('hget', lock_key, reader)) or 0
  redis.call('hdel', lock_key, reader)
  for k = 1, count do
    redis.call('del', timeout_prefix .. ':' .. k)
  end
else
  local holds = redis.call('hincrby', lock_key, reader, -1)
  if holds == 0 then
    redis.call('hdel', lock_key, reader)
  end
  -- the released hold is the newest one
  redis.call('del', timeout_prefix .. ':' .. (holds + 1))
end

if redis.call('hlen', lock_key) > 1 then
  -- the hash must live as long as the longest hold still running, of any reader (Java's too)
  local longest = -3
  local entries = redis.call('hgetall', lock_key)
  for i = 1, #entries, 2 do
    local field, count = entries[i], tonumber(entries[i + 1])
    if count ~= nil then
      for k = count, 1, -1 do
        local ttl = redis.call('pttl', key_prefix .. ':' .. field .. ':rwlock_timeout:' .. k)
        if ttl > longest then
          longest = ttl
        end
      end
    end
  end
  if longest > 0 then
    redis.call('pexpire', lock_key, longest)
    redis.call('set', latch, '0', 'px', latch_ms)
    return 0
  end
  if mode == 'write' then
    redis.call('set', latch, '0', 'px', latch_ms)
    return 0
  end
  -- only stale readers are left: fall through and clean up
end

redis.call('del', lock_key)
notify(publish_cmd, channel, message)
redis.call('set', latch, '1', 'px', latch_ms)
return 1
