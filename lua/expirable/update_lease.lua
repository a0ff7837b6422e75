-- RPermitExpirableSemaphore.updateLeaseTime: give a held permit a new lease end. A permit whose
-- lease has already ended is reclaimed first, and then cannot be extended.
-- KEYS[1] semaphore counter, KEYS[2] leases "{N}:timeout", KEYS[3] channel "redisson_sc:{N}"
-- ARGV[1] permit id (raw bytes), ARGV[2] new lease end (epoch ms, or the no-lease score),
-- ARGV[3] now (epoch ms), ARGV[4] publish mode (common/notify.lua)
-- Reply: 1 updated, 0 no such permit. Sending it twice sets the same end twice.
local sem, leases, channel = KEYS[1], KEYS[2], KEYS[3]
local id, lease_end, now, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

reclaim(sem, leases, channel, now, nil, mode)
if redis.call('zscore', leases, id) == false then
  return 0
end
redis.call('zadd', leases, lease_end, id)
return 1
