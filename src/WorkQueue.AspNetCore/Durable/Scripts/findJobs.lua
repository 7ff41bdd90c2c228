-- KEYS: stream, delayed, scheduled. ARGV: group, phases (letters in the order L, Z, S, D, C: L the stream, newest
-- first; Z the delayed set, soonest first; S, D, C the ended lists, newest first), live kinds wanted (a subset of Q
-- queued, P running, S scheduled, R retrying), cursor phase ('' to start), cursor position (a stream id or a score),
-- cursor skip (members at that score already passed), limit, scan limit, error text ('' for any; lower case, matched
-- in the job's last error, ASCII case-insensitive). Reads only. Returns { jobs, next phase ('' when done), next
-- position, next skip, scanned } where each job is { job id, then its reply as status.lua gives it }. Ended records
-- are fetched with one HMGET of the ended hash per batch (and one MGET of record strings the previous version wrote,
-- for those not in the hash); at most scan limit entries are examined.
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/vanished"

local phases, live, limit, scanLimit, err = ARGV[2], ARGV[3], tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local found, scanned = {}, 0
-- An entry no consumer holds at or below the group's last delivered id was completed and waits for the trim (see
-- Trim and Settled): neither queued nor running. Read once per call.
local _, lastDelivered = groupState()
local function lastError(rec)
  if not rec then return nil end
  local last = string.match(rec, '^[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31([^\30]*)')
  if last and last ~= '' then return last end
  for e in string.gmatch(rec, '\30[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31([^\30]*)') do
    if e ~= '' then last = e end
  end
  if last == '' then return nil end
  return last
end
local function matches(rec)
  if err == '' then return true end
  local e = lastError(rec)
  return e ~= nil and string.find(string.lower(e), err, 1, true) ~= nil
end
local function wants(kind) return string.find(live, kind, 1, true) ~= nil end
local function batchSize()
  if err == '' then return math.min(256, limit - #found) end
  return math.min(256, scanLimit - scanned)
end
local started = ARGV[4] == ''
for p = 1, #phases do
  local phase = string.sub(phases, p, p)
  local pos, skip = nil, 0
  if not started and phase == ARGV[4] then
    started = true
    if ARGV[5] ~= '' then pos, skip = ARGV[5], tonumber(ARGV[6]) end
  end
  if not started and string.find('LZSDC', phase, 1, true) > string.find('LZSDC', ARGV[4], 1, true) then started = true end
  if started then
    local done = false
    while not done do
      if #found >= limit or scanned >= scanLimit then return { found, phase, pos or '', skip, scanned } end
      local n = batchSize()
      if phase == 'L' then
        local page = redis.call('XREVRANGE', KEYS[1], pos and ('(' .. pos) or '+', '-', 'COUNT', n)
        if #page == 0 then done = true end
        for _, e in ipairs(page) do
          scanned = scanned + 1
          pos = e[1]
          local job = e[1]
          for i = 1, #e[2], 2 do if e[2][i] == 'j' then job = e[2][i + 1] end end
          local held = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
          local kind = #held > 0 and 'P' or 'Q'
          if kind == 'Q' and lastDelivered and not before(lastDelivered, e[1]) then kind = 'settled' end
          if wants(kind) then
            local rec = recordOf(job)
            if matches(rec) then
              if kind == 'P' then
                found[#found + 1] = { job, 'P', rec or '', e[1], e[2], held[1][2], held[1][3], held[1][4] }
              else
                found[#found + 1] = { job, 'Q', rec or '', e[1], e[2] }
              end
            end
          end
          if #found >= limit or scanned >= scanLimit then break end
        end
      else
        local key, page
        if phase == 'Z' then
          page = redis.call('ZRANGEBYSCORE', KEYS[2], pos or '-inf', '+inf', 'WITHSCORES', 'LIMIT', skip, n)
        else
          page = redis.call('ZREVRANGEBYSCORE', endedName(phase), pos or '+inf', '-inf', 'WITHSCORES', 'LIMIT', skip, n)
        end
        if #page == 0 then done = true end
        local recs = {}
        if phase ~= 'Z' and #page > 0 then
          local jobs = {}
          for i = 1, #page, 2 do jobs[#jobs + 1] = page[i] end
          recs = redis.call('HMGET', endedRecords(), unpack(jobs))
          -- A record a version before the ended hash wrote is a string of its own (until it expires).
          local missing, at = {}, {}
          for k = 1, #jobs do
            if type(recs[k]) ~= 'string' then
              missing[#missing + 1] = recName(jobs[k])
              at[#at + 1] = k
            end
          end
          if #missing > 0 then
            local older = redis.call('MGET', unpack(missing))
            for k = 1, #at do recs[at[k]] = older[k] end
          end
        end
        for i = 1, #page, 2 do
          scanned = scanned + 1
          if page[i + 1] == pos then skip = skip + 1 else pos, skip = page[i + 1], 1 end
          if phase == 'Z' then
            local job, attempt, stamp = string.match(page[i], '^([^|]*)|([^|]*)|([^|]*)|')
            if job then
              local kind = redis.call('HEXISTS', KEYS[3], job) == 1 and 'S' or 'R'
              if wants(kind) then
                local rec = recordOf(job)
                if matches(rec) then found[#found + 1] = { job, kind, rec or '', page[i + 1], attempt, stamp } end
              end
            end
          else
            local rec = recs[(i + 1) / 2]
            -- An entry without a record (an old version's record expired before the trim reached its entry) is passed over.
            if type(rec) == 'string' and matches(rec) then found[#found + 1] = { page[i], 'E', rec } end
          end
          if #found >= limit or scanned >= scanLimit then break end
        end
      end
    end
  end
end
return { found, '', '', 0, scanned }
