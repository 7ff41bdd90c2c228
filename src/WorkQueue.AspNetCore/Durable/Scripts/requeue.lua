-- KEYS: stream, dead, delayed, scheduled. ARGV: group, dead-letter id, nudge channel, capacity. Puts a dead letter back
-- on the queue as a new job (attempt 1, same job id) and removes it from the dead letters, if the queue has room for
-- it as an enqueue has (capacity - unfinished, see unfinished.lua, - the delayed set's retries and scheduled jobs, as
-- the round computes it, in this same call). A dead letter that had an idempotency key keeps it and takes it back when
-- it is free (or stale); when another job holds it meanwhile, the requeued job runs without holding it (and takes it
-- if it is free when the job next moves: a retry or a hand-back). Returns the new stream id; '#' when the queue has no
-- room (nothing written: the dead letter stays); nil when there is no such dead letter (an id that is not a whole
-- stream id, {ms}-{n}, names none: XRANGE would read 1 as a range); a dead-letter key of another type fails with
-- Redis's error (WRONGTYPE), not as "no such dead letter". On Redis Cluster while the queue's slot migrates, it fails
-- before its first write when a key it builds (the job's record and pointer, the ended hash and list, the idempotency
-- key) is not on this node (see here.lua): sent again, it adds the job once.
--- @include "includes/now"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/unfinished"
--- @include "includes/here"

local stream, dead, delayed, scheduled = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local group, deadId, nudgeChannel, capacity = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if not string.match(deadId, '^%d+%-%d+$') then return false end
-- pcall: an id out of range (over 64 bits) names no dead letter; any other error (a dead-letter key of another type)
-- is the caller's to see, not a "no such dead letter".
local found = redis.pcall('XRANGE', dead, deadId, deadId)
if type(found) == 'table' and found.err then
  if string.find(found.err, 'Invalid stream ID', 1, true) then return false end
  return redis.error_reply(found.err)
end
if #found == 0 then return false end
if tonumber(capacity) - unfinished() - redis.call('ZCARD', delayed) <= 0 then return '#' end
local f = {}
local raw = found[1][2]
for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
local job = f['j'] or deadId
local key = f['k']
if key then
  here(keyName(key), atName(job), recName(job), endedRecords(), endedName('D'))
else
  here(atName(job), recName(job), endedRecords(), endedName('D'))
end
local id
if key then
  id = redis.call('XADD', stream, '*', 'p', f['p'] or '', 't', string.format('%.0f', now), 'j', job, 'k', key)
  local holder, where = holderOf(keyName(key))
  if not holder or holder == job or not alive(holder, where, delayed, scheduled) then
    redis.call('SET', keyName(key), job .. '|' .. id)
  end
else
  id = redis.call('XADD', stream, '*', 'p', f['p'] or '', 't', string.format('%.0f', now), 'j', job)
end
redis.call('XDEL', dead, deadId)
-- The job lives again: its record (history kept, no expiry) and where it is now.
redis.pcall('SET', atName(job), id)
redis.pcall('ZREM', endedName('D'), job)
local rec = recordOf(job)
redis.pcall('HDEL', endedRecords(), job)
if rec then redis.pcall('SET', recName(job), 'q' .. US .. (string.match(rec, '^[^\31]*\31[^\31]*(.*)$') or '')) end
redis.call('PUBLISH', nudgeChannel, 1)
return id
