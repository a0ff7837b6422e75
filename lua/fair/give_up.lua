-- Fair lock: a waiter that stops waiting (its wait ran out, or it was cancelled) leaves the queue
-- at once, so it never holds up those behind it (Redisson's acquireFailed).
-- KEYS[1] queue "redisson_lock_queue:{N}", KEYS[2] deadlines "redisson_lock_timeout:{N}"
-- ARGV[1] the waiter's owner field, ARGV[2] its wait ms (everyone behind it gets that much back)
-- Reply: 1 when the waiter was queued, 0 when it was not (already gone: nothing changed).
local queue, deadlines, owner, wait_ms = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])

local waiting = redis.call('lrange', queue, 0, -1)
local at = nil
for i = 1, #waiting do
  if waiting[i] == owner then
    at = i
    break
  end
end
if at == nil then
  redis.call('zrem', deadlines, owner)
  return 0
end
-- leave the queue first: should a later command be refused (an ACL without ZINCRBY/ZREM), the
-- waiter is at least out of everyone's way (a script's earlier writes stay)
redis.call('lrem', queue, 0, owner)
for i = at + 1, #waiting do
  redis.call('zincrby', deadlines, -wait_ms, waiting[i])
end
redis.call('zrem', deadlines, owner)
return 1
