-- Watchdog: renew many held locks in one call (Redisson 3.44+ batched renewal).
-- KEYS[i] lock hash i (all in one cluster slot)
-- ARGV[1] TTL in ms, ARGV[i + 1] the owner field that holds KEYS[i], then ARGV[#KEYS + 2] `1`
-- to end with one EXISTS of every key extended: a write untracks a key for a connection whose
-- tracking is NOLOOP, and that read makes the server track it again (`0`: no read)
-- Each key is renewed on its own: a key that holds another type (WRONGTYPE) answers 2 for that
-- key only, and the rest of the batch is still renewed. A TTL is never shortened (another hold
-- of the same owner may have a longer lease), and a missing lock is never re-created.
-- Reply: an array with, per key in order, 1 = renewed, 0 = the owner's field is gone,
--        2 = the key holds another type.
local renewed, extended = {}, {}
for i, lock_key in ipairs(KEYS) do
  local held = redis.pcall('hexists', lock_key, ARGV[i + 1])
  if held == 1 then
    if extend_ttl(lock_key, ARGV[1]) then
      extended[#extended + 1] = lock_key
    end
    renewed[i] = 1
  elseif type(held) == 'table' then
    renewed[i] = 2
  else
    renewed[i] = 0
  end
end
if ARGV[#KEYS + 2] == '1' then
  for i = 1, #extended, 1000 do
    redis.call('exists', unpack(extended, i, math.min(i + 999, #extended)))
  end
end
return renewed
