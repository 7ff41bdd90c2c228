-- KEYS: stream, epoch. ARGV: group, consumer, then per entry: id, the epoch it was fetched under. Refreshes the
-- claim of each entry this consumer still owns, without raising its delivery count (JUSTID) and without taking back
-- an entry another consumer has reclaimed. Every id is read before the first claim is refreshed, so a malformed one
-- fails the call with none refreshed. Returns { ids this consumer no longer owns (another consumer took them, or they
-- were settled elsewhere), ids Redis lost (see vanished.lua) }.
--- @include "includes/vanished"

local stream, epochKey = KEYS[1], KEYS[2]
local group, consumer = ARGV[1], ARGV[2]
-- Then the entries, from ARGV[3] on, two arguments each.
local firstEntry, stride = 3, 2

local held, lost, gone = {}, {}, {}
for i = firstEntry, #ARGV, stride do
  local id, epoch = ARGV[i], ARGV[i + 1]
  local mine = redis.call('XPENDING', stream, group, id, id, 1, consumer)
  if #mine == 1 then
    held[#held + 1] = id
  elseif vanished(id, epochKey, epoch) then
    gone[#gone + 1] = id
  else
    lost[#lost + 1] = id
  end
end
-- Refreshing a claim moves nothing another id's answer reads (who holds what, what the stream has), so it waits for
-- the last read.
for _, id in ipairs(held) do redis.call('XCLAIM', stream, group, consumer, 0, id, 'JUSTID') end
return { lost, gone }
