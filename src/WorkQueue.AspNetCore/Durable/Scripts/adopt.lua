-- KEYS: stream, epoch. ARGV: group, consumer, id... Takes back entries pending for this consumer that it does not
-- hold (a call that read them lost its reply): returns { { id, fields, deliveries } for each still pending here, the
-- epoch (see epoch.lua) }; one deleted meanwhile is acknowledged, once every id was read (a malformed one fails the
-- call with nothing acknowledged). An entry another consumer has reclaimed is left to it.
--- @include "includes/epoch"

local stream, epochKey = KEYS[1], KEYS[2]
local group, consumer = ARGV[1], ARGV[2]
-- Then the ids, from ARGV[3] on.
local firstId = 3

local found, deleted = {}, {}
for i = firstId, #ARGV do
  local id = ARGV[i]
  local mine = redis.call('XPENDING', stream, group, id, id, 1, consumer)
  if #mine == 1 then
    local entry = redis.call('XRANGE', stream, id, id)
    if #entry == 1 then
      found[#found + 1] = { id, entry[1][2], mine[1][4] }
    else
      deleted[#deleted + 1] = id
    end
  end
end
for _, id in ipairs(deleted) do redis.call('XACK', stream, group, id) end
return { found, epochOf(epochKey, consumer) }
