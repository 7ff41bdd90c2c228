-- KEYS: stream, dead, epoch. ARGV: group, consumer, min idle ms, cursor, count, max deliveries, finished-job
-- retention ms. Claims entries whose consumer has not refreshed them for min idle (XAUTOCLAIM raises their delivery
-- count; the entry, and so its idempotency key, stays where it is); an entry delivered more than max deliveries
-- times is dead-lettered as poison in the same step, and its key freed; one whose job was asked to cancel (see
-- cancel.lua) while its consumer was dying ends as cancelled. Either is acknowledged and left to the trim (see
-- trim.lua). Returns { next cursor, { id, fields, deliveries }..., 1 when it ended any (else 0), the epoch (see
-- epoch.lua) }. With count 0 (no room to take anything now) it only looks: returns { cursor, {}, 1, '' } when some
-- entry has been idle for min idle, else { cursor, {}, 0, '' }, so the caller can keep its next free slot for it.
-- Max deliveries and retention are read, and the dead-letter stream's type checked, before XAUTOCLAIM claims: an
-- error after it would leave entries claimed (a delivery counted) or dead-lettered with nobody told. For the same
-- reason, on Redis Cluster while the queue's slot migrates, it fails before XAUTOCLAIM claims when a key the ending of
-- an entry it would claim touches (its job's record and pointer, its idempotency key, the ended hash and lists) is not
-- on this node (see here.lua): the entries are the idle ones XPENDING lists from the cursor, the same scan; only one
-- it did not list (XAUTOCLAIM passes over deleted entries without counting them) is checked after the claim.
--- @include "includes/now"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/epoch"
--- @include "includes/groupState"
--- @include "includes/trim"
--- @include "includes/here"

local stream, deadLetters, epochKey = KEYS[1], KEYS[2], KEYS[3]
local group, consumer, minIdle, cursor, count = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local maxDeliveries, retention = tonumber(ARGV[6]), tonumber(ARGV[7])

if tonumber(count) == 0 then
  local idle = redis.call('XPENDING', stream, group, 'IDLE', minIdle, '-', '+', 1)
  return { cursor, {}, #idle, '' }
end
if not maxDeliveries or not retention then return redis.error_reply('ERR reclaim: max deliveries and retention must be numbers') end
-- Redis's own WRONGTYPE error when the dead letters' key holds something else (0 when there is none yet).
redis.call('XLEN', deadLetters)
-- The keys an ending touches, for entries it may claim (reclaims are rare: one XRANGE per idle entry).
local checked = {}
local function touched(names, id, f)
  local job = f['j'] or id
  names[#names + 1] = recName(job)
  names[#names + 1] = atName(job)
  if f['k'] and f['k'] ~= '' then names[#names + 1] = keyName(f['k']) end
end
local idle = redis.call('XPENDING', stream, group, 'IDLE', minIdle, cursor, '+', count)
if #idle > 0 then
  local names = { endedRecords(), endedName('D'), endedName('C') }
  for _, p in ipairs(idle) do
    local id = p[1]
    checked[id] = true
    local found = redis.call('XRANGE', stream, id, id)
    if #found > 0 then
      local f = {}
      local raw = found[1][2]
      for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
      touched(names, id, f)
    end
  end
  here(unpack(names))
end
local claimed = redis.call('XAUTOCLAIM', stream, group, consumer, minIdle, cursor, 'COUNT', count)
local keep, settledAny = {}, false
for _, entry in ipairs(claimed[2]) do
  local id = entry[1]
  if not checked[id] then
    local f, names = {}, { endedRecords(), endedName('D'), endedName('C') }
    local raw = entry[2]
    for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
    touched(names, id, f)
    here(unpack(names))
  end
  local info = redis.call('XPENDING', stream, group, id, id, 1)
  local deliveries = info[1][4]
  local f = {}
  local raw = entry[2]
  for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
  -- One GET per reclaimed entry (reclaims are rare): a job asked to cancel while its consumer was dying ends here.
  local asked = recordOf(f['j'] or id)
  if cancelOf(asked) == '1' and not isEnded(asked) then
    redis.call('XACK', stream, group, id)
    settledAny = true
    releaseKey(f['k'], f['j'] or id, nil, 0)
    local at = string.format('%.0f', now)
    endRecord(f['j'] or id, id, 'C', header('C', '1', at, f['a'] or '1', f['t'] or '0', consumer, '', '', typeOf(f['p'])) .. historyOf(asked), at, retention)
  elseif deliveries > maxDeliveries then
    local dead = { 'j', f['j'] or id, 'p', f['p'] or '', 'a', f['a'] or '1', 't', f['t'] or '0',
      'e', 'Delivered ' .. deliveries .. ' times without completing (its consumers stopped or crashed each time): treated as poison.',
      'r', 'poison', 'f', string.format('%.0f', now), 'c', consumer }
    if f['k'] then
      dead[#dead + 1] = 'k'
      dead[#dead + 1] = f['k']
    end
    redis.call('XADD', deadLetters, '*', unpack(dead))
    redis.call('XACK', stream, group, id)
    settledAny = true
    releaseKey(f['k'], f['j'] or id, nil, 0)
    local rec = recordOf(f['j'] or id)
    local at = string.format('%.0f', now)
    endRecord(f['j'] or id, id, 'D', header('D', cancelOf(rec), at, f['a'] or '1', f['t'] or '0', consumer, '', dead[10], typeOf(f['p'])) .. historyOf(rec), at, retention)
  else
    keep[#keep + 1] = { id, entry[2], deliveries }
  end
end
if claimed[3] then
  for _, id in ipairs(claimed[3]) do redis.call('XACK', stream, group, id) end
end
if settledAny then trimSettled() end
return { claimed[1], keep, settledAny and 1 or 0, epochOf(epochKey, consumer) }
