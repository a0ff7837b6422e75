-- Non-reentrant lock: one acquisition attempt. Its effect is Redisson's non-reentrant RLock
-- acquire (4.4+): a free lock is taken with count 1; the owner's own field already there is an
-- error (never a count of 2, never a wait). The reply and the latch are ours.
-- KEYS[1] lock hash, KEYS[2] this attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] TTL in ms, ARGV[2] owner field, ARGV[3] latch TTL in ms ('0': the owner is new to this
--         attempt and its field records the grant, lua/common/attempt.lua, prepended)
-- Reply: {1, 1} granted; {0, pttl} held by someone else; {2, 0} cancelled attempt.
-- Error: NON_REENTRANT_REACQUIRE (Redisson's code) when the owner already holds the lock.
local lock_key, latch = KEYS[1], KEYS[2]
local ttl_ms, owner, latch_ms = ARGV[1], ARGV[2], ARGV[3]

local earlier = recorded(latch)
if earlier then
  return earlier
end
if redis.call('hexists', lock_key, owner) == 1 then
  if latch_ms == '0' then
    return {1, 1} -- the field of an owner new to this attempt: a copy of it ran
  end
  return redis.error_reply('NON_REENTRANT_REACQUIRE the owner already holds this non-reentrant lock')
end
if redis.call('exists', lock_key) == 0 then
  redis.call('hset', lock_key, owner, 1)
  redis.call('pexpire', lock_key, ttl_ms)
  record(latch, 1, latch_ms)
  return {1, 1}
end
return {0, redis.call('pttl', lock_key)}
