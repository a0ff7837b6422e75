-- RPermitExpirableSemaphore.tryRelease(id): give one permit back; waiters are told the new total.
-- A permit whose lease has ended comes back too (it is still in the zset until reclaimed).
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] leases "{N}:timeout",
-- KEYS[4] this request's latch
-- ARGV[1] permit id (raw bytes), ARGV[2] now (epoch ms), ARGV[3] publish mode
-- (common/notify.lua), ARGV[4] latch TTL in ms
-- Reply: 2 released within its lease; 1 released, but its lease had ended; 0 no such permit
-- (released before, reclaimed, or never acquired): nothing changed. A repeat of the same request
-- replays the first reply (common/once.lua).
local sem, channel, leases, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, now, mode, latch_ms = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local first = replayed(latch)
if first ~= nil then
  return first
end
local score = redis.call('zscore', leases, id)
if score == false then
  return remember(latch, latch_ms, 0)
end
within(sem, counter(sem) or 0, 1) -- refuses a value that is not a count, or would overflow
local reply = 2
if tonumber(score) <= now then
  reply = 1
end
-- the writes Redis may refuse for lack of memory (INCRBY, SET) before the one it never refuses
-- (ZREM): a refusal leaves nothing half done
local total = redis.call('incrby', sem, 1)
remember(latch, latch_ms, reply)
redis.call('zrem', leases, id)
notify(mode, channel, total)
return reply
