-- trimEnded(): trims the ended-job lists and sweeps the ended hash (see DurableScripts.cs and docs/durable.md, In Redis). Reads
-- ARGV[8] the finished-job retention (ms) and ARGV[9] the finished-job count cap; KEYS[1] the stream (the lists'
-- names are built from it). Returns the ms until the lists next need a trim: 0 when it dropped members (there may
-- be more), else until the oldest member passes the retention, -1 when every list is empty.
--- @include "../now"
--- @include "../records"

local function trimEnded()
  local finished, maxFinished = tonumber(ARGV[8]), tonumber(ARGV[9])
  local trimAgain = -1
  -- Both limits drop a list's oldest members (a prefix by rank), their records with them: those ended before the
  -- retention, or beyond the cap, whichever is more; at most 65,536 a list per trim (the next trim goes on).
  -- The oldest member tells when the next is needed: once it passes the retention, or at once after a trim
  -- that dropped some (there may be more); with every list empty, only once something ends.
  local records = endedRecords()
  local cutoff = string.format('%.0f', now - finished)
  for _, state in ipairs({ 'S', 'D', 'C' }) do
    local list = endedName(state)
    local card = redis.pcall('ZCARD', list)
    if type(card) == 'number' and card > 0 then
      local first = redis.pcall('ZRANGE', list, 0, 0, 'WITHSCORES')
      local oldestAt = type(first) == 'table' and not first.err and tonumber(first[2]) or nil
      local expired = 0
      if not oldestAt or oldestAt < tonumber(cutoff) then
        expired = redis.pcall('ZCOUNT', list, '-inf', '(' .. cutoff)
        if type(expired) ~= 'number' then expired = 0 end
      end
      local over = math.min(65536, math.max(card - maxFinished, expired))
      if over == 0 and oldestAt then
        local left = math.max(0, oldestAt + finished - now)
        if trimAgain < 0 or left < trimAgain then trimAgain = left end
      else
        trimAgain = 0
      end
      if over > 0 then
        local oldest = redis.pcall('ZRANGE', list, 0, over - 1)
        if type(oldest) == 'table' and not oldest.err then
          for i = 1, #oldest, 512 do
            redis.pcall('HDEL', records, unpack(oldest, i, math.min(i + 511, #oldest)))
          end
        end
        redis.pcall('ZREMRANGEBYRANK', list, 0, over - 1)
      end
    end
  end
  -- A record whose list member is gone some other way (a version before the ended hash trimmed the list during
  -- a rolling upgrade, a write refused between the HSET and the ZADD) is found by a sweep of the hash, 128 fields
  -- a trim, and dropped once it ended before the retention, as its member would have been.
  local sweep = string.sub(KEYS[1], 1, -7) .. 'ended-sweep'
  local cursor = redis.pcall('GET', sweep)
  if type(cursor) ~= 'string' then cursor = '0' end
  local scan = redis.pcall('HSCAN', records, cursor, 'COUNT', 128)
  if type(scan) == 'table' and not scan.err then
    local stale = {}
    local fields = scan[2]
    for i = 1, #fields, 2 do
      local ended = tonumber(string.match(fields[i + 1], '^[^\31]*\31[^\31]*\31(%d+)'))
      if ended and ended < tonumber(cutoff) then stale[#stale + 1] = fields[i] end
    end
    if #stale > 0 then redis.pcall('HDEL', records, unpack(stale)) end
    if scan[1] ~= cursor then
      if scan[1] == '0' then redis.pcall('DEL', sweep) else redis.pcall('SET', sweep, scan[1]) end
    end
  end
  return trimAgain
end
