-- An acquisition attempt's record, shared by the acquire scripts that keep the owner's hold
-- count in the lock hash (every kind but the fenced lock, whose record carries its token too).
-- Their "latch TTL ms" argument says where the record is:
--   > 0: in the attempt's latch, written with the grant (the owner may hold the lock already: a
--        pinned owner, a scope, a re-entry);
--   '0': in the lock itself. The owner is new to this attempt, so its field in the hash exists
--        only if this attempt was granted: a copy of the attempt that finds the field replays
--        the grant, and settling reads the field (lua/common/resolve_by_field.lua). No latch is
--        written, so none has to be deleted after the reply.
-- Either way the latch is read first: settling marks it `cancelled`, after which no copy of the
-- attempt changes anything.

-- {2, 0} when the attempt was cancelled before it arrived, {1, count} when its latch recorded
-- a grant (a copy of an attempt that ran), nil the first time.
local function recorded(latch)
  local seen = redis.call('get', latch)
  if seen == 'cancelled' then
    return {2, 0}
  elseif seen then
    return {1, tonumber(seen)}
  end
  return nil
end

-- Records a grant of `holds` in the latch, unless the lock's field is the record.
local function record(latch, holds, latch_ms)
  if latch_ms ~= '0' then
    redis.call('set', latch, holds, 'px', latch_ms)
  end
end
