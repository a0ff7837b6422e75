-- Fenced lock: raises the token counter to at least a floor and never lowers it. The recovery
-- after the counter went back (a restart without persistence, a failover to a replica that had
-- not seen the last INCRs): with the floor at the highest token the protected resource has
-- stored, the next acquisition takes a token above it, so the resource accepts writers again.
-- A negative counter (set by hand) is below every floor.
-- KEYS[1] token counter "redisson_lock_token:{N}"
-- ARGV[1] the floor: a decimal integer, 0 <= floor < i64::MAX, without leading zeros (the
--         client checks it), compared as a string (fenced/token.lua), so exactly
-- Reply: the counter after the call as a string ("0" when there is none and the floor is 0: no
--        key is created for a floor of 0).
local token_key, floor = KEYS[1], ARGV[1]

local current = redis.call('get', token_key)
if current == false then
  if floor ~= '0' then
    redis.call('set', token_key, floor)
  end
  return floor
end
local state = counter_state(current)
if state == nil then
  return redis.error_reply('ERR the fencing token counter ' .. token_key .. ' is not an integer')
end
if state == 'negative' or compare_tokens(current, floor) < 0 then
  redis.call('set', token_key, floor)
  return floor
end
return current
