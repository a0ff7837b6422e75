-- RSemaphore.drainPermits: take every available permit (the count becomes 0, like Redisson's SET,
-- which drops a TTL). Nothing is published: no waiter can get in.
-- KEYS[1] semaphore counter, KEYS[2] this request's latch
-- ARGV[1] latch TTL in ms
-- Reply: the count before (0 when there was no semaphore; it may be negative). A repeat
-- replays the first reply (common/once.lua).
local sem, latch, latch_ms = KEYS[1], KEYS[2], ARGV[1]

local first = replayed(latch)
if first ~= nil then
  return first
end
local before = counter(sem)
if before == nil then
  return remember(latch, latch_ms, 0)
end
redis.call('set', sem, 0)
return remember(latch, latch_ms, before)
