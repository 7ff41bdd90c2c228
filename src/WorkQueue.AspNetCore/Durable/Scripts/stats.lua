-- KEYS: stream, delayed, dead, scheduled. ARGV: group. Returns { unsettled stream entries (pending + lag, or the
-- stream's length when Redis cannot tell the lag; see unfinished.lua), delayed retries, dead letters, pending, lag
-- or -1, { name, pending, idle ms }..., scheduled jobs } for the queue's group.
--- @include "includes/groupState"

local stream, delayedSet, deadLetters, scheduledHash = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local group = ARGV[1]

local scheduled = redis.call('HLEN', scheduledHash)
local length = redis.call('XLEN', stream)
local delayed = redis.call('ZCARD', delayedSet)
local dead = redis.call('XLEN', deadLetters)
local pending, lag = 0, -1
local consumers = {}
local p, _, l = groupState()
if p then
  pending = p
  if l then lag = l end
  local okc, list = pcall(redis.call, 'XINFO', 'CONSUMERS', stream, group)
  if okc then
    for _, c in ipairs(list) do
      local name, p, idle
      for i = 1, #c, 2 do
        if c[i] == 'name' then name = c[i + 1] elseif c[i] == 'pending' then p = c[i + 1] elseif c[i] == 'idle' then idle = c[i + 1] end
      end
      consumers[#consumers + 1] = { name, p, idle }
    end
  end
end
-- Settled entries wait for the trim (see includes/trim.lua): the stream's unsettled entries are pending + lag, when known.
if lag >= 0 then length = pending + lag end
return { length, delayed - scheduled, dead, pending, lag, consumers, scheduled }
