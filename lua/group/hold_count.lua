-- Grouped lock: how many times an owner holds a whole value set. Read-only.
-- KEYS[1] the group's hash; ARGV[1] now (epoch ms), ARGV[2] owner, ARGV[3..] value ids
-- Reply: the fewest holds the owner has of one of the values; 0 when some value is not the
-- owner's (or its deadline passed).
local group, now, owner = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local fewest = nil
for i = 3, #ARGV do
  local v = ARGV[i]
  if redis.call('hget', group, v) ~= owner then
    return 0
  end
  local deadline = tonumber(redis.call('hget', group, v .. ':' .. owner .. ':expire_time'))
  local count = tonumber(redis.call('hget', group, v .. ':' .. owner .. ':lock_count'))
  if deadline == nil or deadline < now or count == nil then
    return 0
  end
  if fewest == nil or count < fewest then
    fewest = count
  end
end
return fewest or 0
