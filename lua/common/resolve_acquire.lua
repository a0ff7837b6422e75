-- Any lock kind: settle an acquisition attempt whose reply was lost (a timeout, a dropped
-- connection), instead of sending it again, which could count one hold twice.
-- Every acquire script records its grant in the attempt's latch: the hold count after it, and for
-- the fenced lock its token ("count:token"; the token is replied as that string, exact).
-- KEYS[1] the attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] how long to keep the cancellation marker, in ms
-- Reply: {1, count[, token]} the attempt was granted; {0, 0} it was not, and now it never will be:
--        a copy of the request still on its way finds the marker and changes nothing.
local latch, keep_ms = KEYS[1], ARGV[1]

local seen = redis.call('get', latch)
if seen == false then
  redis.call('set', latch, 'cancelled', 'px', keep_ms)
  return {0, 0}
end
if seen == 'cancelled' then
  return {0, 0}
end
local sep = string.find(seen, ':', 1, true)
if sep then
  return {1, tonumber(string.sub(seen, 1, sep - 1)), string.sub(seen, sep + 1)}
end
return {1, tonumber(seen)}
