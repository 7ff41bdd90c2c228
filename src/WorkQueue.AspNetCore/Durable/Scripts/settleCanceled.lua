-- KEYS: stream, epoch. ARGV: group, consumer, id, job id, attempt, enqueued at, started at ('' when it never
-- started), idempotency key (empty: none), the epoch it was fetched under, 1 when this consumer already found that
-- Redis lost it (else 0), finished-job retention ms. Ends an entry this consumer still owns as cancelled (it
-- honoured a cancel by id, or the cancel came before it started): acknowledged and left to the trim (see trim.lua),
-- its key freed, its record ended. Returns 1, or 0 when another consumer owns it now.
--- @include "includes/now"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"

local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
if #mine == 0 and ARGV[10] ~= '1' and not vanished(ARGV[3], KEYS[2], ARGV[9]) then return 0 end
ackAndTrim(ARGV[3])
releaseKey(ARGV[8], ARGV[4], nil, 0)
local rec = recordOf(ARGV[4])
local at = string.format('%.0f', now)
endRecord(ARGV[4], ARGV[3], 'C', header('C', '1', at, ARGV[5], ARGV[6], ARGV[2], ARGV[7], '') .. historyOf(rec), at, tonumber(ARGV[11]))
return 1
