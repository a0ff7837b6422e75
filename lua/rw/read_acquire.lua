-- Read lock: one acquisition attempt (Redisson RReadWriteLock, read side).
-- KEYS[1] lock hash N
-- KEYS[2] this reader's timeout-key prefix "{N}:<read field>:rwlock_timeout" (suffix rule)
-- ARGV[1] lease ms, ARGV[2] read field "<client id>:<owner>", ARGV[3] the same owner's write field
-- Every read hold k of a reader has its own key KEYS[2]..":"..k (value 1, PX = that hold's lease):
-- Java read-unlocks read these keys to decide how long the hash may still live.
-- Reply: nil = granted; otherwise the hash's PTTL.
local lock_key, timeout_prefix = KEYS[1], KEYS[2]
local lease_ms, reader, writer = tonumber(ARGV[1]), ARGV[2], ARGV[3]

local mode = redis.call('hget', lock_key, 'mode')
if mode == false then
  redis.call('hset', lock_key, 'mode', 'read', reader, 1)
  redis.call('set', timeout_prefix .. ':1', 1, 'px', lease_ms)
  redis.call('pexpire', lock_key, lease_ms)
  return nil
end

-- readers share; the write holder itself may also read (a downgrade)
if mode == 'read' or (mode == 'write' and redis.call('hexists', lock_key, writer) == 1) then
  local holds = redis.call('hincrby', lock_key, reader, 1)
  redis.call('set', timeout_prefix .. ':' .. holds, 1, 'px', lease_ms)
  -- the hash lives as long as its longest hold
  local ttl = redis.call('pttl', lock_key)
  if ttl < lease_ms then
    redis.call('pexpire', lock_key, lease_ms)
  end
  return nil
end
return redis.call('pttl', lock_key)
