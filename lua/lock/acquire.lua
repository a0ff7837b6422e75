-- RLock: one acquisition attempt. Its effect on the lock is Redisson's RLock acquire (all
-- versions); the reply and the latch are ours.
-- KEYS[1] lock hash, KEYS[2] this attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] TTL in ms, ARGV[2] owner field "<client id>:<owner id>", ARGV[3] latch TTL in ms, '0'
--         when the owner is new to this attempt (lua/common/attempt.lua, prepended)
-- Reply: {1, count} granted (a first hold or a re-entry; count = the owner's holds now; the
--        latch, or the field of an owner new to the attempt, records it);
--        {0, pttl} held by someone else (the lock's PTTL in ms, -1 when it has no TTL);
--        {2, 0}    this attempt was cancelled before it arrived: nothing changed.
-- A copy of the same attempt (a connection layer that re-sends after a dropped connection)
-- replays the first grant instead of counting it twice.
local lock_key, latch = KEYS[1], KEYS[2]
local ttl_ms, owner, latch_ms = ARGV[1], ARGV[2], ARGV[3]

-- this attempt ran before (a connection layer re-sent it) or was cancelled
local earlier = recorded(latch)
if earlier then
  return earlier
end
local free = redis.call('exists', lock_key) == 0
if not free then
  local held = redis.call('hget', lock_key, owner)
  if held and latch_ms == '0' then
    return {1, tonumber(held)} -- the field of an owner new to this attempt: a copy of it ran
  elseif not held then
    return {0, redis.call('pttl', lock_key)}
  end
end
local holds = redis.call('hincrby', lock_key, owner, 1)
redis.call('pexpire', lock_key, ttl_ms)
record(latch, holds, latch_ms)
return {1, holds}
