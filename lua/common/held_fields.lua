-- Knowing a lock is lost: which of this client's holds are still in Redis. Reads only, sent on
-- the connection that asked the server to track the keys it reads, so that the next change of
-- any of these keys (a DEL, an expiry, a flush, a force-unlock, another type written under the
-- name, or a hold of ours renewed or released) is pushed to it and the holds are read again.
-- KEYS: lock keys. ARGV: one owner field per key (a key held by several owners of this client
-- comes once per owner).
-- Reply: one integer per key: 1 the owner's field is there, 0 it is gone (or the key holds
-- another type).
local present = {}
for i, lock_key in ipairs(KEYS) do
  present[i] = (redis.pcall('hexists', lock_key, ARGV[i]) == 1) and 1 or 0
end
return present
