-- RPermitExpirableSemaphore: give the permits whose lease has ended back to the pool. Ended
-- leases come back only this way (Redis has no timer for them): every script that acquires or
-- counts runs it first, as Redisson's do. Waiters are told the new total when it is positive.
-- reclaim(sem, leases, channel, now, limit, mode): `leases` is the zset "{N}:timeout" (member: a
-- permit id, score: the lease's end in epoch ms), `now` the caller's clock in epoch ms, `limit`
-- the most permits to take back (nil: all), `extra` the permits the caller adds after it (nil:
-- none). Before it writes, the count is read with common/counter.lua, which refuses one that is
-- not a count, or that would leave its range with what comes back and `extra`. Returns how many
-- came back, and the count after (nil when there is no semaphore and none came back).
local function reclaim(sem, leases, channel, now, limit, mode, extra)
  local ended
  if limit then
    ended = redis.call('zrangebyscore', leases, 0, now, 'limit', 0, limit)
  else
    ended = redis.call('zrangebyscore', leases, 0, now)
  end
  local have = counter(sem)
  within(sem, have or 0, #ended + (extra or 0))
  if #ended == 0 then
    return 0, have
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
