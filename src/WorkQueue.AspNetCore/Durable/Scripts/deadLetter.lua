-- KEYS: stream, dead, epoch. ARGV: group, consumer, id, job id, payload, attempt, enqueued at, error, reason,
-- idempotency key (empty: none), the epoch the entry was fetched under, 1 when this consumer already found that
-- Redis lost it (else 0), started at, finished-job retention ms, '1' when a cancel reached it (else ''). Moves an
-- entry this consumer still owns (or that Redis lost, see vanished.lua) to the dead-letter stream (the key recorded
-- there), frees its key, so the work can be submitted again, and ends the job's record; the entry is acknowledged
-- and left to the trim (see trim.lua). Returns 1, or 0 when another consumer owns it now (or no entry can have its
-- id, see entryId.lua: nothing written).
-- On Redis Cluster while the queue's slot migrates, it fails before its first write when a key it builds (the job's
-- record and pointer, the ended hash and list, its idempotency key) is not on this node (see here.lua).
--- @include "includes/now"
--- @include "includes/entryId"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"
--- @include "includes/here"

local stream, dead, epochKey = KEYS[1], KEYS[2], KEYS[3]
local group, consumer, id, job, payload, attempt, enqueuedAt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local err, reason, key, epoch, foundVanished = ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12] == '1'
local startedAt, retention, cancelAsked = ARGV[13], ARGV[14], ARGV[15]

if not isEntryId(id) then return 0 end
local mine = redis.call('XPENDING', stream, group, id, id, 1, consumer)
if #mine == 0 and not foundVanished and not vanished(id, epochKey, epoch) then return 0 end
if key ~= '' then here(recName(job), atName(job), endedRecords(), endedName('D'), keyName(key)) else here(recName(job), atName(job), endedRecords(), endedName('D')) end
if key == '' then
  redis.call('XADD', dead, '*', 'j', job, 'p', payload, 'a', attempt, 't', enqueuedAt, 'e', err, 'r', reason,
    'f', string.format('%.0f', now), 'c', consumer)
else
  redis.call('XADD', dead, '*', 'j', job, 'p', payload, 'a', attempt, 't', enqueuedAt, 'e', err, 'r', reason,
    'f', string.format('%.0f', now), 'c', consumer, 'k', key)
end
ackAndTrim(id)
releaseKey(key, job, nil, 0)
local rec = recordOf(job)
local cancel = cancelAsked
if cancel == '' then cancel = cancelOf(rec) end
local at = string.format('%.0f', now)
endRecord(job, id, 'D', header('D', cancel, at, attempt, enqueuedAt, consumer, startedAt, err, typeOf(payload)) .. historyOf(rec), at, tonumber(retention))
return 1
