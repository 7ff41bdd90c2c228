-- The helpers of idempotency keys (KEYS[1] is the queue's stream): keyName(k), holderOf(name, strict) (job id and
-- where, or nil), alive(job, where, delayed, scheduled), moveKey(k, job, where), releaseKey(k, job, at, retention),
-- splitKey(tail) and keyTag(k) for delayed-set members.

-- Key names are built once per call: the round builds one or more per job.
local keyNames = string.sub(KEYS[1], 1, -7) .. 'key:'
local function keyName(k) return keyNames .. k end
-- A key's value, or nil (a value that is not a string, set by hand, counts as none: SET replaces it).
local function valueOf(name)
  local v = redis.pcall('GET', name)
  if type(v) ~= 'string' then return nil end
  return v
end
-- Strict: Redis's refusal of the read other than WRONGTYPE is raised, not taken for a free key. On Redis Cluster while
-- the queue's slot migrates, that is a key not on this node (see here.lua): the read a keyed enqueue makes anyway then
-- checks the key, so the enqueue fails before its write and costs no extra call.
local function holderOf(name, strict)
  local v
  if strict then
    v = redis.pcall('GET', name)
    if type(v) == 'table' and v.err and not string.find(v.err, 'WRONGTYPE', 1, true) then error(v) end
    if type(v) ~= 'string' then v = nil end
  else
    v = valueOf(name)
  end
  if not v then return nil end
  return string.match(v, '^([^|]+)|(.+)$')
end
-- Whether the job a key names still waits or runs where the key says. A key whose job is gone by other means
-- than these scripts (an entry deleted by hand) is stale, and the next enqueue with it takes it. A settled entry
-- waiting in the stream for the trim (see includes/trim.lua) would read as there, but names no key: each script that settles
-- an entry moves or frees its key in the same step (only a key set by hand can name one; the trim frees it). Among many
-- members due in the same millisecond it reads 64 and, not finding the job, counts it as there: such a key is
-- freed once they come due.
local function alive(job, where, delayed, scheduled)
  if where == 'done' then return true end
  if string.sub(where, 1, 1) == 'z' then
    if redis.pcall('HEXISTS', scheduled, job) == 1 then return true end
    local score = string.sub(where, 2)
    if not tonumber(score) then return false end
    local same = redis.pcall('ZRANGEBYSCORE', delayed, score, score, 'LIMIT', 0, 64)
    if type(same) ~= 'table' or same.err then return false end
    for _, m in ipairs(same) do
      if string.sub(m, 1, #job + 1) == job .. '|' then return true end
    end
    return #same >= 64
  end
  if not string.match(where, '^%d+%-%d+$') then return false end
  -- pcall: a value set by hand (an id out of range) makes the key stale rather than failing the whole round.
  local found = redis.pcall('XRANGE', KEYS[1], where, where)
  return type(found) == 'table' and not found.err and #found > 0
end
-- The job moved: its key follows it, if the job holds it or nobody does.
local function moveKey(k, job, where)
  if not k or k == '' then return end
  local name = keyName(k)
  local v = valueOf(name)
  if not v or string.sub(v, 1, #job + 1) == job .. '|' then redis.pcall('SET', name, job .. '|' .. where) end
end
-- The job ended: its key is freed (or kept as done for retention ms), if it still names the job (at 'at', if given).
local function releaseKey(k, job, at, retention)
  if not k or k == '' then return end
  local name = keyName(k)
  local v = valueOf(name)
  if not v then return end
  if at then
    if v ~= job .. '|' .. at then return end
  elseif string.sub(v, 1, #job + 1) ~= job .. '|' then
    return
  end
  if retention and retention > 0 then
    redis.pcall('SET', name, job .. '|done', 'PX', retention)
  else
    redis.pcall('DEL', name)
  end
end
local function splitKey(tail)
  local k, payload = string.match(tail, '^\1([^\1]*)\1(.*)$')
  if k then return k, payload end
  return '', tail
end
local function keyTag(k)
  if not k or k == '' then return '' end
  return '\1' .. k .. '\1'
end
