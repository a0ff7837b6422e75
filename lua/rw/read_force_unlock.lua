-- Read lock: delete the lock if it is in read mode, and wake one waiter per client.
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] message ("0"), ARGV[2] publish mode ("PUBLISH", "SPUBLISH" or "BOTH", lua/common/notify.lua)
-- Reply: 1 = deleted, 0 = not in read mode (nothing changed). Timeout keys are left to expire.
-- Error: WRONGTYPE when KEYS[1] is not a lock (another type, or a hash of another shape, see
-- lua/common/lock_shape.lua): nothing is deleted or published.

-- (lua/common/lock_shape.lua is prepended: `not_a_lock`, `refuse`)
local why = not_a_lock(KEYS[1])
if why then
  return refuse(KEYS[1], why)
end
if redis.call('hget', KEYS[1], 'mode') == 'read' then
  redis.call('del', KEYS[1])
  notify(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
