-- A synchronizer's count (a semaphore's permits, a count-down latch's count): a decimal string
-- kept within ±MAX_COUNT = 2^53 - 1, the integers Lua's numbers hold exactly (the crate's
-- MAX_PERMITS), so every comparison and sum below is exact. Every check runs before the
-- script writes anything (a script's writes are not undone by a later error).
local MAX_COUNT = 9007199254740991
local MAX_TEXT = '9007199254740991'

-- (errors are raised as strings: Redis before 7 cannot raise an error reply table from a
-- function, its error handler only takes text; the client finds the code in either wording)
local function out_of_range(key, what)
  error('REDISSON_LOCK_OUT_OF_RANGE the count at ' .. key .. ' ' .. what)
end

-- counter(key): nil when the key does not exist, its integer value otherwise. A string that is
-- not an integer is an error (ERR), and so is one beyond ±MAX_COUNT (REDISSON_LOCK_OUT_OF_RANGE:
-- written by hand or by another client); a key of another type fails in GET with WRONGTYPE.
local function counter(key)
  local text = redis.call('get', key)
  if text == false then
    return nil
  end
  local value = tonumber(text)
  if value == nil or value ~= math.floor(value) then
    error('the value at ' .. key .. ' is not an integer count')
  end
  if value > MAX_COUNT or value < -MAX_COUNT then
    out_of_range(key, 'is ' .. text .. ', beyond ±' .. MAX_TEXT)
  end
  return value
end

-- in_range(key, value, what): refuses a count `value` (an exact integer: at most 2^53 in size)
-- beyond ±MAX_COUNT; `what` says where it came from.
local function in_range(key, value, what)
  if value > MAX_COUNT or value < -MAX_COUNT then
    out_of_range(key, 'would become ' .. string.format('%d', value) .. ', beyond ±' .. MAX_TEXT
      .. ' (' .. what .. ')')
  end
end

-- within(key, now, change): refuses a change that would take the count `now` beyond
-- ±MAX_COUNT. Both must be integers within ±MAX_COUNT (so exact): their sum, rounded to a Lua
-- number, is then exact when it is within the bound, and beyond the bound when the true sum is
-- (2^53 itself is a number, and rounding never crosses it).
local function within(key, now, change)
  local after = now + change
  if after > MAX_COUNT or after < -MAX_COUNT then
    out_of_range(key, 'would go beyond ±' .. MAX_TEXT .. ' (it is ' .. string.format('%d', now)
      .. ', the change ' .. string.format('%+d', change) .. ')')
  end
end
