-- KEYS: stream, dead, delayed, scheduled. ARGV: dead-letter id, nudge channel. Puts a dead letter back on the queue
-- as a new job (attempt 1, same job id) and removes it from the dead letters. A dead letter that had an idempotency
-- key keeps it and takes it back when it is free (or stale); when another job holds it meanwhile, the requeued job
-- runs without holding it (and takes it if it is free when the job next moves: a retry or a hand-back). Returns the
-- new stream id, or nil when there is no such dead letter.
--- @include "includes/now"
--- @include "includes/keys"
--- @include "includes/records"

local found = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1])
if #found == 0 then return false end
local f = {}
local raw = found[1][2]
for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
local job = f['j'] or ARGV[1]
local key = f['k']
local id
if key then
  id = redis.call('XADD', KEYS[1], '*', 'p', f['p'] or '', 't', string.format('%.0f', now), 'j', job, 'k', key)
  local holder, where = holderOf(keyName(key))
  if not holder or holder == job or not alive(holder, where, KEYS[3], KEYS[4]) then
    redis.call('SET', keyName(key), job .. '|' .. id)
  end
else
  id = redis.call('XADD', KEYS[1], '*', 'p', f['p'] or '', 't', string.format('%.0f', now), 'j', job)
end
redis.call('XDEL', KEYS[2], ARGV[1])
-- The job lives again: its record (history kept, no expiry) and where it is now.
redis.pcall('SET', atName(job), id)
redis.pcall('ZREM', endedName('D'), job)
local rec = recordOf(job)
redis.pcall('HDEL', endedRecords(), job)
if rec then redis.pcall('SET', recName(job), 'q' .. US .. (string.match(rec, '^[^\31]*\31[^\31]*(.*)$') or '')) end
redis.call('PUBLISH', ARGV[2], 1)
return id
