-- Fair lock: one acquisition attempt. Its effect on the lock, the queue and the deadlines is
-- Redisson's RFairLock acquire (HEAD: 3.32+ replies, nil-safe purge; 4.4+ non-reentrant variant);
-- the reply and the latch are ours.
-- KEYS[1] lock hash N, KEYS[2] queue "redisson_lock_queue:{N}" (list of waiting owner fields),
-- KEYS[3] deadlines "redisson_lock_timeout:{N}" (zset: field -> epoch ms after which that waiter
--         counts as gone), KEYS[4] this attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] TTL ms, ARGV[2] owner field, ARGV[3] wait ms (the waiter's own budget, Redisson's
--         threadWaitTime), ARGV[4] now (client epoch ms: clocks of all clients must agree),
--         ARGV[5] latch TTL ms ('0': the owner is new to this acquisition and its field records
--         the grant, lua/common/attempt.lua), ARGV[6] "1" = queue up when refused (lock(), tryLock(wait)),
--         "0" = one attempt without queueing (tryLock()), ARGV[7] "1" = non-reentrant variant
-- Reply: {1, count} granted (the latch records it); {0, ttl} refused: how long the waiter should
--        expect to wait (its predecessor's deadline, or the lock's PTTL); {2, 0} cancelled attempt.
-- Error: NON_REENTRANT_REACQUIRE when the non-reentrant variant's owner already holds the lock.
local lock_key, queue, deadlines, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ttl_ms, owner, wait_ms, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local latch_ms, queued, non_reentrant = ARGV[5], ARGV[6], ARGV[7]

local earlier = recorded(latch)
if earlier then
  return earlier
end

-- (lua/fair/purge.lua is prepended)
purge_stale(queue, deadlines, now)

-- free, and nobody is ahead of us: take it, and everyone behind gets their wait back
if redis.call('exists', lock_key) == 0
    and (redis.call('exists', queue) == 0 or redis.call('lindex', queue, 0) == owner) then
  redis.call('lpop', queue)
  redis.call('zrem', deadlines, owner)
  local waiting = redis.call('zrange', deadlines, 0, -1)
  for i = 1, #waiting do
    redis.call('zincrby', deadlines, -wait_ms, waiting[i])
  end
  redis.call('hset', lock_key, owner, 1)
  redis.call('pexpire', lock_key, ttl_ms)
  record(latch, 1, latch_ms)
  return {1, 1}
end

local held = redis.call('hget', lock_key, owner)
if held and latch_ms == '0' then
  return {1, tonumber(held)} -- the field of an owner new to this acquisition: a copy of it ran
elseif held then
  if non_reentrant == '1' then
    return redis.error_reply('NON_REENTRANT_REACQUIRE the owner already holds this non-reentrant fair lock')
  end
  local holds = redis.call('hincrby', lock_key, owner, 1)
  redis.call('pexpire', lock_key, ttl_ms)
  record(latch, holds, latch_ms)
  return {1, holds}
end

if queued ~= '1' then
  return {0, redis.call('pttl', lock_key)}
end

-- already queued: expect the lock's remaining time
if redis.call('zscore', deadlines, owner) ~= false then
  return {0, math.max(0, redis.call('pttl', lock_key))}
end

-- queue up behind the last waiter: my deadline = the last waiter's (or the lock's expiry) + my wait
local last = redis.call('lindex', queue, -1)
local expect
if last ~= false and last ~= owner and redis.call('zscore', deadlines, last) ~= false then
  expect = tonumber(redis.call('zscore', deadlines, last)) - now
else
  expect = redis.call('pttl', lock_key)
end
if redis.call('zadd', deadlines, expect + wait_ms + now, owner) == 1 then
  redis.call('rpush', queue, owner)
end
return {0, expect}
