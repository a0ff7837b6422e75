-- A write that must apply at most once although its sender may repeat it (its reply was lost):
-- the request's latch "redisson_unlock_latch:{N}:<request id>" keeps the first reply for a
-- while, and a repeat gets that reply back without changing anything.
-- replayed(latch): the first reply (a number), or nil when this request has not run yet.
-- remember(latch, ms, reply): keeps `reply` for `ms` milliseconds and returns it.
local function replayed(latch)
  local seen = redis.call('get', latch)
  if seen == false then
    return nil
  end
  return tonumber(seen)
end

local function remember(latch, ms, reply)
  redis.call('set', latch, reply, 'px', ms)
  return reply
end
