-- Fenced lock: one acquisition attempt that takes a fencing token. Its effect on the lock is
-- Redisson's RFencedLock acquire (3.19+): the RLock acquire plus `INCR redisson_lock_token:{N}`
-- on every grant, re-entries included. The reply and the latch are ours.
-- KEYS[1] lock hash, KEYS[2] token counter "redisson_lock_token:{N}",
-- KEYS[3] this attempt's latch "redisson_unlock_latch:{N}:<attempt id>"
-- ARGV[1] TTL in ms, ARGV[2] owner field, ARGV[3] latch TTL in ms
-- Reply: {1, count, token} granted, the token as a decimal string, exact over the counter's
--        whole range (the latch records "count:token");
--        {0, pttl} held by someone else (no token is taken);
--        {2, 0} this attempt was cancelled before it arrived: nothing changed;
--        an error, before anything is written, when the counter is not an integer (ERR) or has
--        no next token: negative, or at i64::MAX (REDISSON_LOCK_OUT_OF_RANGE).
-- A copy of the same attempt replays the first grant (and its token) instead of taking another.
local lock_key, token_key, latch = KEYS[1], KEYS[2], KEYS[3]
local ttl_ms, owner, latch_ms = ARGV[1], ARGV[2], ARGV[3]

local seen = redis.call('get', latch)
if seen == 'cancelled' then
  return {2, 0}
elseif seen then
  local sep = string.find(seen, ':', 1, true)
  return {1, tonumber(string.sub(seen, 1, sep - 1)), string.sub(seen, sep + 1)}
end
if redis.call('exists', lock_key) == 0 or redis.call('hexists', lock_key, owner) == 1 then
  local current = redis.call('get', token_key)
  if current then
    local state = counter_state(current)
    if state == nil then
      return redis.error_reply('ERR the fencing token counter ' .. token_key .. ' is not an integer')
    elseif state == 'negative' then
      return redis.error_reply('REDISSON_LOCK_OUT_OF_RANGE the fencing token counter ' .. token_key
        .. ' is ' .. current .. ': tokens are never negative')
    elseif state == 'full' then
      return redis.error_reply('REDISSON_LOCK_OUT_OF_RANGE the fencing token counter ' .. token_key
        .. ' is ' .. current .. ': no token is left below i64::MAX')
    end
  end
  redis.call('incr', token_key)
  -- INCR's reply reaches Lua as a number; the counter's text is the exact token
  local token = redis.call('get', token_key)
  local holds = redis.call('hincrby', lock_key, owner, 1)
  redis.call('pexpire', lock_key, ttl_ms)
  redis.call('set', latch, holds .. ':' .. token, 'px', latch_ms)
  return {1, holds, token}
end
return {0, redis.call('pttl', lock_key)}
