-- KEYS: stream. ARGV: group, consumer. Removes the consumer if it holds no pending entries; returns 1 if it did.

local mine = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #mine > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1
