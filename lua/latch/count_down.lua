-- RCountDownLatch.countDown: one less; the counter goes away when it reaches zero, and waiters
-- are told ("0") when this call made it exactly zero.
-- KEYS[1] latch counter, KEYS[2] latch channel
-- ARGV[1] message ("0": the count reached zero), ARGV[2] publish mode (lua/common/notify.lua)
-- A missing latch stays missing (counting down past zero changes nothing). A counter that is
-- not an integer, or beyond ±2^53 - 1 (common/counter.lua), or a key of another type is an
-- error, and nothing is written.
-- Reply: the count after this call (never below 0).
if counter(KEYS[1]) == nil then
  return 0
end
local left = redis.call('decr', KEYS[1])
if left <= 0 then
  redis.call('del', KEYS[1])
end
if left == 0 then
  notify(ARGV[2], KEYS[2], ARGV[1])
end
if left < 0 then
  return 0
end
return left
