-- Read lock: delete the lock if it is in read mode, and wake one waiter per client.
-- KEYS[1] lock hash, KEYS[2] channel; ARGV[1] message ("0"), ARGV[2] publish command
-- Reply: 1 = deleted, 0 = not in read mode (nothing changed). Timeout keys are left to expire.
if redis.call('hget', KEYS[1], 'mode') == 'read' then
  redis.call('del', KEYS[1])
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return 1
end
return 0
