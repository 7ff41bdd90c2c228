-- KEYS: stream, dead, epoch. ARGV: group, consumer, id, job id, payload, attempt, enqueued at, error, reason,
-- idempotency key (empty: none), the epoch the entry was fetched under, 1 when this consumer already found that
-- Redis lost it (else 0), started at, finished-job retention ms, '1' when a cancel reached it (else ''). Moves an
-- entry this consumer still owns (or that Redis lost, see vanished.lua) to the dead-letter stream (the key recorded
-- there), frees its key, so the work can be submitted again, and ends the job's record; the entry is acknowledged
-- and left to the trim (see trim.lua). Returns 1, or 0 when another consumer owns it now.
--- @include "includes/now"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"

local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
if #mine == 0 and ARGV[12] ~= '1' and not vanished(ARGV[3], KEYS[3], ARGV[11]) then return 0 end
if ARGV[10] == '' then
  redis.call('XADD', KEYS[2], '*', 'j', ARGV[4], 'p', ARGV[5], 'a', ARGV[6], 't', ARGV[7], 'e', ARGV[8], 'r', ARGV[9],
    'f', string.format('%.0f', now), 'c', ARGV[2])
else
  redis.call('XADD', KEYS[2], '*', 'j', ARGV[4], 'p', ARGV[5], 'a', ARGV[6], 't', ARGV[7], 'e', ARGV[8], 'r', ARGV[9],
    'f', string.format('%.0f', now), 'c', ARGV[2], 'k', ARGV[10])
end
ackAndTrim(ARGV[3])
releaseKey(ARGV[10], ARGV[4], nil, 0)
local rec = recordOf(ARGV[4])
local cancel = ARGV[15]
if cancel == '' then cancel = cancelOf(rec) end
local at = string.format('%.0f', now)
endRecord(ARGV[4], ARGV[3], 'D', header('D', cancel, at, ARGV[6], ARGV[7], ARGV[2], ARGV[13], ARGV[8]) .. historyOf(rec), at, tonumber(ARGV[14]))
return 1
