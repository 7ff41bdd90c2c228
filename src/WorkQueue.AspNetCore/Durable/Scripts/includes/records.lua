-- The helpers of job records (KEYS[1] is the queue's stream; see DurableScripts.cs and docs/durable.md, In Redis): recName(job), atName(job),
-- endedName(state), endedRecords() (the hash of ended records), recordOf(job) (the ended record, else the live one;
-- nil when none), historyOf(rec), cancelOf(rec), isEnded(rec), header(...), endRecord(job, id, state, rec, at,
-- retention), delayedMember(job, score) (KEYS[2] is the delayed set) and typeOf(payload).

local US, RS = '\31', '\30'
local queueNames = string.sub(KEYS[1], 1, -7)
local recNames, atNames, endedHash = queueNames .. 'job:', queueNames .. 'at:', queueNames .. 'ended'
local function recName(job) return recNames .. job end
local function atName(job) return atNames .. job end
local function endedName(state) return endedHash .. ':' .. state end
local function endedRecords() return endedHash end
-- An ended record is a field of the ended hash; a live one (and an ended one a version before the hash wrote,
-- which expires on its own) is a string of its own.
local function recordOf(job)
  local v = redis.pcall('HGET', endedRecords(), job)
  if type(v) == 'string' then return v end
  v = redis.pcall('GET', recName(job))
  if type(v) ~= 'string' then return nil end
  return v
end
local function historyOf(rec)
  if not rec then return '' end
  local i = string.find(rec, RS, 1, true)
  if not i then return '' end
  return string.sub(rec, i)
end
local function cancelOf(rec)
  if not rec then return '' end
  return string.match(rec, '^[^\31]*\31([^\31]*)') or ''
end
local function isEnded(rec)
  if not rec then return false end
  local s = string.sub(rec, 1, 1)
  return s == 'S' or s == 'D' or s == 'C'
end
-- The job type's name a stored payload carries, '' for the queue's default type (a bare payload, or a header with no
-- name before its trace): the header ends at the first US within its longest length, 156 (a name, a space and a
-- traceparent, see JobTypeEnvelope.cs), so a large payload is not scanned.
local function typeOf(payload)
  if not payload then return '' end
  return string.match(string.sub(payload, 1, 157), '^([^\31 ]*)[^\31]*\31') or ''
end
-- A record's header: its fields, then the job type's name when it is not the queue's default one (so a record of the
-- default type is as short as before job types).
local function header(state, cancel, at, attempt, enq, consumer, started, err, jobType)
  local h = state .. US .. cancel .. US .. at .. US .. attempt .. US .. enq .. US .. consumer .. US .. started .. US .. err
  if jobType and jobType ~= '' then h = h .. US .. jobType end
  return h
end
-- A rare ending (a dead letter, a cancel): kept in the ended hash and listed by its end until the trim, or not at all.
local function endRecord(job, id, state, rec, at, retention)
  if retention > 0 then
    redis.pcall('HSET', endedRecords(), job, rec)
    redis.pcall('ZADD', endedName(state), at, job)
  end
  redis.pcall('DEL', recName(job))
  if job ~= id then redis.pcall('DEL', atName(job)) end
end
local function delayedMember(job, score)
  local same = redis.pcall('ZRANGEBYSCORE', KEYS[2], score, score)
  if type(same) ~= 'table' or same.err then return nil end
  for _, m in ipairs(same) do
    if string.sub(m, 1, #job + 1) == job .. '|' then return m end
  end
  return nil
end
