-- RPermitExpirableSemaphore.addPermits: change the available permits by ARGV[1] (negative:
-- fewer; the count may go below zero). Waiters are told the change when it adds permits
-- (Redisson's message for this call: the delta, not the total). Like Redisson's (SET), it leaves
-- the counter without a TTL.
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] this request's latch
-- ARGV[1] change, ARGV[2] publish mode (common/notify.lua), ARGV[3] latch TTL in ms
-- A count that would leave ±2^53 - 1 is refused (common/counter.lua), nothing written.
-- Reply: the new count of available permits. A repeat replays the first reply.
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
if tonumber(delta) > 0 then
  notify(mode, channel, delta)
end
return total
