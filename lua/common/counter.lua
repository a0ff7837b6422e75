-- Reads a synchronizer's counter (a semaphore's permits): nil when the key does not exist, its
-- integer value otherwise. A string that is not an integer is an error (nothing is written by
-- the script that asked); a key of another type fails in GET with WRONGTYPE.
local function counter(key)
  local text = redis.call('get', key)
  if text == false then
    return nil
  end
  local value = tonumber(text)
  if value == nil or value ~= math.floor(value) then
    error(redis.error_reply('ERR the value at ' .. key .. ' is not an integer count'))
  end
  return value
end
