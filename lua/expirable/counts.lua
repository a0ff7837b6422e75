-- RPermitExpirableSemaphore.availablePermits / getPermits / acquiredPermits, after giving ended
-- leases back (as Redisson's queries do).
-- KEYS[1] semaphore counter, KEYS[2] leases "{N}:timeout", KEYS[3] channel "redisson_sc:{N}"
-- ARGV[1] now (epoch ms), ARGV[2] publish mode (common/notify.lua)
-- Reply: {available, acquired}: permits free to take (0 when there is no semaphore) and permits
-- held under an id. getPermits is their sum.
local sem, leases, channel = KEYS[1], KEYS[2], KEYS[3]
local now, mode = ARGV[1], ARGV[2]

local _, available = reclaim(sem, leases, channel, now, nil, mode)
return {available or 0, redis.call('zcard', leases)}
