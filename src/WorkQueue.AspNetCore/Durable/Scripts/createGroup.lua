-- KEYS: stream, epoch. ARGV: group, consumer. Creates the group (and the stream) unless it exists, reading from the
-- stream's start so jobs enqueued before any consumer existed are delivered too, and the queue's epoch (see
-- epoch.lua) unless it exists, in one step: a group made again after Redis lost its data comes with a new epoch.
-- Returns the epoch.
--- @include "includes/epoch"

local stream, epochKey = KEYS[1], KEYS[2]
local group, consumer = ARGV[1], ARGV[2]

local created = redis.pcall('XGROUP', 'CREATE', stream, group, '0', 'MKSTREAM')
if type(created) == 'table' and created.err and not string.find(created.err, 'BUSYGROUP', 1, true) then return created end
return epochOf(epochKey, consumer)
