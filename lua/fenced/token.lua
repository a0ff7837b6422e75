-- The fencing token counter "redisson_lock_token:{N}": a decimal integer that Redis increments
-- exactly up to i64::MAX. Lua's numbers hold integers exactly only up to 2^53 (and print them
-- exactly only below 10^14), so the scripts keep tokens as the strings Redis stores, never as
-- numbers.
local TOKEN_MAX = '9223372036854775807'

-- Compares two decimal strings of non-negative integers without leading zeros: -1, 0 or 1.
local function compare_tokens(a, b)
  if #a ~= #b then
    return #a < #b and -1 or 1
  end
  if a == b then
    return 0
  end
  return a < b and -1 or 1
end

-- What the counter's text is: 'next' (0 <= n < i64::MAX: a next token exists), 'negative',
-- 'full' (i64::MAX: no token is left), or nil (not an integer Redis would increment).
local function counter_state(text)
  if string.match(text, '^%-[1-9]%d*$') then
    return 'negative'
  end
  if text ~= '0' and not string.match(text, '^[1-9]%d*$') then
    return nil
  end
  if compare_tokens(text, TOKEN_MAX) >= 0 then
    return 'full'
  end
  return 'next'
end
