-- KEYS: stream, epoch. ARGV: group, consumer, id... Takes back entries pending for this consumer that it does not
-- hold (a call that read them lost its reply): returns { { id, fields, deliveries } for each still pending here, the
-- epoch (see epoch.lua) }; one deleted meanwhile is acknowledged. An entry another consumer has reclaimed is left to
-- it.
--- @include "includes/epoch"

local found = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local mine = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1, ARGV[2])
  if #mine == 1 then
    local entry = redis.call('XRANGE', KEYS[1], id, id)
    if #entry == 1 then
      found[#found + 1] = { id, entry[1][2], mine[1][4] }
    else
      redis.call('XACK', KEYS[1], ARGV[1], id)
    end
  end
end
return { found, epochOf(KEYS[2], ARGV[2]) }
