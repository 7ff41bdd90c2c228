-- KEYS: stream, delayed, scheduled. ARGV: group, job id, finished-job retention ms, 1 to cancel only a scheduled job
-- that has not come due (else 0), cancel channel, how long a cancel asked of a running job is kept (ms). Cancels a
-- job by id, wherever it is: a scheduled one or one waiting for a retry leaves the delayed set, a queued one not yet
-- delivered to any consumer leaves the stream; either way its key is freed and it ends as cancelled. A queued entry
-- cannot be acknowledged (no consumer holds it) and a deleted one ahead of the group would cost the group its lag
-- (see unfinished.lua): it is deleted and the stream's counters set back as if it had never been added (XSETID with
-- ENTRIESADDED one lower and MAXDELETEDID as it was: O(1), Redis 7.0 or later; before, Redis has no lag to keep).
-- Nothing reads the deleted id of an entry no consumer was given. One delivered to a consumer (running, or in its
-- prefetch) is marked in its record and its stream id published on the cancel channel, for the instance that holds
-- it. The id may be the job's or the stream id of any later entry of it still in the stream (a retry's, a hand-back's:
-- see jobOf.lua); either way the job is cancelled, its record written under its own id. Returns { 1, job } cancelled,
-- { 2, consumer, job } asked, { 3, job } already ended (its record says how), or { 0 } unknown; job is the job's id.
-- On Redis Cluster while the queue's slot migrates, it fails before its first write (and before it reads the job's
-- record) when a key it builds (the job's record and pointer, the ended hash and list, the job's idempotency key) is
-- not on this node (see here.lua).
--- @include "includes/now"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/vanished"
--- @include "includes/settled"
--- @include "includes/jobOf"
--- @include "includes/streamInfo"
--- @include "includes/here"

local stream, delayed, scheduled = KEYS[1], KEYS[2], KEYS[3]
local group, asked, retentionMs, scheduledOnly = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1'
local cancelChannel, markMs = ARGV[5], ARGV[6]

local job = jobOf(asked)
here(recName(job), atName(job), endedRecords(), endedName('C'))
local rec = recordOf(job)
if isEnded(rec) then return { 3, job } end
local at = string.format('%.0f', now)
local function canceled(id, attempt, enq, key, payload)
  releaseKey(key, job, nil, 0)
  endRecord(job, id, 'C', header('C', '1', at, attempt or '1', enq or '0', '', '', '', typeOf(payload)) .. historyOf(rec), at, retentionMs)
  redis.pcall('DEL', atName(job))
  return { 1, job }
end
local function fromMember(member)
  local _, attempt, stamp, tail = string.match(member, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  return attempt, stamp, splitKey(tail or '')
end
-- The job's idempotency key, once known, checked before the write that frees it (see here.lua).
local function keyHere(key)
  if key and key ~= '' then here(keyName(key)) end
end
local member = redis.call('HGET', scheduled, job)
if member then
  local attempt, stamp, key, payload = fromMember(member)
  keyHere(key)
  redis.call('HDEL', scheduled, job)
  redis.call('ZREM', delayed, member)
  return canceled(job, attempt, stamp, key, payload)
end
if scheduledOnly then return { 0 } end
local where = redis.pcall('GET', atName(job))
if type(where) ~= 'string' then
  where = nil
  if string.match(job, '^%d+%-%d+$') then where = job end
end
if not where then return { 0 } end
if string.sub(where, 1, 1) == 'z' then
  local due = delayedMember(job, string.sub(where, 2))
  if not due then return { 0 } end
  local attempt, stamp, key, payload = fromMember(due)
  keyHere(key)
  redis.call('ZREM', delayed, due)
  return canceled('', attempt, stamp, key, payload)
end
-- pcall: a location set by hand to something Redis cannot read as a stream id is no location.
local entry = redis.pcall('XRANGE', stream, where, where)
if type(entry) ~= 'table' or entry.err or #entry == 0 then return { 0 } end
local f = {}
local raw = entry[1][2]
for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
local held = redis.call('XPENDING', stream, group, where, where, 1)
if #held > 0 then
  if rec then
    rec = (string.match(rec, '^([^\31]*)') or 'r') .. US .. '1' .. (string.match(rec, '^[^\31]*\31[^\31]*(.*)$') or '')
    redis.pcall('SET', recName(job), rec)
  else
    redis.pcall('SET', recName(job), header('r', '1', '', f['a'] or '1', f['t'] or '0', '', '', ''), 'PX', markMs)
  end
  redis.pcall('PUBLISH', cancelChannel, where)
  return { 2, held[1][2], job }
end
-- Completed and acknowledged, waiting for the trim: not queued (its key is the completed job's, kept for its retention).
if settled(where) then return { 0 } end
-- Queued, ahead of the group: no consumer holds it, so it cannot be acknowledged, and a tombstone at or ahead of
-- the group's position costs the group its lag (see includes/unfinished.lua). The stream's counters are set back as if the
-- entry had never been added: one entry fewer added, and the deleted id from before (0-1 for none: 0-0 cannot
-- be set). Nothing reads the deleted id of an entry no consumer was given (see includes/vanished.lua).
keyHere(f['k'])
local info = streamInfo()
redis.call('XDEL', stream, where)
if info then
  local last, deleted, added = info['last-generated-id'], info['max-deleted-entry-id'], info['entries-added']
  -- Redis before 7.0 reports neither (and no lag to keep).
  if last and deleted and type(added) == 'number' then
    if deleted == '0-0' then deleted = '0-1' end
    redis.pcall('XSETID', stream, last, 'ENTRIESADDED', added - 1, 'MAXDELETEDID', deleted)
  end
end
return canceled(where, f['a'], f['t'], f['k'], f['p'])
