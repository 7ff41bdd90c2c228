-- KEYS: stream, delayed, scheduled, recurring, ids, epoch. ARGV (built by RoundArguments.cs): group, consumer,
-- capacity, nudge channel, fetch count (0: no fetch), promote limit, key retention ms, finished-job retention ms (0:
-- no records), finished-job count cap, 1 to trim the ended-job lists now (else 0), the nudge tag (the enqueuing
-- consumer and its round number, {consumer}|{round}), the fields per enqueue (1: payloads alone, all due now with no
-- key; 3: payload, spec, idempotency key (empty: none)), then the section header: the first ARGV index and the
-- element count of each of the four sections that follow, in this order: enqueues, key releases (a triple { key, job
-- id, stream id } per completed entry that holds a key), plain acknowledgements (per completed entry whose job id
-- is its stream id, on attempt 1, with no cancel: { stream id, enqueued at, started at }, or { stream id } alone when
-- the finished-job retention is 0; a job of the queue's default type) and other
-- acknowledgements (seven: { stream id, job id ('' when the same), attempt, enqueued at, started at, '1' when a cancel
-- reached it (else ''), job type ('' for the queue's default type) }). One turn of the store's loop in one call (one round trip, and under appendfsync always
-- one fsync where three calls waited for three), composed of parts that each fail on their own:
-- * enqueues (includes/round/enqueue.lua): adds as many payloads as the queue has room for (unfinished = the
--   stream's unsettled entries, see unfinished.lua, + delayed retries and scheduled jobs), in order, answering # for
--   each one there is no room for, and stops at the first one Redis refuses. A spec says how: empty, now; d{ms},
--   after a delay on Redis's clock; a{unix ms}, at a time (either, when due already, now); r{unix ms}|{schedule}|
--   {recurring id}, a recurring job's occurrence on the offering instance's schedule, added only if no occurrence of
--   that job at or after that time was added before (by any instance: the check and the add are this one script),
--   else answered with an empty id; refused, whatever the room, with -{generation} when the job was removed at
--   runtime, ^{generation}|{schedule} when the job's schedule is another one now (see registerRecurring.lua), ~ when
--   it is paused in the store; an offer of a job with no schedule in the store (Redis lost its data) writes its own
--   as registered in code, generation 1. A job that is not due yet goes to the delayed set as a first attempt under a
--   new job id s{ms}-{n}, recorded in the scheduled hash so that it can be cancelled or listed. A payload with an
--   idempotency key held by a job that is still there (see alive) is not added, even in a full queue, and is
--   answered !{that job's id}; otherwise the key is taken for the new job (a stale key is overwritten). Keys are
--   checked in order, so two enqueues of one key in a round add one job. Any enqueue publishes a nudge,
--   {added}|{nudge tag}, so consumers asleep until a later due time look again;
-- * acknowledgements (includes/round/acknowledge.lua): acknowledges the completed entries, frees the keys that still
--   name them (or keeps them as done for the retention), records the successes: one variadic MGET of their record
--   strings (a read: only a retried, moved or cancel-asked job has one, merged in and then deleted), one variadic
--   HSET of their records in the ended hash and one variadic ZADD per call (an entry no longer pending, its
--   acknowledgement sent again after a lost reply or its job settled elsewhere, is not recorded again once its job
--   ended or moved on), and trims the stream up to the oldest entry still needed (see trim.lua), so memory does not
--   grow with history;
-- * when asked, the trim of the ended-job lists (includes/round/trimEnded.lua): each list's oldest members, ended
--   before the retention or beyond the count cap, their records with them, and a sweep of 128 fields of the ended
--   hash for records older than the retention that no list holds (see DurableScripts.cs and docs/durable.md, In Redis);
-- * the fetch, when asked (includes/round/promote.lua): moves due retries and scheduled jobs to the stream (their
--   keys with them) and answers the epoch the entries are read under (see epoch.lua). The read itself (XREADGROUP)
--   is the next command of the same MULTI/EXEC (see RedisStreamStore.Round.cs): as atomic as reading here, and its
--   reply goes to the client as Redis wrote it, where a read in the script was converted to Lua tables and back
--   (about 2 us an entry, more than the read itself).
-- Every part reads all its elements before its first write, and answers per element: an element that cannot be
-- read (a malformed spec, id or number) fails alone, the others go on. Each part runs protected: a fault in one (a
-- bug) is that part's error, reported with what it had done up to then, and the parts after it still run; so the
-- script itself fails only before its first write (its header unreadable), and a reply always says exactly which
-- elements were applied.
-- Returns { the answer to each enqueue, in order (a new job id; !{holder}; #: no room; '', -{generation},
-- ^{generation}|{schedule}, ~: a recurring offer refused, see above; ?{why}: not stored, why), the enqueue part's
-- error or nil, 1 when the acknowledgements were applied (else 0), the positions (from 1, plain ones first) of the
-- acknowledgements left out as unreadable, the acknowledgement part's error or nil, ms until the next delayed job is
-- due or -1, ms until the ended-job lists next need a trim (after one: 0 when it dropped members, else until the
-- oldest member passes the retention, -1 when every list is empty; -1 without one), the trim's error or nil, the
-- fetch's error or nil, epoch ('' without a fetch), Redis's time (Unix ms) }.
-- On Redis Cluster while the queue's slot migrates (see includes/here.lua): a keyed enqueue whose key is not on this
-- node is answered ?{why}, not stored (its key's read fails it before its write; the others go on); the
-- acknowledgement part reads every key it writes after its XACK in the MGET it reads its records with, before the
-- XACK, so one not on this node fails the part with nothing acknowledged; the fetch reads its due jobs' pointers and
-- keys in one MGET before it promotes any, so one not on this node fails the fetch with nothing promoted (the read
-- that follows the script still runs).
--- @include "includes/now"
--- @include "includes/round/enqueue"
--- @include "includes/round/acknowledge"
--- @include "includes/round/trimEnded"
--- @include "includes/round/promote"
--- @include "includes/epoch"

-- A section of ARGV, as the header at index at tells it: its first index and its element count.
local function section(at)
  return { first = tonumber(ARGV[at]), count = tonumber(ARGV[at + 1]) }
end
local enqueues, releases, plains, acks = section(13), section(15), section(17), section(19)

local ok, thrown = pcall(enqueue, tonumber(ARGV[12]), enqueues)
local enqueueError = enqueued.error
if not ok then
  -- The answers recorded stand (each was recorded with its write); the others were not stored.
  enqueueError = faultText(thrown)
  for j = 1, enqueues.count do
    if not enqueued.answers[j] then enqueued.answers[j] = '?' .. enqueueError end
  end
end

local ackError
ok, ackError = pcall(acknowledge, releases, plains, acks)
if not ok then ackError = faultText(ackError) end

local trimAgain, trimError = -1, false
if ARGV[10] == '1' then
  ok, trimAgain = pcall(trimEnded)
  if not ok then trimAgain, trimError = -1, faultText(trimAgain) end
end

local nextDue, fetchError, epoch = -1, false, ''
if tonumber(ARGV[5]) > 0 then
  local promoted, due, err = pcall(promote, tonumber(ARGV[6]))
  if promoted then nextDue, fetchError = due, err else fetchError = faultText(due) end
  local read, e = pcall(epochOf, KEYS[6], ARGV[2])
  if read then epoch = e end
end
local applied = 0
if acknowledged.applied then applied = 1 end
return { enqueued.answers, enqueueError, applied, acknowledged.invalid, ackError, nextDue, trimAgain, trimError, fetchError, epoch, now }
