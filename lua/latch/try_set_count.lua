-- RCountDownLatch.trySetCount: start the count only on a latch that does not exist.
-- KEYS[1] latch counter, KEYS[2] latch channel
-- ARGV[1] message ("1": a new count), ARGV[2] the count, ARGV[3] publish mode (lua/common/notify.lua)
-- Reply: 1 when the count was set (and the message published), 0 when a latch exists already
-- (whatever its type: nothing is written then).
if redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[1], ARGV[2])
  notify(ARGV[3], KEYS[2], ARGV[1])
  return 1
end
return 0
