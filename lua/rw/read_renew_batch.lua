-- Watchdog for read locks (Redisson 4.4+ semantics: only this client's own holds are renewed,
-- so a dead client's readers expire and the next read unlock clears them).
-- KEYS: pairs (lock hash N_i, key prefix KP_i)
-- ARGV[1] TTL ms; then per pair: a count m followed by the m read fields this client holds on N_i;
-- last, `1` to end with one EXISTS of every hash extended (a write untracks a key for a
-- connection whose tracking is NOLOOP; that read makes the server track it again), `0` not.
-- For each field still in the hash: every one of its timeout keys gets the TTL, and the hash is
-- made to live at least that long (never shortened below another holder's longer lease).
-- Each lock is renewed on its own: a key of another type answers 0 for its fields, and the rest of
-- the batch is still renewed.
-- Reply: one flag per field, in order: 1 = renewed, 0 = the field is gone (never re-created).
local ttl_ms = tonumber(ARGV[1])
local arg = 2
local flags, extended = {}, {}
for pair = 1, #KEYS, 2 do
  local lock_key, key_prefix = KEYS[pair], KEYS[pair + 1]
  local fields = tonumber(ARGV[arg])
  arg = arg + 1
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
  if alive and extend_ttl(lock_key, ARGV[1]) then
    extended[#extended + 1] = lock_key
  end
end
if ARGV[arg] == '1' then
  for i = 1, #extended, 1000 do
    redis.call('exists', unpack(extended, i, math.min(i + 999, #extended)))
  end
end
return flags
