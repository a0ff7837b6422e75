-- RLock: delete the lock whoever holds it, and wake one waiter per subscribed client.
-- KEYS[1] lock hash, KEYS[2] unlock channel
-- ARGV[1] message ("0"), ARGV[2] publish mode ("PUBLISH", "SPUBLISH" or "BOTH", lua/common/notify.lua)
-- Reply: 1 when a lock was deleted (and the message published), 0 when there was none.
-- Error: WRONGTYPE when KEYS[1] is not a lock (another type, or a hash of another shape, see
-- lua/common/lock_shape.lua): nothing is deleted or published. A read-write lock is a lock too (deleted, as Redisson).

-- (lua/common/lock_shape.lua is prepended: `not_a_lock`, `refuse`)
local why = not_a_lock(KEYS[1])
if why then
  return refuse(KEYS[1], why)
end
if redis.call('del', KEYS[1]) == 1 then
  notify(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
