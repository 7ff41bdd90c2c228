-- KEYS: stream, delayed, scheduled. ARGV: group, phases (letters in the order L, Z, S, D, C: L the stream, newest
-- first; Z the delayed set, soonest first; S, D, C the ended lists, newest first), live kinds wanted (a subset of Q
-- queued, P running, S scheduled, R retrying), cursor phase ('' to start), cursor position ('' for the start of that
-- phase; else the last stream id read, or the last score read), cursor member (the job id read last at that score;
-- '' in the stream), limit, scan limit, error text ('' for any; lower case, matched in the job's last error, ASCII
-- case-insensitive), byte budget, job type text ('' for any; lower case, matched in the job type's name, ASCII
-- case-insensitive), the queue's default job type's name, lower case ('' for none: what a bare payload's type is
-- called, see JobTypeEnvelope.cs). Reads only. Returns { jobs, next phase ('' when done), next position, next member,
-- scanned, bytes read } where each job is { job id, then its reply as status.lua gives it, but a stream entry's
-- fields without its payload (p): in its place y, the job type's name, when the payload names one }.
-- One call is bounded: it examines at most min(scan limit, 256) entries, and stops once it has read byte budget
-- bytes (entries, members and records as Redis holds them; the entry that passes the budget is the last), so a
-- payload is read one entry at a time and never returned. A cursor is a seek, not an offset: the stream is read
-- before the last id ('(' id); a sorted set from the first member after (score, job), found by ZRANK of the member
-- itself when it is still there with that score (a scheduled job's via the scheduled hash), else by bisection of the
-- ranks holding that score (ZCOUNT, then one ZRANGE of one member per step). Members of one score are in byte order
-- of the member; a delayed member starts with 'job|', and no job id holds '|', so comparing those prefixes orders
-- them. Ended records are fetched with one HMGET of the ended hash per batch of 32 (and one MGET of record strings
-- the previous version wrote, for those not in the hash).
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/vanished"

local stream, delayed, scheduled = KEYS[1], KEYS[2], KEYS[3]
local group, phases, live, cursorPhase, cursorPosition, cursorMember = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local limit, scanLimit, err, byteLimit = tonumber(ARGV[7]), math.min(tonumber(ARGV[8]), 256), ARGV[9], tonumber(ARGV[10])
local typeText, defaultType = ARGV[11] or '', ARGV[12] or ''
local found, scanned, bytes = {}, 0, 0
-- An entry no consumer holds at or below the group's last delivered id was completed and waits for the trim (see
-- Trim and Settled): neither queued nor running. Read once per call.
local _, lastDelivered = groupState()
local function lastError(rec)
  if not rec then return nil end
  local last = string.match(rec, '^[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31([^\31\30]*)')
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
-- Whether a job of type t ('' for the default one) is searched for.
local function typeWanted(t)
  if typeText == '' then return true end
  if t == '' then t = defaultType else t = string.lower(t) end
  return string.find(t, typeText, 1, true) ~= nil
end
-- The job type's name an ended record holds after its error ('' for the default one).
local function recordType(rec)
  return string.match(rec, '^[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31]*\31[^\31\30]*\31([^\31\30]*)') or ''
end
local function wants(kind) return string.find(live, kind, 1, true) ~= nil end
local function record(job)
  local rec = recordOf(job)
  if rec then bytes = bytes + #rec end
  return rec
end
-- Whether this call must stop: the page is full, or the call read its entries or bytes (after at least one entry,
-- so every call moves on).
local function spent()
  return #found >= limit or scanned >= scanLimit or (scanned > 0 and bytes >= byteLimit)
end
-- Byte order, as Redis orders members of one score (Lua's own < follows the server's locale).
local function less(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
-- A delayed member's job id and the prefix ('job|') that orders it among members of its score.
local function jobOf(member)
  local bar = string.find(member, '|', 1, true)
  if not bar then return member, member end
  return string.sub(member, 1, bar - 1), string.sub(member, 1, bar)
end
-- The rank (ZRANGE's, or ZREVRANGE's with rev) of the first member past (score, job) in that order.
local function seek(key, rev, score, job)
  local member = job
  if not rev then member = redis.call('HGET', scheduled, job) end
  if member then
    local s = redis.call('ZSCORE', key, member)
    if s and tonumber(s) == tonumber(score) then
      if rev then return redis.call('ZREVRANK', key, member) + 1 end
      return redis.call('ZRANK', key, member) + 1
    end
  end
  local lo, hi
  if rev then
    lo, hi = redis.call('ZCOUNT', key, '(' .. score, '+inf'), redis.call('ZCOUNT', key, score, '+inf')
  else
    lo, hi = redis.call('ZCOUNT', key, '-inf', '(' .. score), redis.call('ZCOUNT', key, '-inf', score)
  end
  local mark = job .. '|'
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local past
    if rev then
      local m = redis.call('ZREVRANGE', key, mid, mid)[1]
      bytes = bytes + #m
      past = less(m, job)
    else
      local m = redis.call('ZRANGE', key, mid, mid)[1]
      bytes = bytes + #m
      local _, prefix = jobOf(m)
      past = less(mark, prefix)
    end
    if past then hi = mid else lo = mid + 1 end
  end
  return lo
end

local started = cursorPhase == ''
for p = 1, #phases do
  local phase = string.sub(phases, p, p)
  local pos, at = '', ''
  if not started and phase == cursorPhase then
    started = true
    pos, at = cursorPosition, cursorMember
  end
  if not started and string.find('LZSDC', phase, 1, true) > string.find('LZSDC', cursorPhase, 1, true) then started = true end
  if started then
    if phase == 'L' then
      while true do
        if spent() then return { found, phase, pos, '', scanned, bytes } end
        -- One entry per read: its payload is the one field this cannot know the size of before reading it.
        local page
        if pos == '' then page = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
        elseif pos == '0-0' then page = {}
        else page = redis.call('XREVRANGE', stream, '(' .. pos, '-', 'COUNT', 1) end
        if #page == 0 then break end
        local e = page[1]
        scanned = scanned + 1
        pos = e[1]
        local job, fields, jobType = e[1], {}, ''
        for i = 1, #e[2], 2 do
          local f, v = e[2][i], e[2][i + 1]
          bytes = bytes + #v
          if f == 'j' then job = v end
          if f ~= 'p' then
            fields[#fields + 1] = f
            fields[#fields + 1] = v
          else
            jobType = typeOf(v)
          end
        end
        if jobType ~= '' then
          fields[#fields + 1] = 'y'
          fields[#fields + 1] = jobType
        end
        local held = redis.call('XPENDING', stream, group, e[1], e[1], 1)
        local kind = #held > 0 and 'P' or 'Q'
        if kind == 'Q' and lastDelivered and not before(lastDelivered, e[1]) then kind = 'settled' end
        if wants(kind) and typeWanted(jobType) then
          local rec = record(job)
          if matches(rec) then
            if kind == 'P' then
              found[#found + 1] = { job, 'P', rec or '', e[1], fields, held[1][2], held[1][3], held[1][4] }
            else
              found[#found + 1] = { job, 'Q', rec or '', e[1], fields }
            end
          end
        end
      end
    else
      local rev = phase ~= 'Z'
      local key = rev and endedName(phase) or delayed
      local rank = 0
      if pos ~= '' then rank = seek(key, rev, pos, at) end
      while true do
        if spent() then return { found, phase, pos, at, scanned, bytes } end
        if phase == 'Z' then
          -- One member per read, for the same reason as the stream's entries: a member holds its payload.
          local page = redis.call('ZRANGE', delayed, rank, rank, 'WITHSCORES')
          if #page == 0 then break end
          rank = rank + 1
          scanned = scanned + 1
          bytes = bytes + #page[1]
          local job = jobOf(page[1])
          pos, at = page[2], job
          local _, attempt, stamp, tail = string.match(page[1], '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
          if attempt then
            local kind = redis.call('HEXISTS', scheduled, job) == 1 and 'S' or 'R'
            local _, payload = splitKey(tail)
            local jobType = typeOf(payload)
            if wants(kind) and typeWanted(jobType) then
              local rec = record(job)
              if matches(rec) then found[#found + 1] = { job, kind, rec or '', page[2], attempt, stamp, jobType } end
            end
          end
        else
          local n = math.min(32, scanLimit - scanned, limit - #found)
          if err ~= '' then n = math.min(32, scanLimit - scanned) end
          local page = redis.call('ZREVRANGE', key, rank, rank + n - 1, 'WITHSCORES')
          if #page == 0 then break end
          rank = rank + #page / 2
          local jobs = {}
          for i = 1, #page, 2 do jobs[#jobs + 1] = page[i] end
          local recs = redis.call('HMGET', endedRecords(), unpack(jobs))
          -- A record a version before the ended hash wrote is a string of its own (until it expires).
          local missing, where = {}, {}
          for k = 1, #jobs do
            if type(recs[k]) ~= 'string' then
              missing[#missing + 1] = recName(jobs[k])
              where[#where + 1] = k
            end
          end
          if #missing > 0 then
            local older = redis.call('MGET', unpack(missing))
            for k = 1, #where do recs[where[k]] = older[k] end
          end
          for k = 1, #jobs do
            scanned = scanned + 1
            pos, at = page[2 * k], jobs[k]
            local rec = recs[k]
            -- An entry without a record (an old version's record expired before the trim reached its entry) is passed over.
            if type(rec) == 'string' then
              bytes = bytes + #rec
              if matches(rec) and typeWanted(recordType(rec)) then found[#found + 1] = { jobs[k], 'E', rec } end
            end
            if #found >= limit then break end
          end
        end
      end
    end
  end
end
return { found, '', '', '', scanned, bytes }
