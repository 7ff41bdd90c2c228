-- KEYS: stream. ARGV: group, consumer. Removes the consumer if it holds no pending entries; returns 1 if it did.

local stream = KEYS[1]
local group, consumer = ARGV[1], ARGV[2]

local mine = redis.call('XPENDING', stream, group, '-', '+', 1, consumer)
if #mine > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', stream, group, consumer)
return 1
