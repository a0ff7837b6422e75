-- RPermitExpirableSemaphore.setPermits: make the total (available + held) ARGV[1], keeping the
-- held permits; waiters are told the new total capacity (Redisson's message for this call).
-- Leases that have ended still count as held until reclaimed, as in Redisson.
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] leases "{N}:timeout",
-- KEYS[4] this request's latch
-- ARGV[1] total permits, ARGV[2] publish mode (common/notify.lua), ARGV[3] latch TTL in ms
-- Reply: 1. A repeat replays the first reply (common/once.lua).
local sem, channel, leases, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local total, mode, latch_ms = ARGV[1], ARGV[2], ARGV[3]

local first = replayed(latch)
if first ~= nil then
  return first
end
local available = counter(sem)
if available == nil then
  redis.call('set', sem, total)
  notify(mode, channel, total)
  return remember(latch, latch_ms, 1)
end
local capacity = available + redis.call('zcount', leases, '-inf', '+inf')
if capacity ~= tonumber(total) then
  redis.call('incrby', sem, tonumber(total) - capacity)
  notify(mode, channel, total)
end
return remember(latch, latch_ms, 1)
