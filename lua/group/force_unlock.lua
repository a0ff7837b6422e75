-- Grouped lock: free every value of a set whoever holds it, and wake the group's waiters.
-- KEYS[1] the group's hash, KEYS[2] unlock channel
-- ARGV[1] message ("0"), ARGV[2] publish mode (lua/common/notify.lua, prepended), ARGV[3..] value ids
-- Reply: how many of the values had a holder (their fields are gone). A key of another type
-- fails with WRONGTYPE and nothing changes.
local group, channel = KEYS[1], KEYS[2]
local freed = 0
for i = 3, #ARGV do
  local v = ARGV[i]
  local holder = redis.call('hget', group, v)
  if holder then
    redis.call('hdel', group, v, v .. ':' .. holder .. ':expire_time', v .. ':' .. holder .. ':lock_count')
    freed = freed + 1
  end
end
if freed > 0 then
  notify(ARGV[2], channel, ARGV[1])
end
return freed
