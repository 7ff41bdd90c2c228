-- unfinished() (needs groupState.lua): the stream's unsettled entries, pending + not yet delivered (lag), for the
-- capacity and the statistics. Settled entries can wait in the stream for the trim (see trim.lua) and must not
-- count. Redis 7.0 tells no lag while the stream holds a deleted entry (a tombstone) at or after the group's last
-- delivered id and it cannot estimate the group's position (the deleted id is at or above the first entry's): these
-- scripts never leave one there (settled entries are acknowledged and trimmed, a cancelled queued one deleted with
-- the stream's counters set back, see cancel.lua). When Redis still cannot tell it (before 7.0; an XDEL by hand or
-- by an older version, until the group reads the stream's last entry or the trim passes it) it falls back to XLEN
-- (counting too many, never too few). KEYS[1] is the stream, ARGV[1] the group.
--- @include "groupState"

local function unfinished()
  local pending, _, lag = groupState()
  if pending and type(lag) == 'number' then return pending + lag end
  return redis.call('XLEN', KEYS[1])
end
