-- acknowledge(releases, plains, acks): the round's acknowledgements. Reads three sections of ARGV: key releases
-- { key, job id, stream id } of completed entries that hold a key; plain completed entries (their job id their
-- stream id, attempt 1, no cancel, the queue's default type): { stream id, enqueued at, started at } when records are
-- kept, else { stream id } alone (nothing reads their times); other completed entries { stream id, job id ('' when
-- the same), attempt, enqueued at, started at, '1' when a cancel reached it (else ''), job type ('' for the queue's
-- default type, see JobTypeEnvelope.cs) }; ARGV[1] the group, ARGV[2] the consumer, ARGV[7]
-- the key retention, ARGV[8] the finished-job retention (0: no records); KEYS[1] the stream. Every element is read
-- before the XACK: one that cannot be read (a malformed id or number) is left out, its position (plain ones first,
-- then the others, from 1) listed in acknowledged.invalid; a release that cannot be read is skipped (the key is
-- stale once its job is gone, and the next enqueue takes it). The valid ones are acknowledged in one XACK, all or
-- none: acknowledged.applied tells which, as soon as it is known, so a fault after it still reports them applied.
-- Without records, a round of plain acknowledgements alone (the common case) is one XACK over the section: XACK reads
-- every id before it acknowledges any, so an unreadable one fails it whole, and then the elements are read one by
-- one as in any other round. (On a stream or group that does not exist XACK answers 0 without reading the ids: there
-- is then nothing to acknowledge, and the round's fetch meets the missing group.) Returns Redis's refusal of the
-- XACK, or false (acknowledged: what follows it is best effort). On Redis Cluster while the queue's slot migrates,
-- the keys written after the XACK (the records read and deleted, the ended hash and list, the pointers deleted, the
-- keys released) are read before it in one MGET, the one the records are read with anyway (see here.lua): one not on
-- this node fails the part before the XACK, nothing acknowledged (a round of plain acknowledgements without records
-- and without keys touches none and reads none).
--- @include "../now"
--- @include "../try"
--- @include "../keys"
--- @include "../records"
--- @include "../trim"
--- @include "../entryId"
--- @include "../here"

-- What the round's acknowledgement part did (read by round.lua, also after a fault).
local acknowledged = { applied = false, invalid = {} }

local function isJobId(s) return string.match(s, '^s?%d+%-%d+$') ~= nil end
local function isMs(s) return string.match(s, '^%d+$') ~= nil end
local function isMsOrNone(s) return s == '' or isMs(s) end

local function isRelease(key, job, at) return key ~= '' and not string.find(key, '%c') and isJobId(job) and isEntryId(at) end

-- Frees the keys of the acknowledged entries that hold one (or keeps them as done for the key retention).
local function releaseKeys(releases, retention)
  for k = 1, releases.count do
    local i = releases.first + 3 * (k - 1)
    local key, job, at = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    if isRelease(key, job, at) then releaseKey(key, job, at, retention) end
  end
end

-- Adds to names the keys releaseKeys touches.
local function releaseNames(releases, names)
  for k = 1, releases.count do
    local i = releases.first + 3 * (k - 1)
    local key = ARGV[i]
    if isRelease(key, ARGV[i + 1], ARGV[i + 2]) then names[#names + 1] = keyName(key) end
  end
  return names
end

local function acknowledge(releases, plains, acks)
  local plainAcks = plains.count
  if plainAcks + acks.count == 0 then return false end
  local retention, finished = tonumber(ARGV[7]), tonumber(ARGV[8])
  local width = finished > 0 and 3 or 1
  if width == 1 and acks.count == 0 then
    -- Nothing to record and nothing to delete: the ids alone, in one XACK that reads them all first (the released
    -- keys checked before it, see here.lua).
    if releases.count > 0 then
      local names = releaseNames(releases, {})
      if #names > 0 then here(unpack(names)) end
    end
    local _, err = try('XACK', KEYS[1], ARGV[1], unpack(ARGV, plains.first, plains.first + plainAcks - 1))
    if not err then
      acknowledged.applied = true
      releaseKeys(releases, retention)
      trimSettled()
      return false
    end
    -- Refused whole, nothing acknowledged: the pass below finds the ids it could not read, or meets the refusal again.
  end
  -- One pass over the acknowledgements reads each and gathers the valid ones' ids, job ids, ARGV indexes and, with
  -- records kept, their live record names: the plain ones first, then the others.
  local done, jobs, names, from, plain, n = {}, {}, {}, {}, {}, 0
  -- A plain acknowledgement's times are matched only when they differ from the last ones that read well: a round's
  -- repeat (the enqueues of one round share their stamp, many jobs start in the same ms), a match costs about 2,000 of
  -- Redis's instructions, and comparing two Lua strings (interned) a few. The id's match is inline: no Lua call per
  -- element. Callgrind, per plain acknowledgement with records: three matches each, about 7,800 instructions; one
  -- pattern over the section joined by commas (table.concat, string.rep, one string.find: each costs per character),
  -- about 5,800; this, about 3,000 (benchmarks/README.md). An id of 20 characters or more may be past 2^64 - 1 in a
  -- part, which XACK refuses (and with it every id of its call): only such an id is read by isEntryId.
  local enqRead, startedRead = false, false
  for k = 1, plainAcks do
    local i = plains.first + width * (k - 1)
    local id = ARGV[i]
    local readable = string.find(id, '^%d+%-%d+$') ~= nil and (#id < 20 or isEntryId(id))
    if readable and width == 3 then
      local enq, started = ARGV[i + 1], ARGV[i + 2]
      if enq ~= enqRead then
        if isMs(enq) then enqRead = enq else readable = false end
      end
      if started ~= startedRead then
        if isMsOrNone(started) then startedRead = started else readable = false end
      end
    end
    if readable then
      n = n + 1
      done[n], jobs[n], from[n], plain[n] = id, id, i, true
      if finished > 0 then names[n] = recNames .. id end
    else
      acknowledged.invalid[#acknowledged.invalid + 1] = k
    end
  end
  for k = 1, acks.count do
    local i = acks.first + 7 * (k - 1)
    local id, job = ARGV[i], ARGV[i + 1]
    if job == '' then job = id end
    local cancel = ARGV[i + 5]
    if isEntryId(id) and isJobId(job) and isMs(ARGV[i + 2]) and isMs(ARGV[i + 3]) and isMsOrNone(ARGV[i + 4]) and (cancel == '' or cancel == '1')
      and not string.find(ARGV[i + 6], '[%c|]') then
      n = n + 1
      done[n], jobs[n], from[n], plain[n] = id, job, i, false
      if finished > 0 then names[n] = recNames .. job end
    else
      acknowledged.invalid[#acknowledged.invalid + 1] = plainAcks + k
    end
  end
  if n == 0 then return false end
  -- Every key written after the XACK, read before it (see here.lua): with records kept, the round's live records (their
  -- values are the old records below), the ended hash and list; else the live records deleted; the pointers deleted;
  -- the keys released.
  local touched = {}
  if finished > 0 then
    for k = 1, n do touched[k] = names[k] end
    touched[n + 1] = endedRecords()
    touched[n + 2] = endedName('S')
  end
  for k = 1, n do
    if not plain[k] then
      local i, id, job = from[k], done[k], jobs[k]
      if finished == 0 and (job ~= id or ARGV[i + 2] ~= '1' or ARGV[i + 5] == '1') then touched[#touched + 1] = recName(job) end
      if job ~= id then touched[#touched + 1] = atName(job) end
    end
  end
  releaseNames(releases, touched)
  local old = {}
  if #touched > 0 then old = here(unpack(touched)) end
  local acked, err = try('XACK', KEYS[1], ARGV[1], unpack(done))
  if err then return err end
  acknowledged.applied = true
  releaseKeys(releases, retention)
  local stamp = string.format('%.0f', now)
  -- An entry that was no longer pending was settled before: by this very acknowledgement sent again after a
  -- lost reply, or elsewhere (reclaimed, then retried, dead-lettered, handed back, cancelled). Its job's fate
  -- was written then, and its live record and location may be a later attempt's: left alone when the job has
  -- ended or moved on. Only looked at when XACK counted fewer than it was given (rare).
  local stale = {}
  if type(acked) == 'number' and acked < n then
    for k = 1, n do
      local id, job = done[k], jobs[k]
      local at = redis.pcall('GET', atName(job))
      stale[k] = isEnded(recordOf(job)) or (type(at) == 'string' and at ~= id)
    end
  end
  if finished > 0 then
    -- The round's live records were read before the XACK (a retried, moved or cancel-asked job has one; most have
    -- none), then one HSET and one ZADD for all: a live record's history and cancel flag are merged in and its string
    -- deleted.
    local records, listed, merged, r = {}, {}, {}, 0
    -- The parts every record of the round shares, joined once.
    local ended, consumer = US .. stamp .. US, US .. ARGV[2] .. US
    for k = 1, n do
      local id, job, cancel, attempt, enq, started, jobType = done[k], jobs[k], '', '1'
      local i = from[k]
      if plain[k] then
        enq, started = ARGV[i + 1], ARGV[i + 2]
      else
        attempt, enq, started, cancel, jobType = ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]
      end
      if not stale[k] then
        local prior = old[k]
        if type(prior) == 'string' then
          if cancel == '' and cancelOf(prior) == '1' then cancel = '1' end
          merged[#merged + 1] = names[k]
        else
          prior = nil
        end
        local rec = 'S' .. US .. cancel .. ended .. attempt .. US .. enq .. consumer .. started .. US
        if jobType and jobType ~= '' then rec = rec .. US .. jobType end
        if prior then rec = rec .. historyOf(prior) end
        r = r + 2
        records[r - 1] = job
        records[r] = rec
        listed[r - 1] = stamp
        listed[r] = job
        if job ~= id then redis.pcall('DEL', atName(job)) end
      end
    end
    if r > 0 then
      redis.pcall('HSET', endedRecords(), unpack(records))
      redis.pcall('ZADD', endedName('S'), unpack(listed))
    end
    if #merged > 0 then redis.pcall('DEL', unpack(merged)) end
  else
    -- A plain acknowledgement (its job id its stream id, attempt 1, no cancel) has no live record to delete.
    for k = 1, n do
      local i = from[k]
      local id, job, cancel = ARGV[i], jobs[k], ARGV[i + 5]
      if not plain[k] and not stale[k] then
        if job ~= id or ARGV[i + 2] ~= '1' or cancel == '1' then redis.pcall('DEL', recName(job)) end
        if job ~= id then redis.pcall('DEL', atName(job)) end
      end
    end
  end
  trimSettled()
  return false
end
