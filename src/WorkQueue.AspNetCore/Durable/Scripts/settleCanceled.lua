-- KEYS: stream, epoch. ARGV: group, consumer, id, job id, attempt, enqueued at, started at ('' when it never
-- started), idempotency key (empty: none), the epoch it was fetched under, 1 when this consumer already found that
-- Redis lost it (else 0), finished-job retention ms, the job type's name ('' for the queue's default type, see
-- JobTypeEnvelope.cs). Ends an entry this consumer still owns as cancelled (it
-- honoured a cancel by id, or the cancel came before it started): acknowledged and left to the trim (see trim.lua),
-- its key freed, its record ended. Returns 1, or 0 when another consumer owns it now (or no entry can have its id,
-- see entryId.lua: nothing written).
-- On Redis Cluster while the queue's slot migrates, it fails before its first write when a key it builds (the job's
-- record and pointer, the ended hash and list, its idempotency key) is not on this node (see here.lua).
--- @include "includes/now"
--- @include "includes/entryId"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"
--- @include "includes/here"

local stream, epochKey = KEYS[1], KEYS[2]
local group, consumer, id, job, attempt, enqueuedAt, startedAt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local key, epoch, foundVanished, retention, jobType = ARGV[8], ARGV[9], ARGV[10] == '1', ARGV[11], ARGV[12]

if not isEntryId(id) then return 0 end
local mine = redis.call('XPENDING', stream, group, id, id, 1, consumer)
if #mine == 0 and not foundVanished and not vanished(id, epochKey, epoch) then return 0 end
if key ~= '' then here(recName(job), atName(job), endedRecords(), endedName('C'), keyName(key)) else here(recName(job), atName(job), endedRecords(), endedName('C')) end
ackAndTrim(id)
releaseKey(key, job, nil, 0)
local rec = recordOf(job)
local at = string.format('%.0f', now)
endRecord(job, id, 'C', header('C', '1', at, attempt, enqueuedAt, consumer, startedAt, '', jobType) .. historyOf(rec), at, tonumber(retention))
return 1
