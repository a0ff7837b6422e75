-- Fenced lock: raises the token counter to at least a floor and never lowers it. The recovery
-- after the counter went back (a restart without persistence, a failover to a replica that had
-- not seen the last INCRs): with the floor at the highest token the protected resource has
-- stored, the next acquisition takes a token above it, so the resource accepts writers again.
-- KEYS[1] token counter "redisson_lock_token:{N}"
-- ARGV[1] the floor: a decimal integer, 0 <= floor <= 2^53 - 1 (the client checks it, so Lua's
--         numbers compare it exactly; a counter above 2^53 compares as at least 2^53)
-- Reply: the counter after the call as a string ("0" when there is none and the floor is 0: no
--        key is created for a floor of 0).
local token_key, floor = KEYS[1], ARGV[1]

local current = redis.call('get', token_key)
local value = tonumber(current or '0')
if value == nil or value ~= math.floor(value) then
  return redis.error_reply('ERR the fencing token counter ' .. token_key .. ' is not an integer')
end
if value < tonumber(floor) then
  redis.call('set', token_key, floor)
  return floor
end
return current or '0'
