-- Watchdog: renew many held locks in one call (Redisson 3.44+ batched renewal).
-- KEYS[i] lock hash i (all in one cluster slot)
-- ARGV[1] TTL in ms, ARGV[i + 1] the owner field that holds KEYS[i]
-- Each key is renewed on its own: a key that holds another type (WRONGTYPE) answers 2 for that
-- key only, and the rest of the batch is still renewed. A TTL is never shortened (another hold
-- of the same owner may have a longer lease), and a missing lock is never re-created.
-- Reply: an array with, per key in order, 1 = renewed, 0 = the owner's field is gone,
--        2 = the key holds another type.
local ttl_ms = tonumber(ARGV[1])
local renewed = {}
for i, lock_key in ipairs(KEYS) do
  local held = redis.pcall('hexists', lock_key, ARGV[i + 1])
  if held == 1 then
    if redis.call('pttl', lock_key) < ttl_ms then
      redis.call('pexpire', lock_key, ARGV[1])
    end
    renewed[i] = 1
  elseif type(held) == 'table' then
    renewed[i] = 2
  else
    renewed[i] = 0
  end
end
return renewed
