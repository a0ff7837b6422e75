-- RPermitExpirableSemaphore.tryRelease(ids): give several permits back, all or none: when any
-- id is missing or its lease has ended, nothing changes (Redisson 3.41+). Waiters are told how
-- many came back (Redisson's message for this call: the number released, not the total).
-- KEYS[1] semaphore counter, KEYS[2] channel "redisson_sc:{N}", KEYS[3] leases "{N}:timeout",
-- KEYS[4] this request's latch
-- ARGV[1] now (epoch ms), ARGV[2] publish mode (common/notify.lua), ARGV[3] latch TTL in ms,
-- ARGV[4 ..] permit ids (raw bytes)
-- Reply: the number released (0: none, nothing changed). A repeat replays the first reply.
local sem, channel, leases, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, mode, latch_ms = tonumber(ARGV[1]), ARGV[2], ARGV[3]

local first = replayed(latch)
if first ~= nil then
  return first
end
for i = 4, #ARGV do
  local score = redis.call('zscore', leases, ARGV[i])
  if score == false or tonumber(score) <= now then
    return remember(latch, latch_ms, 0)
  end
end
-- every id is held (checked above, and its lease had not ended, so the reclaim keeps it):
-- the distinct ids are what comes back
local distinct, released = {}, 0
for i = 4, #ARGV do
  if not distinct[ARGV[i]] then
    distinct[ARGV[i]] = true
    released = released + 1
  end
end
-- refuses a count that is not one, or that the reclaim and this release would overflow,
-- before either writes
reclaim(sem, leases, channel, now, nil, mode, released)
-- the writes Redis may refuse for lack of memory (INCRBY, SET) before the one it never refuses
-- (ZREM): a refusal leaves nothing half done
redis.call('incrby', sem, released)
remember(latch, latch_ms, released)
for id in pairs(distinct) do
  redis.call('zrem', leases, id)
end
notify(mode, channel, released)
return released
