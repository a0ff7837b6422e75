-- Grouped lock (Redisson's getMultiLock(group, values), 3.38+): one acquisition attempt of every
-- value of a set, all or none. The hash under the group's key holds, per value id `v` held by
-- owner `o`: `v` = o, `v:o:expire_time` = the hold's deadline (epoch ms, writer's clock),
-- `v:o:lock_count` = o's holds of v. A value is taken while its holder's deadline is ahead of
-- `now`; a holder whose deadline passed holds nothing, whatever its fields say.
-- KEYS[1] the group's hash, KEYS[2] this attempt's latch (lua/common/attempt.lua, prepended)
-- ARGV[1] lease in ms, ARGV[2] now (epoch ms), ARGV[3] owner `<client id>:<owner id>`,
-- ARGV[4] latch TTL in ms (always > 0: the latch records every grant), ARGV[5..] the value ids
-- Reply: {1, count} granted: every value now held by the owner; count = the fewest holds the
--        owner has of one of the values (1 on a first hold);
--        {0, ms}   another owner holds a value: ms until the latest such deadline;
--        {2, 0}    this attempt was cancelled before it arrived: nothing changed.
local group, latch = KEYS[1], KEYS[2]
local lease, now, owner, latch_ms = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]

local earlier = recorded(latch)
if earlier then
  return earlier
end
if #ARGV < 5 then
  return redis.error_reply('ERR a grouped lock needs at least one value')
end

local existed = redis.call('exists', group) == 1
if existed then
  local latest = -1
  for i = 5, #ARGV do
    local holder = redis.call('hget', group, ARGV[i])
    if holder and holder ~= owner then
      local deadline = tonumber(redis.call('hget', group, ARGV[i] .. ':' .. holder .. ':expire_time'))
      if deadline and deadline > now and deadline > latest then
        latest = deadline
      end
    end
  end
  if latest ~= -1 then
    return {0, latest - now}
  end
end

local until_ms = now + lease
local fewest = nil
for i = 5, #ARGV do
  local v = ARGV[i]
  local expire_field, count_field = v .. ':' .. owner .. ':expire_time', v .. ':' .. owner .. ':lock_count'
  local holder = redis.call('hget', group, v)
  if holder and holder ~= owner then
    -- a holder whose deadline passed: its leftovers go (its unlock finds nothing, as it would
    -- find its deadline passed)
    redis.call('hdel', group, v .. ':' .. holder .. ':expire_time', v .. ':' .. holder .. ':lock_count')
  end
  local deadline = tonumber(redis.call('hget', group, expire_field))
  local count
  if holder ~= owner or deadline == nil or deadline < now then
    -- a first hold (the owner's own earlier hold, if any, ran out: its count is void)
    redis.call('hset', group, v, owner, expire_field, until_ms, count_field, 1)
    count = 1
  else
    if deadline < until_ms then
      redis.call('hset', group, expire_field, until_ms)
    end
    count = redis.call('hincrby', group, count_field, 1)
  end
  if fewest == nil or count < fewest then
    fewest = count
  end
end

-- the key lives at least as long as the longest hold in it: its TTL only grows
if not existed or redis.call('pttl', group) < lease then
  redis.call('pexpire', group, lease)
end
record(latch, fewest, latch_ms)
return {1, fewest}
