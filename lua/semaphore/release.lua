-- RSemaphore.release / releaseIfExists: give ARGV[1] permits back and tell waiters the new total
-- (Redisson's message: the number of permits now available).
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] this request's latch
-- ARGV[1] permits (> 0), ARGV[2] publish mode (common/notify.lua), ARGV[3] latch TTL in ms,
-- ARGV[4] '1': only when the semaphore exists (releaseIfExists), '0': always (creates it)
-- A count that would leave ±2^53 - 1 is refused (common/counter.lua), nothing written.
-- Reply: 1 released, 0 no semaphore (only with ARGV[4] = '1'; nothing changed). A repeat of
-- the same request replays the first reply (common/once.lua).
local sem, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local permits, mode, latch_ms, if_exists = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local first = replayed(latch)
if first ~= nil then
  return first
end
local have = counter(sem) -- refuses a value that is not a count before changing anything
if if_exists == '1' and have == nil then
  return remember(latch, latch_ms, 0)
end
within(sem, have or 0, tonumber(permits))
local total = redis.call('incrby', sem, permits)
notify(mode, channel, total)
return remember(latch, latch_ms, 1)
