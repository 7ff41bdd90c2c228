-- KEYS: stream, delayed, epoch. ARGV: group, consumer, id, delay ms, member, job id, idempotency key (empty: none),
-- the epoch the entry was fetched under, 1 when this consumer already found that Redis lost it (else 0), nudge
-- channel, attempt, enqueued at, started at, error. Moves a failed entry this consumer still owns to the delayed
-- set, due after the delay by Redis's clock, its key with it, adds the attempt to the job's record (no expiry: the
-- job lives) and points the job's id to its due time; the entry is acknowledged and left to the trim (see trim.lua;
-- readers find the job through its pointer); one Redis lost (vanished.lua, not asked again when already found) is
-- stored there again. When it is the earliest due, a nudge tells idle consumers, which learn due times only when
-- they fetch. Returns 1, or 0 when another consumer owns it now.
--- @include "includes/now"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"

local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
if #mine == 0 and ARGV[9] ~= '1' and not vanished(ARGV[3], KEYS[3], ARGV[8]) then return 0 end
local score = string.format('%.0f', now + tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], score, ARGV[5])
moveKey(ARGV[7], ARGV[6], 'z' .. score)
local rec = recordOf(ARGV[6])
redis.pcall('SET', recName(ARGV[6]), header('z', cancelOf(rec), '', ARGV[11], ARGV[12], ARGV[2], ARGV[13], ARGV[14]) .. historyOf(rec)
  .. RS .. ARGV[11] .. US .. ARGV[2] .. US .. ARGV[13] .. US .. string.format('%.0f', now) .. US .. 'R' .. US .. ARGV[14])
redis.pcall('SET', atName(ARGV[6]), 'z' .. score)
ackAndTrim(ARGV[3])
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] == ARGV[5] then redis.pcall('PUBLISH', ARGV[10], 1) end
return 1
