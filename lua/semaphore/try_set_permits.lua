-- RSemaphore / RPermitExpirableSemaphore.trySetPermits: create the semaphore with ARGV[1]
-- permits unless it exists; waiters are told the new count.
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] this request's latch
-- ARGV[1] permits, ARGV[2] publish mode (common/notify.lua), ARGV[3] latch TTL in ms,
-- ARGV[4] the semaphore's TTL in ms ('0': none)
-- Reply: 1 set, 0 a semaphore exists (nothing changed). A repeat replays the first reply.
local sem, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local permits, mode, latch_ms, ttl_ms = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local first = replayed(latch)
if first ~= nil then
  return first
end
if redis.call('get', sem) ~= false then
  return remember(latch, latch_ms, 0)
end
if ttl_ms ~= '0' then
  redis.call('set', sem, permits, 'px', ttl_ms)
else
  redis.call('set', sem, permits)
end
notify(mode, channel, permits)
return remember(latch, latch_ms, 1)
