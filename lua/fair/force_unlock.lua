-- Fair lock: delete the lock whoever holds it, and wake the head of the queue on its channel
-- (Redisson's RFairLock forceUnlock). The queue and its deadlines stay.
-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] deadlines, KEYS[4] unlock channel base
-- ARGV[1] message ("0"), ARGV[2] now (client epoch ms), ARGV[3] publish mode ("PUBLISH", "SPUBLISH" or "BOTH", lua/common/notify.lua)
-- Reply: 1 when a lock was deleted, 0 when there was none.
-- Error: WRONGTYPE when KEYS[1] is not a lock (lua/common/lock_shape.lua): nothing is deleted.

-- (lua/common/lock_shape.lua is prepended: `not_a_lock`, `refuse`)
local why = not_a_lock(KEYS[1])
if why then
  return refuse(KEYS[1], why)
end
local lock_key, queue, deadlines, channel = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local message, now, publish_cmd = ARGV[1], tonumber(ARGV[2]), ARGV[3]

-- (lua/fair/purge.lua is prepended)
purge_stale(queue, deadlines, now)
if redis.call('del', lock_key) == 1 then
  local head = redis.call('lindex', queue, 0)
  if head ~= false then
    notify(publish_cmd, channel .. ':' .. head, message)
  end
  return 1
end
return 0
