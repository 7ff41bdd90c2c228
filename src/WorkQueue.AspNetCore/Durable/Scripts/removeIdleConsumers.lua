-- KEYS: stream. ARGV: group, this consumer, min idle ms. Removes other consumers that hold no pending entries and
-- have been idle longer than min idle (one with pending entries is never removed: Redis would drop its entries).
-- Returns the names removed.

local stream = KEYS[1]
local group, thisConsumer, minIdle = ARGV[1], ARGV[2], ARGV[3]

local removed = {}
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', stream, group)
if not ok then return removed end
for _, c in ipairs(consumers) do
  local name, pending, idle
  for i = 1, #c, 2 do
    if c[i] == 'name' then name = c[i + 1] elseif c[i] == 'pending' then pending = c[i + 1] elseif c[i] == 'idle' then idle = c[i + 1] end
  end
  if name ~= thisConsumer and pending == 0 and idle > tonumber(minIdle) then
    redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
    removed[#removed + 1] = name
  end
end
return removed
