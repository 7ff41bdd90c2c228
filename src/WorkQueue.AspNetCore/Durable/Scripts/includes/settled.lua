-- settled(id) (needs vanished.lua, which includes groupState.lua): whether an entry still in the stream and pending
-- for no consumer was delivered to the group, so was settled and waits for the trim (see trim.lua) rather than being
-- queued. Entries are only ever added at the stream's end, so one at or below the group's last delivered id has been
-- delivered.
--- @include "vanished"

local function settled(id)
  local _, last = groupState()
  return last ~= nil and not before(last, id)
end
