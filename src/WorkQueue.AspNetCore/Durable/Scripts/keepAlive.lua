-- KEYS: stream, epoch. ARGV: group, consumer, then per entry: id, the epoch it was fetched under. Refreshes the
-- claim of each entry this consumer still owns, without raising its delivery count (JUSTID) and without taking back
-- an entry another consumer has reclaimed. Returns { ids this consumer no longer owns (another consumer took them,
-- or they were settled elsewhere), ids Redis lost (see vanished.lua) }.
--- @include "includes/vanished"

local lost, gone = {}, {}
for i = 3, #ARGV, 2 do
  local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
  if #mine == 1 then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  elseif vanished(ARGV[i], KEYS[2], ARGV[i + 1]) then
    gone[#gone + 1] = ARGV[i]
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return { lost, gone }
