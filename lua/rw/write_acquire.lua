-- Write lock: one acquisition attempt (Redisson RReadWriteLock, write side).
-- KEYS[1] lock hash N
-- ARGV[1] lease ms, ARGV[2] write field "<client id>:<owner>:write"
-- Reply: nil = granted; otherwise the hash's PTTL. Re-entry adds the lease to the remaining TTL.
-- One difference from Redisson: when the same owner holds a read lock, waiting could never end
-- (read -> write upgrade); we answer an error instead of letting the caller wait forever.
local lock_key = KEYS[1]
local lease_ms, writer = tonumber(ARGV[1]), ARGV[2]

local mode = redis.call('hget', lock_key, 'mode')
if mode == false then
  redis.call('hset', lock_key, 'mode', 'write', writer, 1)
  redis.call('pexpire', lock_key, lease_ms)
  return nil
end

if mode == 'write' and redis.call('hexists', lock_key, writer) == 1 then
  redis.call('hincrby', lock_key, writer, 1)
  local ttl = redis.call('pttl', lock_key)
  redis.call('pexpire', lock_key, math.max(ttl, 0) + lease_ms)
  return nil
end

local reader = string.sub(writer, 1, #writer - #':write')
if mode == 'read' and redis.call('hexists', lock_key, reader) == 1 then
  return redis.error_reply('REDISSON_LOCK_WOULD_DEADLOCK the owner holds a read lock and asks for the write lock (upgrade)')
end
return redis.call('pttl', lock_key)
