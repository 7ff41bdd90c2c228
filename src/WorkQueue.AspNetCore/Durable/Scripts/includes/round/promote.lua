-- promote(limit): moves up to limit due retries and scheduled jobs (members of KEYS[2], the delayed set, scored by
-- their due time) to the stream KEYS[1], their idempotency keys with them, and removes them from KEYS[3], the
-- scheduled hash. A member that cannot be read (not {job id}|{attempt}|{enqueued at}|{payload}: written by hand, say)
-- moves to the dead letters as it is, reason 'unreadable', rather than failing every fetch. Returns the ms until the
-- next delayed job is due (-1: none), and Redis's refusal or false.
-- On Redis Cluster while the queue's slot migrates, the keys a promotion writes besides the KEYS (each due job's
-- pointer and idempotency key) are read first with here.lua, one MGET for the batch, so that one not on this node
-- raises before the first write: nothing is promoted, and the fetch promotes the batch once the slot has moved (it
-- used to move the job to the stream while the pcall'd writes of its key and pointer failed unseen). A batch with no
-- due member makes no such call.
--- @include "../now"
--- @include "../try"
--- @include "../keys"
--- @include "../records"
--- @include "../here"

local function promote(limit)
  local due, err = try('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, limit)
  -- The keys the loop writes with redis.pcall (see here.lua); an unreadable member writes only the dead letters, whose
  -- XADD is its first write and fails cleanly through try.
  local written = {}
  for _, member in ipairs(due or {}) do
    local job, tail = string.match(member, '^([^|]+)|%d+|%d+|(.*)$')
    if job then
      written[#written + 1] = atName(job)
      local key = splitKey(tail)
      if key ~= '' then written[#written + 1] = keyName(key) end
    end
  end
  if #written > 0 then here(unpack(written)) end
  for _, member in ipairs(due or {}) do
    local job, attempt, stamp, tail = string.match(member, '^([^|]+)|(%d+)|(%d+)|(.*)$')
    local id, refused
    if not job then
      id, refused = try('XADD', string.sub(KEYS[1], 1, -7) .. 'dead', '*', 'p', member, 'e', 'a delayed-set member that cannot be read',
        'r', 'unreadable', 'f', string.format('%.0f', now), 'c', ARGV[2])
      if not refused then _, refused = try('ZREM', KEYS[2], member) end
    else
      local key, payload = splitKey(tail)
      if key == '' then
        id, refused = try('XADD', KEYS[1], '*', 'p', payload, 'a', attempt, 't', stamp, 'j', job)
      else
        id, refused = try('XADD', KEYS[1], '*', 'p', payload, 'a', attempt, 't', stamp, 'j', job, 'k', key)
      end
      if not refused then _, refused = try('ZREM', KEYS[2], member) end
      if not refused then
        redis.pcall('HDEL', KEYS[3], job)
        moveKey(key, job, id)
        redis.pcall('SET', atName(job), id)
      end
    end
    if refused then
      err = refused
      break
    end
  end
  local nextDue = -1
  local first = try('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if first and #first > 0 then nextDue = math.max(0, tonumber(first[2]) - now) end
  return nextDue, err or false
end
