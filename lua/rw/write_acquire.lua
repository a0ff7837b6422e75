-- Write lock: one acquisition attempt. Its effect on the lock is Redisson's RReadWriteLock write
-- acquire; the reply and the latch are ours.
-- KEYS[1] lock hash N, KEYS[2] this attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] TTL ms, ARGV[2] write field "<client id>:<owner>:write", ARGV[3] latch TTL ms ('0': the
-- owner is new to this attempt and its write field records the grant, lua/common/attempt.lua)
-- Reply: {1, count} granted (the writer's holds now); {0, pttl} refused; {2, 0} cancelled attempt.
-- A copy of the same attempt replays the first grant instead of counting it twice.
-- Re-entry adds the TTL to the remaining one, as Redisson does (capped at 10^13 ms so that Lua
-- never prints the sum in exponent form, which Redis would reject).
-- One difference from Redisson: when the same owner holds a read lock, waiting could never end
-- (read -> write upgrade); we answer an error instead of letting the caller wait forever.
local lock_key, latch = KEYS[1], KEYS[2]
local ttl_ms, writer, latch_ms = ARGV[1], ARGV[2], ARGV[3]

-- this attempt ran before (a connection layer re-sent it) or was cancelled
local earlier = recorded(latch)
if earlier then
  return earlier
end

local mode = redis.call('hget', lock_key, 'mode')
if mode == false then
  redis.call('hset', lock_key, 'mode', 'write', writer, 1)
  redis.call('pexpire', lock_key, ttl_ms)
  record(latch, 1, latch_ms)
  return {1, 1}
end

local held = mode == 'write' and redis.call('hget', lock_key, writer)
if held and latch_ms == '0' then
  return {1, tonumber(held)} -- the field of an owner new to this attempt: a copy of it ran
end
if held then
  local holds = redis.call('hincrby', lock_key, writer, 1)
  local ttl = redis.call('pttl', lock_key)
  redis.call('pexpire', lock_key, math.min(math.max(ttl, 0) + tonumber(ttl_ms), 10000000000000))
  record(latch, holds, latch_ms)
  return {1, holds}
end

local reader = string.sub(writer, 1, #writer - #':write')
if mode == 'read' and redis.call('hexists', lock_key, reader) == 1 then
  return redis.error_reply('REDISSON_LOCK_WOULD_DEADLOCK the owner holds a read lock and asks for the write lock (upgrade)')
end
return {0, redis.call('pttl', lock_key)}
