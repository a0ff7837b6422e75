-- Read lock: is it read-locked? (Redisson 3.24+: read mode, or write mode with reader fields.)
-- KEYS[1] lock hash. Reply: 1 or 0.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' or (mode == 'write' and redis.call('hlen', KEYS[1]) > 2) then
  return 1
end
return 0
