-- Prelude: extend_ttl(key, ttl_ms) gives an existing key at least `ttl_ms` ms to live, never
-- shortening a longer TTL; a key without a TTL gets one. True when it wrote the TTL.
-- `PEXPIRE key ttl GT` (Redis 7.0+) does it in one command for a key that has a shorter TTL, the
-- common case of a renewal; a server that refuses the option is asked `PTTL` first, for the rest
-- of the script too.
local extend_ttl_gt = true
local function extend_ttl(key, ttl_ms)
  if extend_ttl_gt then
    local set = redis.pcall('pexpire', key, ttl_ms, 'gt')
    if type(set) == 'number' then
      if set == 1 then
        return true
      end
      -- not set: the TTL is longer already, or there is none (GT counts that as infinite)
      if redis.call('pttl', key) ~= -1 then
        return false
      end
      redis.call('pexpire', key, ttl_ms)
      return true
    end
    extend_ttl_gt = false
  end
  if redis.call('pttl', key) < tonumber(ttl_ms) then
    redis.call('pexpire', key, ttl_ms)
    return true
  end
  return false
end
