-- Spin lock: delete the lock whoever holds it; nothing is published (spin waiters only poll).
-- KEYS[1] lock hash
-- Reply: 1 when a lock was deleted, 0 when there was none.
-- Error: WRONGTYPE when KEYS[1] is not a lock (lua/common/lock_shape.lua): nothing is deleted.

-- (lua/common/lock_shape.lua is prepended: `not_a_lock`, `refuse`)
local why = not_a_lock(KEYS[1])
if why then
  return refuse(KEYS[1], why)
end
return redis.call('del', KEYS[1])
