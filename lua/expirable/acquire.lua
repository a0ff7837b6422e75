-- RPermitExpirableSemaphore: one attempt to take ARGV[1] permits under the given ids. Its effect
-- is Redisson's acquire (3.23.4+ layout of the lease zset); the reply and the latch are ours.
-- KEYS[1] semaphore counter, KEYS[2] leases "{N}:timeout", KEYS[3] channel "redisson_sc:{N}",
-- KEYS[4] this attempt's latch "redisson_unlock_latch:{N}:<first permit id in hex>"
-- ARGV[1] permits n (> 0), ARGV[2] the leases' end (epoch ms, or the no-lease score),
-- ARGV[3] now (epoch ms), ARGV[4] the no-lease score 922337203685477, ARGV[5] publish mode
-- (common/notify.lua), ARGV[6] latch TTL in ms, ARGV[7 .. 6+n] the permit ids (16 raw bytes)
-- Reply: {1, n} taken: each id is in the zset with the lease's end as score (the latch records
--        it, see common/resolve_acquire.lua);
--        {0, end} not enough permits; `end` = the earliest lease end (epoch ms), when a permit
--        will come back, or -1 when no lease will end; nothing changed but the reclaim;
--        {2, 0} this attempt was cancelled before it arrived: nothing changed.
-- A copy of the same attempt replays the first grant instead of taking permits twice.
local sem, leases, channel, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local want, lease_end, now, no_lease = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
local mode, latch_ms = ARGV[5], ARGV[6]

local seen = redis.call('get', latch)
if seen == 'cancelled' then
  return {2, 0}
elseif seen then
  return {1, tonumber(seen)}
end
local _, have = reclaim(sem, leases, channel, now, want, mode)
if have ~= nil and have >= want then
  redis.call('decrby', sem, want)
  for i = 7, 6 + want do
    redis.call('zadd', leases, lease_end, ARGV[i])
  end
  redis.call('set', latch, want, 'px', latch_ms)
  -- (PEXPIRE last: Redis never refuses it for lack of memory, the writes above it may)
  local ttl = redis.call('pttl', sem)
  if ttl > 0 then
    redis.call('pexpire', leases, ttl)
  end
  return {1, want}
end
local first = redis.call('zrange', leases, 0, 0, 'withscores')
if #first > 0 and first[2] ~= no_lease then
  return {0, first[2]}
end
return {0, -1}
