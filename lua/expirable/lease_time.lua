-- RPermitExpirableSemaphore.getLeaseTime: how long a held permit's lease has left. Ended leases
-- are reclaimed first.
-- KEYS[1] semaphore counter, KEYS[2] leases "{N}:timeout", KEYS[3] channel "redisson_sc:{N}"
-- ARGV[1] permit id (raw bytes), ARGV[2] the no-lease score, ARGV[3] now (epoch ms),
-- ARGV[4] publish mode (common/notify.lua)
-- Reply: {1, ms left} held with a lease; {1, -1} held without a lease; {0, 0} no such permit.
local sem, leases, channel = KEYS[1], KEYS[2], KEYS[3]
local id, no_lease, now, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

reclaim(sem, leases, channel, now, nil, mode)
local score = redis.call('zscore', leases, id)
if score == false then
  return {0, 0}
end
if score == no_lease then
  return {1, -1}
end
return {1, tonumber(score) - tonumber(now)}
