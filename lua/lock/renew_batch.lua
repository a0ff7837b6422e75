-- Watchdog: renew many held locks in one call (Redisson 3.44+ batched renewal).
-- KEYS[i] lock hash i (all in one cluster slot)
-- ARGV[1] new TTL in ms, ARGV[i + 1] the owner field that holds KEYS[i]
-- Reply: an array with, per key in order, 1 = renewed, 0 = the owner's field is gone (never re-created).
local ttl_ms = ARGV[1]
local renewed = {}
for i, lock_key in ipairs(KEYS) do
  if redis.call('hexists', lock_key, ARGV[i + 1]) == 1 then
    redis.call('pexpire', lock_key, ttl_ms)
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
