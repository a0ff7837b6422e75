-- RPermitExpirableSemaphore: give the permits whose lease has ended back to the pool. Ended
-- leases come back only this way (Redis has no timer for them): every script that acquires or
-- counts runs it first, as Redisson's do. Waiters are told the new total when it is positive.
-- reclaim(sem, leases, channel, now, limit, mode): `leases` is the zset "{N}:timeout" (member: a
-- permit id, score: the lease's end in epoch ms), `now` the caller's clock in epoch ms, `limit`
-- the most permits to take back (nil: all). Returns how many came back, and the total after
-- (nil when none came back).
local function reclaim(sem, leases, channel, now, limit, mode)
  local ended
  if limit then
    ended = redis.call('zrangebyscore', leases, 0, now, 'limit', 0, limit)
  else
    ended = redis.call('zrangebyscore', leases, 0, now)
  end
  if #ended == 0 then
    return 0, nil
  end
  -- the count first: a write Redis may refuse for lack of memory comes before any that it
  -- never refuses (ZREM), so a refusal leaves nothing half done
  local total = redis.call('incrby', sem, #ended)
  for i = 1, #ended, 1000 do
    redis.call('zrem', leases, unpack(ended, i, math.min(i + 999, #ended)))
  end
  if total > 0 then
    notify(mode, channel, total)
  end
  return #ended, total
end
