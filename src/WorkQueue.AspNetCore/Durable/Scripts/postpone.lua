-- KEYS: stream, delayed, epoch. ARGV: group, consumer, id, delay ms, member (the delayed-set member of the same
-- attempt, see SettledEntry.cs), job id, idempotency key (empty: none), the epoch the entry was fetched under, 1 when
-- this consumer already found that Redis lost it (else 0), nudge channel. Hands an entry this consumer still owns
-- (or that Redis lost, see vanished.lua) back for later, unrun: to the delayed set, due after the delay by Redis's
-- clock, as the same attempt, its key with it, its job's id pointing to its due time; its record is left as it is
-- (nothing happened to the job). The entry is acknowledged and left to the trim (see trim.lua). Used for a job of a
-- type this instance does not know (a newer version's, during a rolling deploy), so that an instance that knows it
-- runs it. Returns 1, or 0 when another consumer owns it now (or no entry can have its id, see entryId.lua: nothing
-- written).
-- On Redis Cluster while the queue's slot migrates, it fails before its first write when a key it builds (the job's
-- pointer, its idempotency key) is not on this node (see here.lua).
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

if not isEntryId(id) or not tonumber(delayMs) then return 0 end
local mine = redis.call('XPENDING', stream, group, id, id, 1, consumer)
if #mine == 0 and not foundVanished and not vanished(id, epochKey, epoch) then return 0 end
if key ~= '' then here(atName(job), keyName(key)) else here(atName(job)) end
local score = string.format('%.0f', now + tonumber(delayMs))
redis.call('ZADD', delayed, score, member)
moveKey(key, job, 'z' .. score)
redis.pcall('SET', atName(job), 'z' .. score)
ackAndTrim(id)
if redis.call('ZRANGE', delayed, 0, 0)[1] == member then redis.pcall('PUBLISH', nudgeChannel, 1) end
return 1
