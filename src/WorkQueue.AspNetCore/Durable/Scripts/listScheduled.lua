-- KEYS: delayed, scheduled. ARGV: count, scan limit. Lists up to count scheduled jobs (not retries), soonest first,
-- reading at most scan limit members of the delayed set. Returns { id, due (unix ms), scheduled at (unix ms), payload }... .

local delayed, scheduled = KEYS[1], KEYS[2]
local count, scanLimit = tonumber(ARGV[1]), tonumber(ARGV[2])

local function payloadOf(tail)
  local _, payload = string.match(tail, '^\1([^\1]*)\1(.*)$')
  return payload or tail
end
local found = {}
local start = 0
while #found < count and start < scanLimit do
  local page = redis.call('ZRANGE', delayed, start, start + 255, 'WITHSCORES')
  if #page == 0 then break end
  for i = 1, #page, 2 do
    local job, attempt, stamp, payload = string.match(page[i], '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
    if job and redis.call('HEXISTS', scheduled, job) == 1 then
      found[#found + 1] = { job, page[i + 1], stamp, payloadOf(payload) }
      if #found >= count then break end
    end
  end
  start = start + 256
end
return found
