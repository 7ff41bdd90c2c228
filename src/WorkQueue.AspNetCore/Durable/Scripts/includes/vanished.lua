-- vanished(id, epochKey, epoch): whether Redis lost an entry (a restart without persistence, a failover to an empty
-- replica, a flush) rather than someone settling it. It must be pending for no consumer and not in the stream, and
-- then either the queue's epoch (epochKey) is no longer epoch, the one it was fetched under (see epoch.lua; '' when
-- unknown), or it was never removed from the stream: neither deleted (the stream's max-deleted-entry-id is below it,
-- or there is no stream; Redis before 7.0 does not report it) nor trimmed (see trim.lua: trimming does not raise
-- max-deleted-entry-id, so a trimmed entry is one below the stream's first entry, or in an emptied stream, that the
-- group has delivered). A delivered entry is never deleted by these scripts: settled, it is acknowledged and stays
-- in the stream, pending for no consumer, until the trim (so it is found there: not lost); only a cancel of a queued
-- entry deletes, and sets the deleted id back (see cancel.lua), so the deleted test only sees an XDEL made by hand
-- or by an older version. The second test alone fails once the trim passed an entry of a stream made again (which
-- needs later entries delivered and every earlier one settled); it still covers a Redis restarted from an older
-- snapshot, which keeps the epoch. KEYS[1] is the stream, ARGV[1] the group.
--- @include "groupState"
--- @include "streamInfo"

local function before(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  if not am or not bm then return false end
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am < bm or (am == bm and as < bs)
end
local function vanished(id, epochKey, epoch)
  local okp, anyone = pcall(redis.call, 'XPENDING', KEYS[1], ARGV[1], id, id, 1)
  if okp and #anyone > 0 then return false end
  if #redis.call('XRANGE', KEYS[1], id, id) > 0 then return false end
  if epoch and epoch ~= '' then
    local current = redis.pcall('GET', epochKey)
    if type(current) ~= 'table' and current ~= epoch then return true end
  end
  local info = streamInfo()
  if not info then return true end
  local deleted, length, first = info['max-deleted-entry-id'], info['length'], info['first-entry']
  if not deleted then return false end
  if not before(deleted, id) then return false end
  -- Trimmed rather than deleted (see includes/trim.lua): delivered to the group, and below the stream's first entry.
  if length == 0 or (type(first) == 'table' and before(id, first[1])) then
    local _, last = groupState()
    if last and not before(last, id) then return false end
  end
  return true
end
