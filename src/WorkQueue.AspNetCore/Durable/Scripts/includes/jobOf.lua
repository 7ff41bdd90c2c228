-- jobOf(id): the job an id names. A job's id is the stream id it was first stored under (or s{ms}-{n} for a scheduled
-- job); every later entry of the job (a retry or a scheduled job come due, a hand-back, a requeue) carries it in its
-- field j, so the stream id of such an entry also names the job, while the entry is in the stream. An id Redis cannot
-- read as a stream id names no entry (pcall: an id out of range is unknown, not an error). KEYS[1] is the stream.

local function jobOf(id)
  if not string.match(id, '^%d+%-%d+$') then return id end
  local found = redis.pcall('XRANGE', KEYS[1], id, id)
  if type(found) ~= 'table' or found.err or #found == 0 then return id end
  local raw = found[1][2]
  for i = 1, #raw, 2 do
    if raw[i] == 'j' and raw[i + 1] ~= '' then return raw[i + 1] end
  end
  return id
end
