-- RSemaphore.addPermits: change the number of permits by ARGV[1] (negative: fewer; the count
-- may go below zero) and tell waiters the new total, as Redisson does. Like Redisson's (which
-- writes the count with SET), it leaves the semaphore without a TTL.
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] this request's latch
-- ARGV[1] change, ARGV[2] publish mode (common/notify.lua), ARGV[3] latch TTL in ms
-- A count that would leave ±2^53 - 1 is refused (common/counter.lua), nothing written.
-- Reply: the new total. A repeat replays the first reply (common/once.lua).
local sem, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local delta, mode, latch_ms = ARGV[1], ARGV[2], ARGV[3]

local first = replayed(latch)
if first ~= nil then
  return first
end
local have = counter(sem) -- refuses a value that is not a count before changing anything
within(sem, have or 0, tonumber(delta))
local total = redis.call('incrby', sem, delta)
remember(latch, latch_ms, total)
-- (PERSIST after the writes Redis may refuse for lack of memory: it never refuses PERSIST)
redis.call('persist', sem)
notify(mode, channel, total)
return total
