-- Shared: is a key a lock? The client prepends this file to lua/lock/force_unlock.lua,
-- lua/rw/read_force_unlock.lua and lua/rw/write_force_unlock.lua (src/script.rs), and
-- src/inspect.rs applies the same rule; keep them in step.
-- A key is a lock when it is a hash whose every field is either
--   * `mode` = `read` or `write` (read-write lock), or
--   * an owner field `<client id>:<owner id>` or `<client id>:<owner id>:<suffix>` (suffix
--     `write` for the writer, or a Redisson transaction id) whose value is a hold count: a
--     positive integer as HINCRBY writes it (no sign, no leading zero, at most 2^63-1).
-- The client id is a UUID (Redisson's `UUID.randomUUID()`, and ours), the owner id is decimal
-- (Java thread id, u64 here). Counts are checked strictly. So an application hash such as
-- {"sku:1001": "2"} is not mistaken for a lock.
local COUNT_MAX, OWNER_MAX = '9223372036854775807', '18446744073709551615'
-- A lock hash has 1 field (RLock) or `mode` plus one per holder (read-write lock), but an
-- application hash under the same name may have millions: never HGETALL an unbounded hash in a
-- script (it would stall Redis). Up to CHECK_ALL fields (Redis's default hash-max-listpack-entries,
-- so a compact hash) every field is checked. A bigger hash is judged on a sample: HSCAN pages from
-- the start (at most 10) until at least CHECK_ALL fields were seen, every one of which must fit.
-- An application hash shows a foreign field there (it would take thousands of lock-shaped fields
-- and a foreign one only further on to pass), while a read-write lock with hundreds of readers
-- still passes. The work stays bounded (a listpack-encoded hash comes back whole from HSCAN, but
-- its size is capped by the server's hash-max-listpack-entries).
local CHECK_ALL = 128

-- `digits` (decimal, no sign) is at most `max` (same notation).
local function at_most(digits, max)
  return #digits < #max or (#digits == #max and digits <= max)
end

-- Printable ASCII, at most 60 bytes, for quoting data in an error reply.
local function shown(s)
  local t = string.gsub(string.sub(s, 1, 60), '[^\32-\126]', '?')
  if #s > 60 then
    t = t .. '...'
  end
  return t
end

-- nil when field = value fits a lock hash, else what is wrong.
local function field_problem(field, value)
  if field == 'mode' then
    if value == 'read' or value == 'write' then
      return nil
    end
    return 'field `mode` is `' .. shown(value) .. '`, not `read` or `write`'
  end
  local uuid = '^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x:'
  local owner = string.match(field, uuid .. '(%d+)$') or string.match(field, uuid .. '(%d+):[^:]+$')
  if owner == nil or not at_most(owner, OWNER_MAX) then
    return 'field `' .. shown(field) .. '` is neither `mode` nor an owner `<client uuid>:<owner id>[:<suffix>]`'
  end
  if string.match(value, '^[1-9]%d*$') == nil or not at_most(value, COUNT_MAX) then
    return 'field `' .. shown(field) .. '` has count `' .. shown(value) .. '`, not a positive integer'
  end
  return nil
end

-- nil when `key` is missing or a lock hash, else why it is not a lock.
local function not_a_lock(key)
  local kind = redis.call('type', key)['ok']
  if kind == 'none' then
    return nil
  end
  if kind ~= 'hash' then
    return 'it holds a ' .. kind
  end
  local size = redis.call('hlen', key)
  local entries
  if size <= CHECK_ALL then
    entries = redis.call('hgetall', key)
  else
    -- HSCAN counts as non-deterministic; Redis < 5 allows writes after it only in this mode
    if redis.replicate_commands then
      redis.replicate_commands()
    end
    entries = {}
    local cursor = '0'
    for _ = 1, 10 do
      local page = redis.call('hscan', key, cursor, 'COUNT', CHECK_ALL)
      cursor = page[1]
      for _, x in ipairs(page[2]) do
        entries[#entries + 1] = x
      end
      if cursor == '0' or #entries >= 2 * CHECK_ALL then
        break
      end
    end
    if #entries == 0 then
      return 'none of its ' .. size .. ' fields could be sampled'
    end
  end
  for i = 1, #entries, 2 do
    local problem = field_problem(entries[i], entries[i + 1])
    if problem then
      return 'a hash with ' .. problem
    end
  end
  return nil
end

-- The reply that refuses: WRONGTYPE (the client maps it to its wrong-type error).
local function refuse(key, why)
  return redis.error_reply('WRONGTYPE `' .. shown(key) .. '` is not a lock (' .. why .. '); force unlock refused, nothing deleted')
end
