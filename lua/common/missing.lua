-- Waiting: which of the locks that subscribed waiters wait on are gone. Sent in batches, once per
-- poll interval, so an unlock whose message never arrived (a raw DEL, an expiry, a message lost
-- in transit) is noticed without every waiter polling on its own. Reads only.
-- KEYS: lock keys (all in one cluster slot). ARGV: none.
-- Reply: the positions (1-based) in KEYS of the keys that do not exist.
local gone = {}
for i, lock_key in ipairs(KEYS) do
  if redis.call('exists', lock_key) == 0 then
    gone[#gone + 1] = i
  end
end
return gone
