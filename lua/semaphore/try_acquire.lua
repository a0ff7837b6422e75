-- RSemaphore: one attempt to take ARGV[1] permits. Its effect on the semaphore is Redisson's
-- tryAcquire (all versions); the reply and the attempt's latch are ours.
-- KEYS[1] semaphore counter, KEYS[2] this attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] permits (> 0), ARGV[2] latch TTL in ms
-- Reply: {1, permits} taken (the latch records it, see common/resolve_acquire.lua);
--        {0, 0} not enough permits (or no semaphore): nothing changed;
--        {2, 0} this attempt was cancelled before it arrived: nothing changed.
-- A copy of the same attempt replays the first grant instead of taking the permits twice.
local sem, latch = KEYS[1], KEYS[2]
local want, latch_ms = tonumber(ARGV[1]), ARGV[2]

local seen = redis.call('get', latch)
if seen == 'cancelled' then
  return {2, 0}
elseif seen then
  return {1, tonumber(seen)}
end
local have = counter(sem)
if have ~= nil and have >= want then
  redis.call('decrby', sem, want)
  redis.call('set', latch, want, 'px', latch_ms)
  return {1, want}
end
return {0, 0}
