-- Read lock: one acquisition attempt. Its effect on the lock is Redisson's RReadWriteLock read
-- acquire; the reply and the latch are ours.
-- KEYS[1] lock hash N
-- KEYS[2] this reader's timeout-key prefix "{N}:<read field>:rwlock_timeout" (suffix rule)
-- KEYS[3] this attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] TTL ms, ARGV[2] read field "<client id>:<owner>", ARGV[3] the same owner's write field,
-- ARGV[4] latch TTL ms ('0': the owner is new to this attempt and its read field records the
-- grant, lua/common/attempt.lua, prepended)
-- Every read hold k of a reader has its own key KEYS[2]..":"..k (value 1, PX = that hold's TTL):
-- Java read-unlocks read these keys to decide how long the hash may still live.
-- Reply: {1, count} granted (the reader's holds now); {0, pttl} refused; {2, 0} cancelled attempt.
-- A copy of the same attempt replays the first grant instead of counting it twice.
local lock_key, timeout_prefix, latch = KEYS[1], KEYS[2], KEYS[3]
local ttl_ms, reader, writer, latch_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

-- this attempt ran before (a connection layer re-sent it) or was cancelled
local earlier = recorded(latch)
if earlier then
  return earlier
end

local mode = redis.call('hget', lock_key, 'mode')
if mode == false then
  redis.call('hset', lock_key, 'mode', 'read', reader, 1)
  redis.call('set', timeout_prefix .. ':1', 1, 'px', ttl_ms)
  redis.call('pexpire', lock_key, ttl_ms)
  record(latch, 1, latch_ms)
  return {1, 1}
end

-- readers share; the write holder itself may also read (a downgrade)
if latch_ms == '0' then
  local held = redis.call('hget', lock_key, reader)
  if held then
    return {1, tonumber(held)} -- the field of an owner new to this attempt: a copy of it ran
  end
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', lock_key, writer) == 1) then
  local holds = redis.call('hincrby', lock_key, reader, 1)
  redis.call('set', timeout_prefix .. ':' .. holds, 1, 'px', ttl_ms)
  -- the hash lives as long as its longest hold
  if redis.call('pttl', lock_key) < tonumber(ttl_ms) then
    redis.call('pexpire', lock_key, ttl_ms)
  end
  record(latch, holds, latch_ms)
  return {1, holds}
end
return {0, redis.call('pttl', lock_key)}
