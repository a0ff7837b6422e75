-- Grouped lock: whether anyone holds any value of a set (Redisson's isLocked of the group lock).
-- Read-only.
-- KEYS[1] the group's hash; ARGV[1] now (epoch ms), ARGV[2..] value ids
-- Reply: 1 when some value has a holder whose deadline is not passed, else 0.
local group, now = KEYS[1], tonumber(ARGV[1])
for i = 2, #ARGV do
  local holder = redis.call('hget', group, ARGV[i])
  if holder then
    local deadline = tonumber(redis.call('hget', group, ARGV[i] .. ':' .. holder .. ':expire_time'))
    if deadline and deadline >= now then
      return 1
    end
  end
end
return 0
