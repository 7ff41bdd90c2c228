-- KEYS: stream, epoch. ARGV: group, consumer, nudge channel, finished-job retention ms, then per entry: id, job id,
-- payload, attempt, enqueued at, idempotency key (empty: none), the epoch it was fetched under, 1 when this consumer
-- already found that Redis lost it (else 0). Hands entries this consumer still owns (or that Redis lost, see
-- vanished.lua) back as new entries at the stream's end (so any consumer reads them at once), same attempt, their
-- keys with them, and points their job ids to them; one whose job a cancel by id was asked for ends here as
-- cancelled instead (the cancel may have missed this process). The old entries are acknowledged and left to the trim
-- (see trim.lua). Returns how many were handed back or ended; one no entry can have the id of (see entryId.lua) is
-- left out. On Redis Cluster while the queue's slot migrates, it fails before its first write when a key an entry's
-- hand-back or cancel touches (its job's record and pointer, its idempotency key, the ended hash and list) is not on
-- this node (see here.lua).
--- @include "includes/now"
--- @include "includes/entryId"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"
--- @include "includes/here"

local stream, epochKey = KEYS[1], KEYS[2]
local group, consumer, nudgeChannel, retention = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
-- Then one entry per stride values of ARGV, from ARGV[first].
local first, stride = 5, 8

-- One entry, from ARGV[i]: 1 when handed back or ended, 0 when another consumer owns it now. An id no entry can have
-- is nobody's: left out before any write, so it cannot fail the call after the entries before it were handed back.
local function handBack(i)
  local id, job, payload, attempt, enqueuedAt, key = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  local epoch, foundVanished = ARGV[i + 6], ARGV[i + 7] == '1'
  if not isEntryId(id) then return 0 end
  local mine = redis.call('XPENDING', stream, group, id, id, 1, consumer)
  local rec = recordOf(job)
  if (#mine == 1 or foundVanished or vanished(id, epochKey, epoch)) and cancelOf(rec) == '1' and not isEnded(rec) then
    redis.call('XACK', stream, group, id)
    releaseKey(key, job, nil, 0)
    local at = string.format('%.0f', now)
    endRecord(job, id, 'C', header('C', '1', at, attempt, enqueuedAt, consumer, '', '', typeOf(payload)) .. historyOf(rec), at, tonumber(retention))
    return 1
  elseif #mine == 1 or foundVanished or vanished(id, epochKey, epoch) then
    local moved
    if key == '' then
      moved = redis.call('XADD', stream, '*', 'p', payload, 'a', attempt, 't', enqueuedAt, 'j', job)
    else
      moved = redis.call('XADD', stream, '*', 'p', payload, 'a', attempt, 't', enqueuedAt, 'j', job, 'k', key)
      moveKey(key, job, moved)
    end
    redis.pcall('SET', atName(job), moved)
    redis.call('XACK', stream, group, id)
    return 1
  end
  return 0
end

-- Every entry's keys are checked before the first entry is handed back: an entry's write cannot fail the call after
-- the entries before it were handed back.
local touched = { endedRecords(), endedName('C') }
for i = first, #ARGV, stride do
  if isEntryId(ARGV[i]) then
    local job, key = ARGV[i + 1], ARGV[i + 5]
    touched[#touched + 1] = recName(job)
    touched[#touched + 1] = atName(job)
    if key ~= '' then touched[#touched + 1] = keyName(key) end
  end
end
if #touched > 2 then here(unpack(touched)) end

local n = 0
for i = first, #ARGV, stride do n = n + handBack(i) end
if n > 0 then
  trimSettled()
  redis.call('PUBLISH', nudgeChannel, n)
end
return n
