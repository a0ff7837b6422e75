-- RCountDownLatch.delete: remove the latch; waiters are told ("1") when there was one.
-- KEYS[1] latch counter, KEYS[2] latch channel
-- ARGV[1] message ("1"), ARGV[2] publish mode (lua/common/notify.lua)
-- Reply: 1 when a latch was removed, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
  notify(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
