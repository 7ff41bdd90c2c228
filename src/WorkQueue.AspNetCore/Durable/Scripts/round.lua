-- KEYS: stream, delayed, scheduled, recurring, ids, epoch. ARGV: group, consumer, capacity, nudge channel, fetch
-- count (0: no fetch), promote limit, enqueue count n (-n when every payload is plain: due now, no key), keyed
-- acknowledgement count m (m|p with p plain acknowledgements), key retention ms, finished-job retention ms (0: no
-- records), finished-job count cap, 1 to trim the ended-job lists now (else 0), the nudge tag (the enqueuing
-- consumer and its round number, {consumer}|{round}), then n payloads, their n specs and their n idempotency keys
-- (empty: none; neither is sent with -n), m triples { key, job id, stream id } of completed entries that hold a key,
-- then three per plain completed entry (its job id its stream id, attempt 1, no cancel) { stream id, enqueued at,
-- started at }, then six per other completed entry { stream id, job id ('' when the same), attempt, enqueued at,
-- started at, '1' when a cancel reached it (else '') }. One turn of the store's loop in one call (one round trip,
-- and under appendfsync always one fsync where three calls waited for three), in three parts that each fail on their
-- own:
-- * enqueues: adds as many payloads as the queue has room for (unfinished = the stream's unsettled entries, see
--   unfinished.lua, + delayed retries and scheduled jobs), in order, answering # for each one there is no room for,
--   and stops at the first one Redis refuses. A spec says how: empty, now; d{ms}, after a delay on Redis's clock;
--   a{unix ms}, at a time (either, when due already, now); r{unix ms}|{schedule}|{recurring id}, a recurring job's
--   occurrence on the offering instance's schedule, added only if no occurrence of that job at or after that time
--   was added before (by any instance: the check and the add are this one script), else answered with an empty id;
--   refused, whatever the room, with -{generation} when the job was removed at runtime, ^{generation}|{schedule}
--   when the job's schedule is another one now (see registerRecurring.lua), ~ when it is paused in the store; an
--   offer of a job with no schedule in the store (Redis lost its data) writes its own as registered in code,
--   generation 1. A job that is not due yet goes to the delayed set as a first attempt under a new job id s{ms}-{n},
--   recorded in the scheduled hash so that it can be cancelled or listed. A payload with an idempotency key held by
--   a job that is still there (see alive) is not added, even in a full queue, and is answered !{that job's id};
--   otherwise the key is taken for the new job (a stale key is overwritten). Keys are checked in order, so two
--   enqueues of one key in a round add one job;
-- * acknowledgements: acknowledges the completed entries, frees the keys that still name them (or keeps them as done
--   for the retention), records the successes: one variadic MGET of their record strings (a read: only a retried,
--   moved or cancel-asked job has one, merged in and then deleted), one variadic HSET of their records in the ended
--   hash and one variadic ZADD per call (an entry no longer pending, its acknowledgement sent again after a lost
--   reply or its job settled elsewhere, is not recorded again once its job ended or moved on), and trims the stream
--   up to the oldest entry still needed (see trim.lua), so memory does not grow with history; when asked, trims the
--   ended-job lists (each list's oldest members, ended before the retention or beyond the count cap, their records
--   with them) and sweeps 128 fields of the ended hash for records older than the retention that no list holds (see
--   the remarks);
-- * the fetch, when asked: moves due retries and scheduled jobs to the stream (their keys with them) and answers the
--   epoch the entries are read under (see epoch.lua). The read itself (XREADGROUP) is the next command of the same
--   MULTI/EXEC (see RedisStreamStore.Round.cs): as atomic as reading here, and its reply goes to the client as Redis
--   wrote it, where a read in the script was converted to Lua tables and back (about 2 us an entry, more than the
--   read itself).
-- Returns { new ids, enqueue error or nil, acknowledgement error or nil, ms until the next delayed job is due or -1,
-- ms until the ended-job lists next need a trim (after one: 0 when it dropped members, else until the oldest member
-- passes the retention, -1 when every list is empty; -1 without one), promotion error or nil, epoch ('' without a
-- fetch), Redis's time (Unix ms) }. Any enqueue publishes a nudge, {added}|{nudge tag}, so consumers asleep until a
-- later due time look again.
--- @include "includes/now"
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/epoch"
--- @include "includes/groupState"
--- @include "includes/unfinished"
--- @include "includes/trim"

local function try(...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply.err then return nil, reply.err end
  return reply
end
local count, retention = tonumber(ARGV[7]), tonumber(ARGV[9])
local finished, maxFinished = tonumber(ARGV[10]), tonumber(ARGV[11])
-- A negative count: the payloads come alone (all due now, none keyed), without their empty specs and keys.
local plainEnqueues = count < 0
if plainEnqueues then count = -count end
local keyed, plainAcks = tonumber(ARGV[8]), 0
if not keyed then
  local m, p = string.match(ARGV[8], '^(%d+)|(%d+)$')
  keyed, plainAcks = tonumber(m), tonumber(p)
end
local payloads, specs, keys = 13, 13 + count, 13 + 2 * count
local releases = 13 + 3 * count
if plainEnqueues then releases = 13 + count end
local plains = releases + 3 * keyed
local acks = plains + 3 * plainAcks
local ids, enqueueError = {}, false
if count > 0 then
  local room = tonumber(ARGV[3]) - unfinished() - redis.call('ZCARD', KEYS[2])
  local stamp = string.format('%.0f', now)
  local added = 0
  if plainEnqueues then
    for j = 1, count do
      if added >= room then
        ids[j] = '#'
      else
        local id = redis.pcall('XADD', KEYS[1], '*', 'p', ARGV[payloads + j], 't', stamp)
        if type(id) == 'table' then
          enqueueError = id.err
          break
        end
        ids[j] = id
        added = added + 1
      end
    end
  else
    for j = 1, count do
      local payload, spec, key = ARGV[payloads + j], ARGV[specs + j], ARGV[keys + j]
      local name, holder
      if key ~= '' then
        name = keyName(key)
        local job, where = holderOf(name)
        if job and alive(job, where, KEYS[2], KEYS[3]) then holder = job end
      end
      local id, err, at
      local fresh = false
      local kind = string.sub(spec, 1, 1)
      if holder then
        id = '!' .. holder
      elseif kind == 'r' then
        -- Refusals and a claim made elsewhere are answered before the room is looked at: only an occurrence
        -- that would be added needs room, and the others are told what became of theirs.
        local fire, schedule, recurring = string.match(spec, '^r(%d+)|([^|]*)|(.*)$')
        local record = redis.call('HGET', KEYS[4], '@' .. recurring)
        local generation, state, current
        if record then
          generation, state, current = string.match(record, '^(%d+)|(%a)|([^|]*)|')
        else
          -- Lost with Redis's data (or its registration's write failed): the first offer makes its schedule the
          -- job's, as a start would, so that one schedule at a time claims again (instances that disagreed about
          -- it before the loss would otherwise all run theirs).
          redis.pcall('HSET', KEYS[4], '@' .. recurring, '1|c|' .. schedule .. '|' .. schedule)
        end
        local last = redis.call('HGET', KEYS[4], recurring)
        if state == 'x' then
          -- Removed at runtime (by any instance): the offering instance drops the job.
          id = '-' .. generation
        elseif current and current ~= schedule then
          -- Another schedule is the job's now (a runtime change, or a deploy): the offering one is stale.
          id = '^' .. generation .. '|' .. current
        elseif redis.call('HGET', KEYS[4], '~' .. recurring) == '1' then
          -- Paused in the store (by any instance): nothing is enqueued or claimed.
          id = '~'
        elseif last and tonumber(last) >= tonumber(fire) then
          id = ''
        elseif added >= room then
          id = '#'
        else
          -- Added before it is recorded: a refused record can at worst let another instance add it again (at
          -- least once), never lose it.
          id, err = try('XADD', KEYS[1], '*', 'p', payload, 't', stamp)
          if id then
            redis.pcall('HSET', KEYS[4], recurring, fire)
            fresh = true
          end
        end
      elseif added >= room then
        id = '#'
      else
        local due = now
        if kind == 'd' then due = now + tonumber(string.sub(spec, 2)) elseif kind == 'a' then due = tonumber(string.sub(spec, 2)) end
        if due > now then
          local n, refused = try('INCR', KEYS[5])
          if n then
            id = 's' .. stamp .. '-' .. n
            local score = string.format('%.0f', due)
            local member = id .. '|1|' .. stamp .. '|' .. keyTag(key) .. payload
            local _, zerr = try('ZADD', KEYS[2], score, member)
            err = zerr
            if not err then
              redis.pcall('HSET', KEYS[3], id, member)
              fresh = true
            end
            at = 'z' .. score
          else
            err = refused
          end
          if err then id = nil end
        else
          -- The common case, inline: no vararg wrapper per job.
          if key == '' then
            id = redis.pcall('XADD', KEYS[1], '*', 'p', payload, 't', stamp)
          else
            id = redis.pcall('XADD', KEYS[1], '*', 'p', payload, 't', stamp, 'k', key)
          end
          if type(id) == 'table' then
            err = id.err
            id = nil
          else
            fresh = true
          end
        end
      end
      if not id then
        enqueueError = err
        break
      end
      ids[j] = id
      if fresh then
        added = added + 1
        -- Taken after the add: a refused write leaves the job without its key (a repeat may add another), never
        -- a key without its job.
        if name then redis.pcall('SET', name, id .. '|' .. (at or id)) end
      end
    end
  end
  -- '{added}|{tag}': the tag tells the publishing consumer which of its rounds this is (see OwnNudgeFilter);
  -- every other consumer, of any version, fetches on any message.
  if added > 0 then redis.pcall('PUBLISH', ARGV[4], added .. '|' .. ARGV[13]) end
end
local ackError = false
if #ARGV > plains then
  -- One pass over the acknowledgements gathers the ids, the job ids and, with records kept, their live record
  -- names: the plain ones first (three fields: stream id, enqueued at, started at), then those of six.
  local done, jobs, names, n = {}, {}, {}, 0
  for i = plains + 1, acks, 3 do
    n = n + 1
    local id = ARGV[i]
    done[n] = id
    jobs[n] = id
    if finished > 0 then names[n] = recNames .. id end
  end
  for i = acks + 1, #ARGV, 6 do
    n = n + 1
    local id, job = ARGV[i], ARGV[i + 1]
    if job == '' then job = id end
    done[n] = id
    jobs[n] = job
    if finished > 0 then names[n] = recNames .. job end
  end
  local acked, err = try('XACK', KEYS[1], ARGV[1], unpack(done))
  ackError = err or false
  if not err then
    for i = releases + 1, plains, 3 do releaseKey(ARGV[i], ARGV[i + 1], ARGV[i + 2], retention) end
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
      -- One read of the round's live records (a retried, moved or cancel-asked job has one; most have none), then
      -- one HSET and one ZADD for all: a live record's history and cancel flag are merged in and its string deleted.
      local records, listed, merged, r = {}, {}, {}, 0
      local old = redis.pcall('MGET', unpack(names))
      if type(old) ~= 'table' or old.err then
        old = {}
        for k, name in ipairs(names) do old[k] = redis.pcall('GET', name) end
      end
      -- The parts every record of the round shares, joined once.
      local ended, consumer = US .. stamp .. US, US .. ARGV[2] .. US
      for k = 1, n do
        local id, job, cancel, attempt, enq, started = done[k], jobs[k], '', '1'
        if k <= plainAcks then
          local i = plains + 3 * k - 2
          enq, started = ARGV[i + 1], ARGV[i + 2]
        else
          local i = acks + 6 * (k - plainAcks) - 5
          attempt, enq, started, cancel = ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
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
      for i = acks + 1, #ARGV, 6 do
        local k = plainAcks + (i - acks + 5) / 6
        local id, job, cancel = ARGV[i], jobs[k], ARGV[i + 5]
        if not stale[k] then
          if job ~= id or ARGV[i + 2] ~= '1' or cancel == '1' then redis.pcall('DEL', recName(job)) end
          if job ~= id then redis.pcall('DEL', atName(job)) end
        end
      end
    end
    trimSettled()
  end
end
local trimAgain = -1
if ARGV[12] == '1' then
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
end
local nextDue, fetchError, epoch = -1, false, ''
if tonumber(ARGV[5]) > 0 then
  local due, err = try('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[6]))
  for _, member in ipairs(due or {}) do
    local job, attempt, stamp, tail = string.match(member, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
    local key, payload = splitKey(tail)
    local id, refused
    if key == '' then
      id, refused = try('XADD', KEYS[1], '*', 'p', payload, 'a', attempt, 't', stamp, 'j', job)
    else
      id, refused = try('XADD', KEYS[1], '*', 'p', payload, 'a', attempt, 't', stamp, 'j', job, 'k', key)
    end
    if not refused then _, refused = try('ZREM', KEYS[2], member) end
    if not refused then
      redis.pcall('HDEL', KEYS[3], job)
      moveKey(key, job, id)
      redis.pcall('SET', atName(job), id)
    end
    if refused then
      err = refused
      break
    end
  end
  local first = try('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if first and #first > 0 then nextDue = math.max(0, tonumber(first[2]) - now) end
  epoch = epochOf(KEYS[6], ARGV[2])
  fetchError = err or false
end
return { ids, enqueueError, ackError, nextDue, trimAgain, fetchError, epoch, now }
