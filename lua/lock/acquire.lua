-- RLock: one acquisition attempt (Redisson RLock acquire, all versions).
-- KEYS[1] lock hash
-- ARGV[1] lease in ms, ARGV[2] owner field "<client id>:<owner id>"
-- Reply: nil when granted (first hold or re-entry), otherwise the lock's PTTL in ms.
local lock_key = KEYS[1]
local lease_ms = ARGV[1]
local owner = ARGV[2]

local free = redis.call('exists', lock_key) == 0
if free or redis.call('hexists', lock_key, owner) == 1 then
  -- a new hold and a re-entry are both one HINCRBY; the TTL is reset to this lease
  redis.call('hincrby', lock_key, owner, 1)
  redis.call('pexpire', lock_key, lease_ms)
  return nil
end
return redis.call('pttl', lock_key)
