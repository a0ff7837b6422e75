-- RPermitExpirableSemaphore.setPermits: make the total (available + held) ARGV[1], keeping the
-- held permits; waiters are told the new total capacity (Redisson's message for this call).
-- Leases that have ended still count as held until reclaimed, as in Redisson.
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] leases "{N}:timeout",
-- KEYS[4] this request's latch
-- ARGV[1] total permits, ARGV[2] publish mode (common/notify.lua), ARGV[3] latch TTL in ms
-- A count of available permits that would leave ±2^53 - 1 is refused (common/counter.lua),
-- nothing written.
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
local held = redis.call('zcount', leases, '-inf', '+inf')
-- the available permits after the call: the new total less the permits held (both within the
-- range, so exact; the total capacity itself may not be)
local after = tonumber(total) - held
if after ~= available then
  in_range(sem, after, 'the new total ' .. total .. ' less ' .. held .. ' held permits')
  -- SET of the exact count (KEEPTTL: a TTL set with the semaphore stays, as INCRBY keeps it)
  redis.call('set', sem, string.format('%d', after), 'keepttl')
  notify(mode, channel, total)
end
return remember(latch, latch_ms, 1)
