-- Any lock kind whose attempt had an owner new to it (its "latch TTL" argument was '0', see
-- lua/common/attempt.lua): settle that attempt, whose reply was lost, instead of sending it
-- again. The owner's field in the lock exists only if this attempt was granted.
-- KEYS[1] the attempt's latch "redisson_unlock_latch:{N}:<attempt id>", KEYS[2] the lock hash N
-- ARGV[1] how long to keep the cancellation marker, in ms, ARGV[2] the attempt's owner field
-- Reply: {1, count} the attempt was granted (the field's count now); {0, 0} it was not, and now
--        never will be. Either way the latch is marked `cancelled`, so a copy of the attempt
--        still on its way changes nothing: not now, and not after the granted hold is released
--        (the field, its record, is gone then). Asking again while the hold lasts gives the
--        same answer (the field decides).
local latch, lock_key = KEYS[1], KEYS[2]
local keep_ms, owner = ARGV[1], ARGV[2]

if redis.call('get', latch) == false then
  redis.call('set', latch, 'cancelled', 'px', keep_ms)
end
if redis.call('type', lock_key).ok == 'hash' then
  local holds = redis.call('hget', lock_key, owner)
  if holds then
    return {1, tonumber(holds)}
  end
end
return {0, 0}
