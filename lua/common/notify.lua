-- Publishes an unlock message the way the client's pub/sub mode says (the "publish mode" ARGV
-- of every script that wakes waiters): 'PUBLISH' (classic), 'SPUBLISH' (sharded, Redis 7+
-- cluster) or 'BOTH': classic and sharded, for a cluster where Redisson < 3.22 (classic) and
-- >= 3.22 (sharded) clients wait on the same locks. Both messages carry the same value, so a
-- client that listens on both channels is woken twice (a spurious wake-up; it re-tries).
local function notify(mode, channel, message)
  if mode == 'BOTH' then
    redis.call('publish', channel, message)
    redis.call('spublish', channel, message)
  else
    redis.call(mode, channel, message)
  end
end
