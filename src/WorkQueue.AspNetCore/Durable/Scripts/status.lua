-- KEYS: stream, delayed, scheduled. ARGV: group, job id. Returns where a job is, without writing anything: { 'E',
-- record } ended (in the ended hash, or a record string the previous version wrote); { 'S', record
-- or '', due, attempt, enqueued at, job type ('' for the queue's default type) } scheduled; { 'R', the same } waiting
-- for a retry; { 'P', record or '', stream id, fields, consumer, ms since its consumer last claimed it, deliveries }
-- delivered to a consumer; { 'Q', record or '', stream id, fields } queued; { '' } unknown (or ended longer ago than
-- the retention). Every reply but the unknown one ends with the job's id: the id may be the job's or the stream id of
-- any later entry of it still in the stream (a retry's, a hand-back's: see jobOf.lua), which reads as its job.
--- @include "includes/keys"
--- @include "includes/records"
--- @include "includes/vanished"
--- @include "includes/settled"
--- @include "includes/jobOf"

local stream, delayed, scheduled = KEYS[1], KEYS[2], KEYS[3]
local group, asked = ARGV[1], ARGV[2]

local job = jobOf(asked)
local rec = recordOf(job)
if isEnded(rec) then return { 'E', rec, job } end
local function fromMember(kind, member, score)
  local _, attempt, stamp, tail = string.match(member, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  local _, payload = splitKey(tail or '')
  return { kind, rec or '', score or '', attempt or '1', stamp or '0', typeOf(payload), job }
end
local member = redis.call('HGET', scheduled, job)
if member then return fromMember('S', member, redis.call('ZSCORE', delayed, member)) end
local where = redis.pcall('GET', atName(job))
if type(where) ~= 'string' then
  where = nil
  if string.match(job, '^%d+%-%d+$') then where = job end
end
if not where then return { '' } end
if string.sub(where, 1, 1) == 'z' then
  local due = delayedMember(job, string.sub(where, 2))
  if not due then return { '' } end
  return fromMember('R', due, string.sub(where, 2))
end
-- pcall: a location set by hand to something Redis cannot read as a stream id is no location.
local entry = redis.pcall('XRANGE', stream, where, where)
if type(entry) ~= 'table' or entry.err or #entry == 0 then return { '' } end
local held = redis.call('XPENDING', stream, group, where, where, 1)
if #held > 0 then return { 'P', rec or '', where, entry[1][2], held[1][2], held[1][3], held[1][4], job } end
if settled(where) then return { '' } end
return { 'Q', rec or '', where, entry[1][2], job }
