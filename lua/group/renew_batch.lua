-- Grouped lock: the watchdog's renewal of many holds in one call (and a guard's lease extension).
-- KEYS[i] the group's hash of hold i (all in one cluster slot)
-- ARGV[1] lease in ms, ARGV[2] now (epoch ms), then per hold: owner, the number n of its values,
-- the n value ids; last, `1` to end with one EXISTS of every group renewed (a write untracks a
-- key for a connection whose tracking is NOLOOP; that read makes the server track it again), `0`
-- not
-- A hold is renewed only when the owner still holds every one of its values (its deadline not
-- passed): each deadline goes to now + lease unless it is later, and the key's TTL to the lease
-- unless it is longer. Nothing is re-created.
-- Reply: per hold in order, 1 = renewed, 0 = a value is no longer the owner's, 2 = the key holds
--        another type.
local lease, now = tonumber(ARGV[1]), tonumber(ARGV[2])
local until_ms = now + lease
local renewed, extended = {}, {}
local at = 3
for i, group in ipairs(KEYS) do
  local owner, n = ARGV[at], tonumber(ARGV[at + 1])
  local first = at + 2
  at = first + n
  local t = redis.pcall('type', group)
  if type(t) == 'table' and t['ok'] ~= 'hash' and t['ok'] ~= 'none' then
    renewed[i] = 2
  else
    local held = true
    for j = first, first + n - 1 do
      local v = ARGV[j]
      if redis.call('hget', group, v) ~= owner then
        held = false
        break
      end
      local deadline = tonumber(redis.call('hget', group, v .. ':' .. owner .. ':expire_time'))
      if deadline == nil or deadline < now then
        held = false
        break
      end
    end
    if held then
      for j = first, first + n - 1 do
        local expire_field = ARGV[j] .. ':' .. owner .. ':expire_time'
        if tonumber(redis.call('hget', group, expire_field)) < until_ms then
          redis.call('hset', group, expire_field, until_ms)
        end
      end
      extend_ttl(group, ARGV[1])
      renewed[i] = 1
      extended[#extended + 1] = group
    else
      renewed[i] = 0
    end
  end
end
if ARGV[at] == '1' then
  for i = 1, #extended, 1000 do
    redis.call('exists', unpack(extended, i, math.min(i + 999, #extended)))
  end
end
return renewed
