-- Shared by the fair lock's scripts (the client prepends it, see src/script.rs).
-- Waiters at the head of the queue whose deadline passed gave up without leaving (they crashed, or
-- their give-up never arrived): drop them. A head without a deadline is left alone (Redisson 3.32+).
local function purge_stale(queue, deadlines, now)
  while true do
    local head = redis.call('lindex', queue, 0)
    if head == false then
      return
    end
    local deadline = redis.call('zscore', deadlines, head)
    if deadline ~= false and tonumber(deadline) <= now then
      redis.call('zrem', deadlines, head)
      redis.call('lpop', queue)
    else
      return
    end
  end
end
