-- KEYS: stream, delayed, epoch. ARGV: group, consumer, id, delay ms, member, job id, idempotency key (empty: none),
-- the epoch the entry was fetched under, 1 when this consumer already found that Redis lost it (else 0), nudge
-- channel, attempt, enqueued at, started at, error. Moves a failed entry this consumer still owns to the delayed
-- set, due after the delay by Redis's clock, its key with it, adds the attempt to the job's record (no expiry: the
-- job lives) and points the job's id to its due time; the entry is acknowledged and left to the trim (see trim.lua;
-- readers find the job through its pointer); one Redis lost (vanished.lua, not asked again when already found) is
-- stored there again. When it is the earliest due, a nudge tells idle consumers, which learn due times only when
-- they fetch. Returns 1, or 0 when another consumer owns it now (or no entry can have its id, see entryId.lua:
-- nothing written). On Redis Cluster while the queue's slot migrates, it fails before its first write when a key it
-- builds (the job's record and pointer, the ended hash, its idempotency key) is not on this node (see here.lua).
--- @include "includes/now"
--- @include "includes/entryId"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"
--- @include "includes/here"

local stream, delayed, epochKey = KEYS[1], KEYS[2], KEYS[3]
local group, consumer, id, delayMs, member, job, key = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local epoch, foundVanished, nudgeChannel = ARGV[8], ARGV[9] == '1', ARGV[10]
local attempt, enqueuedAt, startedAt, err = ARGV[11], ARGV[12], ARGV[13], ARGV[14]

if not isEntryId(id) then return 0 end
local mine = redis.call('XPENDING', stream, group, id, id, 1, consumer)
if #mine == 0 and not foundVanished and not vanished(id, epochKey, epoch) then return 0 end
if key ~= '' then here(recName(job), atName(job), endedRecords(), keyName(key)) else here(recName(job), atName(job), endedRecords()) end
local score = string.format('%.0f', now + tonumber(delayMs))
redis.call('ZADD', delayed, score, member)
moveKey(key, job, 'z' .. score)
local rec = recordOf(job)
redis.pcall('SET', recName(job), header('z', cancelOf(rec), '', attempt, enqueuedAt, consumer, startedAt, err) .. historyOf(rec)
  .. RS .. attempt .. US .. consumer .. US .. startedAt .. US .. string.format('%.0f', now) .. US .. 'R' .. US .. err)
redis.pcall('SET', atName(job), 'z' .. score)
ackAndTrim(id)
if redis.call('ZRANGE', delayed, 0, 0)[1] == member then redis.pcall('PUBLISH', nudgeChannel, 1) end
return 1
