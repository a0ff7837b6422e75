-- Watchdog for read locks (Redisson 4.4+ semantics: only this client's own holds are renewed,
-- so a dead client's readers expire and the next read unlock clears them).
-- KEYS[i] lock hash N_i (all in one cluster slot)
-- ARGV[1] TTL ms; then per lock: its key prefix KP_i, a count m, and the m read fields this
-- client holds on N_i.
-- The prefix is an argument, not a key: it names no key, and a connection with client-side
-- tracking is made to track every key a script declares once the script reads, so a declared
-- prefix would stay in the server's tracking table with no write ever removing it. The timeout
-- keys it forms share N_i's cluster slot (the same hash tag rule as N_i).
-- For each field still in the hash: every one of its timeout keys gets the TTL, and the hash is
-- made to live at least that long (never shortened below another holder's longer lease).
-- Each lock is renewed on its own: a key of another type answers 0 for its fields, and the rest of
-- the batch is still renewed.
-- Reply: one flag per field, in order: 1 = renewed, 0 = the field is gone (never re-created).
local ttl_ms = tonumber(ARGV[1])
local arg = 2
local flags = {}
for _, lock_key in ipairs(KEYS) do
  local key_prefix = ARGV[arg]
  local fields = tonumber(ARGV[arg + 1])
  arg = arg + 2
  local alive = false
  for _ = 1, fields do
    local field = ARGV[arg]
    arg = arg + 1
    -- pcall: a key of another type answers an error table; only this lock is then not renewed
    local got = redis.pcall('hget', lock_key, field)
    local holds = nil
    if type(got) == 'string' then
      holds = tonumber(got)
    end
    if holds ~= nil and holds > 0 then
      for k = holds, 1, -1 do
        redis.call('pexpire', key_prefix .. ':' .. field .. ':rwlock_timeout:' .. k, ttl_ms)
      end
      alive = true
      flags[#flags + 1] = 1
    else
      flags[#flags + 1] = 0
    end
  end
  if alive and redis.call('pttl', lock_key) < ttl_ms then
    redis.call('pexpire', lock_key, ARGV[1])
    -- a read after the write: a connection with client-side tracking keeps being told of
    -- changes to a key only while its last access to it is a read
    redis.call('exists', lock_key)
  end
end
return flags
