-- KEYS: stream, epoch. ARGV: group, consumer, nudge channel, finished-job retention ms, then per entry: id, job id,
-- payload, attempt, enqueued at, idempotency key (empty: none), the epoch it was fetched under, 1 when this consumer
-- already found that Redis lost it (else 0). Hands entries this consumer still owns (or that Redis lost, see
-- vanished.lua) back as new entries at the stream's end (so any consumer reads them at once), same attempt, their
-- keys with them, and points their job ids to them; one whose job a cancel by id was asked for ends here as
-- cancelled instead (the cancel may have missed this process). The old entries are acknowledged and left to the trim
-- (see trim.lua). Returns how many were handed back or ended.
--- @include "includes/now"
--- @include "includes/vanished"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/trim"

local n = 0
for i = 5, #ARGV, 8 do
  local id = ARGV[i]
  local mine = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1, ARGV[2])
  local rec = recordOf(ARGV[i + 1])
  if (#mine == 1 or ARGV[i + 7] == '1' or vanished(id, KEYS[2], ARGV[i + 6])) and cancelOf(rec) == '1' and not isEnded(rec) then
    redis.call('XACK', KEYS[1], ARGV[1], id)
    releaseKey(ARGV[i + 5], ARGV[i + 1], nil, 0)
    local at = string.format('%.0f', now)
    endRecord(ARGV[i + 1], id, 'C', header('C', '1', at, ARGV[i + 3], ARGV[i + 4], ARGV[2], '', '') .. historyOf(rec), at, tonumber(ARGV[4]))
    n = n + 1
  elseif #mine == 1 or ARGV[i + 7] == '1' or vanished(id, KEYS[2], ARGV[i + 6]) then
    local key = ARGV[i + 5]
    local moved
    if key == '' then
      moved = redis.call('XADD', KEYS[1], '*', 'p', ARGV[i + 2], 'a', ARGV[i + 3], 't', ARGV[i + 4], 'j', ARGV[i + 1])
    else
      moved = redis.call('XADD', KEYS[1], '*', 'p', ARGV[i + 2], 'a', ARGV[i + 3], 't', ARGV[i + 4], 'j', ARGV[i + 1], 'k', key)
      moveKey(key, ARGV[i + 1], moved)
    end
    redis.pcall('SET', atName(ARGV[i + 1]), moved)
    redis.call('XACK', KEYS[1], ARGV[1], id)
    n = n + 1
  end
end
if n > 0 then
  trimSettled()
  redis.call('PUBLISH', ARGV[3], n)
end
return n
