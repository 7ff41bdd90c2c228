namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The Lua scripts of the durable-queue protocol. Each step that moves a job between places is one script, so a crash
/// between two commands can neither lose nor duplicate it, and every script touches only the queue's own keys (one hash
/// slot). Times come from Redis's own clock (<c>TIME</c>), so instances with skewed clocks agree on due times.
/// </summary>
/// <remarks>
/// Stream entry fields: <c>p</c> the payload (JSON), <c>a</c> the attempt (absent on a first attempt, which every reader,
/// of this version and the one before, takes as 1; written from the second on), <c>t</c> when the job was
/// first enqueued (Unix ms, Redis time), <c>j</c> the job's id (the stream id it was first stored under; absent on a first
/// attempt, whose job id is its own stream id), <c>k</c> the job's idempotency key (absent without one). A delayed retry
/// or scheduled job is a sorted-set member <c>jobId|attempt|enqueuedAt|payload</c> scored by its due time; with a key, the
/// payload is preceded by <c>\u0001key\u0001</c> (a key has no control characters, and JSON never starts with one).
/// <para>
/// An idempotency key is a string <c>{prefix}:{name}:key:{key}</c> (the queue's hash tag, so the queue's slot) whose
/// value is <c>jobId|where</c>: where the job is now, a stream id, <c>z{due ms}</c> in the delayed set, or <c>done</c>
/// (with an expiry: the retention after a success). Every script that moves a job moves its key with it; one that ends
/// it releases the key, if the key still names that job. These key names are built inside the scripts from the stream's
/// name rather than declared: they share the queue's hash slot, which is what Redis Cluster routes by.
/// </para>
/// <para>
/// A job's record is a header of fields split by U+001F (state, cancel asked '1' or '', ended at, attempt, enqueued
/// at, consumer, started at, error) then, for each failed attempt, U+001E and its fields (number, consumer, started
/// at, ended at, outcome, error). A live job has one, a string <c>{prefix}:{name}:job:{job id}</c>, only once
/// something rare happened to it (an attempt failed, a cancel was asked). An ended one (state <c>S</c>ucceeded,
/// <c>D</c>ead-lettered or <c>C</c>anceled) has its record as the field <c>{job id}</c> of the hash
/// <c>{prefix}:{name}:ended</c> (its live string merged in and deleted) and is listed in
/// <c>{prefix}:{name}:ended:{state}</c> scored by its end; the round's trim drops both together (the retention, the
/// count cap), and a sweep of the hash drops records older than the retention that no list holds. Records have no
/// expiry of their own: one key with an expiry per job cost a write per success and an active-expiry deletion each,
/// where the hash takes one variadic HSET per round and loses them in batches. A record string holding an ended record
/// (written by the version before the hash, with an expiry) is still read (<c>recordOf</c>, <see cref="FindJobs"/>).
/// <c>{prefix}:{name}:at:{job id}</c> points to where a live job is when that is not its own stream id: a newer stream
/// id (retried, promoted, handed back) or <c>z{due ms}</c> (waiting for a retry). Live states are read from where the
/// job is (see <see cref="Status"/>), so they cost no write.
/// </para>
/// </remarks>
internal static class DurableScripts
{
    private const string Now = """
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        """;

    /// <summary>
    /// <c>epochOf(key, consumer)</c>: the queue's epoch, a token written together with its consumer group (see
    /// <see cref="CreateGroup"/>). Redis losing its data loses the token with the group, and whoever makes the group again
    /// writes a new one, so an entry fetched under another epoch than the current one was lost by Redis, whatever happened
    /// to the new stream since. A missing token (evicted, deleted, or the group made again by something other than
    /// <see cref="CreateGroup"/>) is written anew here, so entries read from now on carry one. Returns '' when Redis
    /// refuses (the entries then rely on <c>vanished</c>'s other test only).
    /// </summary>
    private const string Epoch = "\n" + """
        local function epochOf(key, consumer)
          local e = redis.pcall('GET', key)
          if type(e) == 'string' then return e end
          if type(e) == 'table' then return '' end
          local t = redis.call('TIME')
          e = t[1] .. '.' .. t[2] .. '@' .. consumer
          local set = redis.pcall('SET', key, e)
          if type(set) == 'table' and set.err then return '' end
          return e
        end
        """ + "\n";

    /// <summary>
    /// <c>vanished(id, epochKey, epoch)</c>: whether Redis lost an entry (a restart without persistence, a failover to an
    /// empty replica, a flush) rather than someone settling it. It must be pending for no consumer and not in the
    /// stream, and then either the queue's epoch (<c>epochKey</c>) is no longer <c>epoch</c>, the one it was fetched
    /// under (see <see cref="Epoch"/>; '' when unknown), or it was never removed from the stream: neither deleted (the
    /// stream's <c>max-deleted-entry-id</c> is below it, or there is no stream; Redis before 7.0 does not report it) nor
    /// trimmed (see <see cref="Trim"/>: trimming does not raise <c>max-deleted-entry-id</c>, so a trimmed entry is one
    /// below the stream's first entry, or in an emptied stream, that the group has delivered). A delivered entry is
    /// never deleted by these scripts: settled, it is acknowledged and stays in the stream, pending for no consumer, until
    /// the trim (so it is found there: not lost); only a cancel of a queued entry deletes, and sets the deleted id back
    /// (see <see cref="Cancel"/>), so the deleted test only sees an <c>XDEL</c> made by hand or by an older version.
    /// The second test alone fails once the trim passed an entry of a stream made again (which needs later entries
    /// delivered and every earlier one settled);
    /// it still covers a Redis restarted from an older snapshot, which keeps the epoch. KEYS[1] is the stream, ARGV[1]
    /// the group.
    /// </summary>
    private const string Vanished = GroupState + """
        local function before(a, b)
          local am, as = string.match(a, '^(%d+)-(%d+)$')
          local bm, bs = string.match(b, '^(%d+)-(%d+)$')
          if not am or not bm then return false end
          am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
          return am < bm or (am == bm and as < bs)
        end
        local function vanished(id, epochKey, epoch)
          local okp, anyone = pcall(redis.call, 'XPENDING', KEYS[1], ARGV[1], id, id, 1)
          if okp and #anyone > 0 then return false end
          if #redis.call('XRANGE', KEYS[1], id, id) > 0 then return false end
          if epoch and epoch ~= '' then
            local current = redis.pcall('GET', epochKey)
            if type(current) ~= 'table' and current ~= epoch then return true end
          end
          local ok, info = pcall(redis.call, 'XINFO', 'STREAM', KEYS[1])
          if not ok then return true end
          local deleted, length, first
          for i = 1, #info, 2 do
            local f = info[i]
            if f == 'max-deleted-entry-id' then deleted = info[i + 1] elseif f == 'length' then length = info[i + 1]
            elseif f == 'first-entry' then first = info[i + 1] end
          end
          if not deleted then return false end
          if not before(deleted, id) then return false end
          -- Trimmed rather than deleted (see Trim): delivered to the group, and below the stream's first entry.
          if length == 0 or (type(first) == 'table' and before(id, first[1])) then
            local _, last = groupState()
            if last and not before(last, id) then return false end
          end
          return true
        end
        """ + "\n";

    /// <summary>
    /// <c>groupState()</c>: the group's pending count, last delivered id and lag (false when Redis cannot tell it), or
    /// nil without the group. KEYS[1] is the stream, ARGV[1] the group. <see cref="Vanished"/> includes it.
    /// </summary>
    private const string GroupState = "\n" + """
        local function groupState()
          local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
          if not ok then return nil end
          for _, g in ipairs(groups) do
            local name, pending, last, lag
            for i = 1, #g, 2 do
              local f = g[i]
              if f == 'name' then name = g[i + 1] elseif f == 'pending' then pending = g[i + 1]
              elseif f == 'last-delivered-id' then last = g[i + 1] elseif f == 'lag' then lag = g[i + 1] end
            end
            if name == ARGV[1] then return pending, last, lag end
          end
          return nil
        end
        """ + "\n";

    /// <summary>
    /// <c>unfinished()</c> (needs <see cref="GroupState"/>): the stream's unsettled entries, pending + not yet delivered
    /// (lag), for the capacity and the statistics. Settled entries can wait in the stream for the trim (see
    /// <see cref="Trim"/>) and must not count. Redis 7.0 tells no lag while the stream holds a deleted entry (a
    /// tombstone) at or after the group's last delivered id and it cannot estimate the group's position (the deleted
    /// id is at or above the first entry's): these scripts never leave one there (settled entries are acknowledged and
    /// trimmed, a cancelled queued one deleted with the stream's counters set back, see <see cref="Cancel"/>). When
    /// Redis still cannot tell it (before 7.0; an <c>XDEL</c> by hand or by an older version, until the group reads the
    /// stream's last entry or the trim passes it) it falls back to <c>XLEN</c> (counting too many, never too few).
    /// KEYS[1] is the stream, ARGV[1] the group.
    /// </summary>
    private const string Unsettled = "\n" + """
        local function unfinished()
          local pending, _, lag = groupState()
          if pending and type(lag) == 'number' then return pending + lag end
          return redis.call('XLEN', KEYS[1])
        end
        """ + "\n";

    /// <summary>
    /// <c>settled(id)</c> (needs <see cref="Vanished"/>, which includes <see cref="GroupState"/>): whether an entry still in the stream
    /// and pending for no consumer was delivered to the group, so was settled and waits for the trim (see
    /// <see cref="Trim"/>) rather than being queued. Entries are only ever added at the stream's end, so one at or below
    /// the group's last delivered id has been delivered.
    /// </summary>
    private const string Settled = "\n" + """
        local function settled(id)
          local _, last = groupState()
          return last ~= nil and not before(last, id)
        end
        """ + "\n";

    /// <summary>
    /// <c>trimSettled()</c> and <c>ackAndTrim(id)</c>, which acknowledges one entry first (need <see cref="GroupState"/>;
    /// KEYS[1] is the stream, ARGV[1] the group). An acknowledged
    /// entry is not deleted one by one (each <c>XDEL</c> seeks the entry's node and walks it up to the entry: about a
    /// third of the round's time); the stream is trimmed instead, exactly (<c>XTRIM MINID</c>: whole nodes dropped, one
    /// partly settled node walked, once a round), up to the oldest entry still needed: the oldest one pending, or else
    /// the first one not yet delivered. Settled entries behind a pending one stay until it is settled: a long-running
    /// job holds back memory (the entries completed after it), never work; so does a queue that stops completing jobs
    /// (the next round with acknowledgements trims). The scripts that settle a delivered entry otherwise (a retry, a dead
    /// letter, a hand-back, a cancel, a reclaim as poison) acknowledge it and trim too: deleting it would leave a
    /// tombstone that can cost the group its lag (see <see cref="Unsettled"/>). Trimming does not raise the stream's
    /// <c>max-deleted-entry-id</c> (<see cref="Vanished"/> knows).
    /// </summary>
    private const string Trim = "\n" + """
        local function trimSettled()
          local pending, last = groupState()
          if not last then return end
          local ms, seq = string.match(last, '^(%d+)-(%d+)$')
          if not ms or #seq > 15 then return end
          -- Everything below the entry after the last delivered one has been delivered.
          local bound = ms .. '-' .. string.format('%.0f', tonumber(seq) + 1)
          if pending > 0 then
            local oldest = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1)
            if #oldest > 0 then
              local oms, oseq = string.match(oldest[1][1], '^(%d+)-(%d+)$')
              oms, oseq = tonumber(oms), tonumber(oseq)
              if oms < tonumber(ms) or (oms == tonumber(ms) and oseq <= tonumber(seq)) then bound = oldest[1][1] end
            end
          end
          redis.pcall('XTRIM', KEYS[1], 'MINID', bound)
        end
        -- One entry settled by a script of its own (a retry, a dead letter, a cancel): acknowledged, then the trim.
        local function ackAndTrim(id)
          redis.call('XACK', KEYS[1], ARGV[1], id)
          trimSettled()
        end
        """ + "\n";

    /// <summary>
    /// The helpers of idempotency keys (KEYS[1] is the queue's stream): <c>keyName(k)</c>, <c>holderOf(name)</c> (job id
    /// and where, or nil), <c>alive(job, where, delayed, scheduled)</c>, <c>moveKey(k, job, where)</c>,
    /// <c>releaseKey(k, job, at, retention)</c>, <c>splitKey(tail)</c> and <c>keyTag(k)</c> for delayed-set members.
    /// </summary>
    private const string KeyHelpers = "\n" + """
        -- Key names are built once per call: the round builds one or more per job.
        local keyNames = string.sub(KEYS[1], 1, -7) .. 'key:'
        local function keyName(k) return keyNames .. k end
        -- A key's value, or nil (a value that is not a string, set by hand, counts as none: SET replaces it).
        local function valueOf(name)
          local v = redis.pcall('GET', name)
          if type(v) ~= 'string' then return nil end
          return v
        end
        local function holderOf(name)
          local v = valueOf(name)
          if not v then return nil end
          return string.match(v, '^([^|]+)|(.+)$')
        end
        -- Whether the job a key names still waits or runs where the key says. A key whose job is gone by other means
        -- than these scripts (an entry deleted by hand) is stale, and the next enqueue with it takes it. A settled entry
        -- waiting in the stream for the trim (see Trim) would read as there, but names no key: each script that settles
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
        """ + "\n";

    /// <summary>
    /// The helpers of job records (KEYS[1] is the queue's stream; see the remarks): <c>recName(job)</c>,
    /// <c>atName(job)</c>, <c>endedName(state)</c>, <c>endedRecords()</c> (the hash of ended records),
    /// <c>recordOf(job)</c> (the ended record, else the live one; nil when none), <c>historyOf(rec)</c>,
    /// <c>cancelOf(rec)</c>, <c>isEnded(rec)</c>, <c>header(...)</c>, <c>endRecord(job, id, state, rec, at, retention)</c>
    /// and <c>delayedMember(job, score)</c> (KEYS[2] is the delayed set).
    /// </summary>
    private const string RecordHelpers = "\n" + """
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
        local function header(state, cancel, at, attempt, enq, consumer, started, err)
          return state .. US .. cancel .. US .. at .. US .. attempt .. US .. enq .. US .. consumer .. US .. started .. US .. err
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
        """ + "\n";

    /// <summary>
    /// KEYS: stream, delayed, scheduled, recurring, ids, epoch. ARGV: group, consumer, capacity, nudge channel, fetch count (0: no
    /// fetch), promote limit, enqueue count n (<c>-n</c> when every payload is plain: due now, no key), keyed
    /// acknowledgement count m (<c>m|p</c> with p plain acknowledgements), key retention ms, finished-job retention ms
    /// (0: no records), finished-job count cap, 1 to trim the ended-job lists now (else 0), the nudge tag (the enqueuing
    /// consumer and its round number, <c>{consumer}|{round}</c>), then n payloads, their n specs and their n idempotency
    /// keys (empty: none; neither is sent with <c>-n</c>), m triples { key, job id, stream id } of completed entries that
    /// hold a key, then three per plain completed entry (its job id its stream id, attempt 1, no cancel) { stream id,
    /// enqueued at, started at }, then six per other completed entry { stream id, job id ('' when the same), attempt,
    /// enqueued at, started at, '1' when a cancel reached it (else '') }. One turn of the store's loop in one call (one round trip, and under
    /// <c>appendfsync always</c> one fsync where three calls waited for three), in three parts that each fail on their own:
    /// <list type="number">
    /// <item>enqueues: adds as many payloads as the queue has room for (unfinished = the stream's unsettled entries, see
    /// <see cref="Unsettled"/>, + delayed retries and scheduled jobs), in order, answering <c>#</c> for each one there is no room for, and stops at the first one Redis
    /// refuses. A spec says how: empty, now; <c>d{ms}</c>, after a delay on Redis's
    /// clock; <c>a{unix ms}</c>, at a time (either, when due already, now); <c>r{unix ms}|{schedule}|{recurring id}</c>, a
    /// recurring job's occurrence on the offering instance's schedule, added only if no occurrence of that job at or
    /// after that time was added before (by any instance: the check and the add are this one script), else answered with
    /// an empty id; refused, whatever the room, with <c>-{generation}</c> when the job was removed at runtime,
    /// <c>^{generation}|{schedule}</c> when the job's schedule is another one now (see <see cref="RegisterRecurring"/>),
    /// <c>~</c> when it is paused in the store; an offer of a job with no schedule in the store (Redis lost its data)
    /// writes its own as registered in code, generation 1. A job that is not due
    /// yet goes to the delayed set as a first attempt under a new job id <c>s{ms}-{n}</c>, recorded in the scheduled hash
    /// so that it can be cancelled or listed. A payload with an idempotency key held by a job that is still there (see
    /// <c>alive</c>) is not added, even in a full queue, and is answered <c>!{that job's id}</c>; otherwise the key is
    /// taken for the new job (a stale key is overwritten). Keys are checked in order, so two enqueues of one key in a
    /// round add one job;</item>
    /// <item>acknowledgements: acknowledges the completed entries, frees the keys that still name them (or keeps them as
    /// done for the retention), records the successes: one variadic MGET of their record strings (a read: only a
    /// retried, moved or cancel-asked job has one, merged in and then deleted), one variadic HSET of their records in the
    /// ended hash and one variadic ZADD per call (an entry no longer pending, its acknowledgement sent again after a lost
    /// reply or its job settled elsewhere, is not recorded again once its job ended or moved on), and trims the stream up to the oldest entry still needed (see
    /// <see cref="Trim"/>), so memory does not grow with history; when asked, trims the ended-job lists (each list's
    /// oldest members, ended before the retention or beyond the count cap, their records with them) and sweeps 128
    /// fields of the ended hash for records older than the retention that no list holds (see the remarks);</item>
    /// <item>the fetch, when asked: moves due retries and scheduled jobs to the stream (their keys with them) and answers
    /// the epoch the entries are read under (see <see cref="Epoch"/>). The read itself (<c>XREADGROUP</c>) is the next
    /// command of the same <c>MULTI</c>/<c>EXEC</c> (see <c>RedisStreamStore.Round.cs</c>): as atomic as reading here,
    /// and its reply goes to the client as Redis wrote it, where a read in the script was converted to Lua tables and
    /// back (about 2 us an entry, more than the read itself).</item>
    /// </list>
    /// Returns { new ids, enqueue error or nil, acknowledgement error or nil, ms until the next delayed job is due or -1,
    /// ms until the ended-job lists next need a trim (after one: 0 when it dropped members, else until the oldest member
    /// passes the retention, -1 when every list is empty; -1 without one), promotion error or nil, epoch ('' without a
    /// fetch), Redis's time (Unix ms) }. Any enqueue
    /// publishes a nudge, <c>{added}|{nudge tag}</c>, so consumers asleep until a later due time look again.
    /// </summary>
    public const string Round = Now + KeyHelpers + RecordHelpers + Epoch + GroupState + Unsettled + Trim + """

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
        """;

    /// <summary>
    /// A recurring job's schedule as the instances share it: the field <c>@{id}</c> of the recurring hash (KEYS[1]) holds
    /// <c>{generation}|{state}|{schedule}|{base}</c>, the state <c>c</c> (registered in code), <c>r</c> (changed at
    /// runtime) or <c>x</c> (removed at runtime), the schedule the job runs on (for <c>x</c>, the one removed), and for
    /// a runtime change the schedule in code it overrode (<c>base</c>). Every write increments the generation. ARGV: the
    /// job's id, the change (<c>c</c>, <c>r</c> or <c>x</c>), the instance's schedule. A registration in code (<c>c</c>,
    /// each start) is written unless the same schedule is registered, or a runtime change overrode that very schedule
    /// (so a restart keeps a runtime Remove or AddOrUpdate; a deploy with another schedule in code wins over both). A
    /// runtime change is always written; a removal also lifts the job's pause in the store. Returns { generation, state, schedule, Redis's time (Unix ms) } as they are now.
    /// </summary>
    public const string RegisterRecurring = Now + """
        local field = '@' .. ARGV[1]
        local record = redis.call('HGET', KEYS[1], field)
        local generation, state, current, base = 0, nil, nil, nil
        if record then
          local g
          g, state, current, base = string.match(record, '^(%d+)|(%a)|([^|]*)|(.*)$')
          generation = tonumber(g) or 0
        end
        local change, schedule = ARGV[2], ARGV[3]
        if change == 'c' then
          if state == 'c' and current == schedule then return { generation, state, current, now } end
          if (state == 'r' or state == 'x') and base == schedule then return { generation, state, current, now } end
          base = schedule
        else
          if state == 'c' then base = current elseif not state then base = '' end
          if change == 'x' and current then schedule = current end
        end
        generation = generation + 1
        redis.call('HSET', KEYS[1], field, generation .. '|' .. change .. '|' .. schedule .. '|' .. base)
        -- A removed job's pause goes with it: the job added again (at runtime, or by a deploy) is a new one, not paused.
        if change == 'x' then redis.call('HDEL', KEYS[1], '~' .. ARGV[1]) end
        return { generation, change, schedule, now }
        """;

    /// <summary>
    /// KEYS: stream, epoch. ARGV: group, consumer, then per entry: id, the epoch it was fetched under. Refreshes the
    /// claim of each entry this consumer still owns, without raising its delivery count (JUSTID) and without taking back
    /// an entry another consumer has reclaimed. Returns { ids this consumer no longer owns (another consumer took them,
    /// or they were settled elsewhere), ids Redis lost (see <see cref="Vanished"/>) }.
    /// </summary>
    public const string KeepAlive = Vanished + """
        local lost, gone = {}, {}
        for i = 3, #ARGV, 2 do
          local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
          if #mine == 1 then
            redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
          elseif vanished(ARGV[i], KEYS[2], ARGV[i + 1]) then
            gone[#gone + 1] = ARGV[i]
          else
            lost[#lost + 1] = ARGV[i]
          end
        end
        return { lost, gone }
        """;

    /// <summary>
    /// KEYS: stream, epoch. ARGV: group, consumer, id... Takes back entries pending for this consumer that it does not
    /// hold (a call that read them lost its reply): returns { { id, fields, deliveries } for each still pending here,
    /// the epoch (see <see cref="Epoch"/>) }; one deleted meanwhile is acknowledged. An entry another consumer has
    /// reclaimed is left to it.
    /// </summary>
    public const string Adopt = Epoch + """
        local found = {}
        for i = 3, #ARGV do
          local id = ARGV[i]
          local mine = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1, ARGV[2])
          if #mine == 1 then
            local entry = redis.call('XRANGE', KEYS[1], id, id)
            if #entry == 1 then
              found[#found + 1] = { id, entry[1][2], mine[1][4] }
            else
              redis.call('XACK', KEYS[1], ARGV[1], id)
            end
          end
        end
        return { found, epochOf(KEYS[2], ARGV[2]) }
        """;

    /// <summary>
    /// KEYS: stream, dead, epoch. ARGV: group, consumer, min idle ms, cursor, count, max deliveries, finished-job
    /// retention ms. Claims entries whose
    /// consumer has not refreshed them for min idle (XAUTOCLAIM raises their delivery count; the entry, and so its
    /// idempotency key, stays where it is); an entry delivered more than max deliveries times is dead-lettered as poison
    /// in the same step, and its key freed; one whose job was asked to cancel (see <see cref="Cancel"/>) while its
    /// consumer was dying ends as cancelled. Either is acknowledged and left to the trim (see <see cref="Trim"/>). Returns { next cursor, { id, fields, deliveries }..., 1 when it ended any (else 0), the epoch (see
    /// <see cref="Epoch"/>) }.
    /// With count 0 (no room to take anything now) it only looks: returns { cursor, {}, 1, '' } when some entry has been
    /// idle for min idle, else { cursor, {}, 0, '' }, so the caller can keep its next free slot for it.
    /// </summary>
    public const string Reclaim = Now + KeyHelpers + RecordHelpers + Epoch + GroupState + Trim + """

        if tonumber(ARGV[5]) == 0 then
          local idle = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], '-', '+', 1)
          return { ARGV[4], {}, #idle, '' }
        end
        local claimed = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'COUNT', ARGV[5])
        local keep, settledAny = {}, false
        for _, entry in ipairs(claimed[2]) do
          local id = entry[1]
          local info = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
          local deliveries = info[1][4]
          local f = {}
          local raw = entry[2]
          for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
          -- One GET per reclaimed entry (reclaims are rare): a job asked to cancel while its consumer was dying ends here.
          local asked = recordOf(f['j'] or id)
          if cancelOf(asked) == '1' and not isEnded(asked) then
            redis.call('XACK', KEYS[1], ARGV[1], id)
            settledAny = true
            releaseKey(f['k'], f['j'] or id, nil, 0)
            local at = string.format('%.0f', now)
            endRecord(f['j'] or id, id, 'C', header('C', '1', at, f['a'] or '1', f['t'] or '0', ARGV[2], '', '') .. historyOf(asked), at, tonumber(ARGV[7]))
          elseif deliveries > tonumber(ARGV[6]) then
            local dead = { 'j', f['j'] or id, 'p', f['p'] or '', 'a', f['a'] or '1', 't', f['t'] or '0',
              'e', 'Delivered ' .. deliveries .. ' times without completing (its consumers stopped or crashed each time): treated as poison.',
              'r', 'poison', 'f', string.format('%.0f', now), 'c', ARGV[2] }
            if f['k'] then
              dead[#dead + 1] = 'k'
              dead[#dead + 1] = f['k']
            end
            redis.call('XADD', KEYS[2], '*', unpack(dead))
            redis.call('XACK', KEYS[1], ARGV[1], id)
            settledAny = true
            releaseKey(f['k'], f['j'] or id, nil, 0)
            local rec = recordOf(f['j'] or id)
            local at = string.format('%.0f', now)
            endRecord(f['j'] or id, id, 'D', header('D', cancelOf(rec), at, f['a'] or '1', f['t'] or '0', ARGV[2], '', dead[10]) .. historyOf(rec), at, tonumber(ARGV[7]))
          else
            keep[#keep + 1] = { id, entry[2], deliveries }
          end
        end
        if claimed[3] then
          for _, id in ipairs(claimed[3]) do redis.call('XACK', KEYS[1], ARGV[1], id) end
        end
        if settledAny then trimSettled() end
        return { claimed[1], keep, settledAny and 1 or 0, epochOf(KEYS[3], ARGV[2]) }
        """;

    /// <summary>
    /// KEYS: stream, delayed, epoch. ARGV: group, consumer, id, delay ms, member, job id, idempotency key (empty: none),
    /// the epoch the entry was fetched under, 1 when this consumer already found that Redis lost it (else 0), nudge
    /// channel, attempt, enqueued at, started at, error. Moves a failed entry this consumer still owns to the delayed set,
    /// due after the delay by Redis's clock, its key with it, adds the attempt to the job's record (no expiry: the job
    /// lives) and points the job's id to its due time; the entry is acknowledged and left to the trim (see
    /// <see cref="Trim"/>; readers find the job through its pointer); one Redis lost (<see cref="Vanished"/>, not asked again when already found) is stored there again.
    /// When it is the earliest due, a nudge tells idle consumers, which learn due times only when they fetch. Returns 1,
    /// or 0 when another consumer owns it now.
    /// </summary>
    public const string ScheduleRetry = Now + Vanished + KeyHelpers + RecordHelpers + Trim + """

        local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
        if #mine == 0 and ARGV[9] ~= '1' and not vanished(ARGV[3], KEYS[3], ARGV[8]) then return 0 end
        local score = string.format('%.0f', now + tonumber(ARGV[4]))
        redis.call('ZADD', KEYS[2], score, ARGV[5])
        moveKey(ARGV[7], ARGV[6], 'z' .. score)
        local rec = recordOf(ARGV[6])
        redis.pcall('SET', recName(ARGV[6]), header('z', cancelOf(rec), '', ARGV[11], ARGV[12], ARGV[2], ARGV[13], ARGV[14]) .. historyOf(rec)
          .. RS .. ARGV[11] .. US .. ARGV[2] .. US .. ARGV[13] .. US .. string.format('%.0f', now) .. US .. 'R' .. US .. ARGV[14])
        redis.pcall('SET', atName(ARGV[6]), 'z' .. score)
        ackAndTrim(ARGV[3])
        if redis.call('ZRANGE', KEYS[2], 0, 0)[1] == ARGV[5] then redis.pcall('PUBLISH', ARGV[10], 1) end
        return 1
        """;

    /// <summary>
    /// KEYS: stream, dead, epoch. ARGV: group, consumer, id, job id, payload, attempt, enqueued at, error, reason,
    /// idempotency key (empty: none), the epoch the entry was fetched under, 1 when this consumer already found that
    /// Redis lost it (else 0), started at, finished-job retention ms, '1' when a cancel reached it (else ''). Moves an
    /// entry this consumer still owns (or that Redis lost, see <see cref="Vanished"/>) to the dead-letter stream (the key
    /// recorded there), frees its key, so the work can be submitted again, and ends the job's record; the entry is
    /// acknowledged and left to the trim (see <see cref="Trim"/>). Returns 1, or 0
    /// when another consumer owns it now.
    /// </summary>
    public const string DeadLetter = Now + Vanished + KeyHelpers + RecordHelpers + Trim + """

        local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
        if #mine == 0 and ARGV[12] ~= '1' and not vanished(ARGV[3], KEYS[3], ARGV[11]) then return 0 end
        if ARGV[10] == '' then
          redis.call('XADD', KEYS[2], '*', 'j', ARGV[4], 'p', ARGV[5], 'a', ARGV[6], 't', ARGV[7], 'e', ARGV[8], 'r', ARGV[9],
            'f', string.format('%.0f', now), 'c', ARGV[2])
        else
          redis.call('XADD', KEYS[2], '*', 'j', ARGV[4], 'p', ARGV[5], 'a', ARGV[6], 't', ARGV[7], 'e', ARGV[8], 'r', ARGV[9],
            'f', string.format('%.0f', now), 'c', ARGV[2], 'k', ARGV[10])
        end
        ackAndTrim(ARGV[3])
        releaseKey(ARGV[10], ARGV[4], nil, 0)
        local rec = recordOf(ARGV[4])
        local cancel = ARGV[15]
        if cancel == '' then cancel = cancelOf(rec) end
        local at = string.format('%.0f', now)
        endRecord(ARGV[4], ARGV[3], 'D', header('D', cancel, at, ARGV[6], ARGV[7], ARGV[2], ARGV[13], ARGV[8]) .. historyOf(rec), at, tonumber(ARGV[14]))
        return 1
        """;

    /// <summary>
    /// KEYS: stream, epoch. ARGV: group, consumer, nudge channel, finished-job retention ms, then per entry: id, job id,
    /// payload, attempt, enqueued at, idempotency key (empty: none), the epoch it was fetched under, 1 when this consumer
    /// already found that Redis lost it (else 0). Hands entries this consumer still owns (or that Redis lost, see
    /// <see cref="Vanished"/>) back as new entries at the stream's end (so any consumer reads them at once), same
    /// attempt, their keys with them, and points their job ids to them; one whose job a cancel by id was asked for ends
    /// here as cancelled instead (the cancel may have missed this process). The old entries are acknowledged and left to
    /// the trim (see <see cref="Trim"/>). Returns how many were handed back or ended.
    /// </summary>
    public const string Release = Now + Vanished + KeyHelpers + RecordHelpers + Trim + """
        local n = 0
        for i = 5, #ARGV, 8 do
          local id = ARGV[i]
          local mine = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1, ARGV[2])
          local rec = recordOf(ARGV[i + 1])
          if (#mine == 1 or ARGV[i + 7] == '1' or vanished(id, KEYS[2], ARGV[i + 6])) and cancelOf(rec) == '1' and not isEnded(rec) then
            redis.call('XACK', KEYS[1], ARGV[1], id)
            releaseKey(ARGV[i + 5], ARGV[i + 1], nil, 0)
            local at = string.format('%.0f', now)
            endRecord(ARGV[i + 1], id, 'C', header('C', '1', at, ARGV[i + 3], ARGV[i + 4], ARGV[2], '', '') .. historyOf(rec), at, tonumber(ARGV[4]))
            n = n + 1
          elseif #mine == 1 or ARGV[i + 7] == '1' or vanished(id, KEYS[2], ARGV[i + 6]) then
            local key = ARGV[i + 5]
            local moved
            if key == '' then
              moved = redis.call('XADD', KEYS[1], '*', 'p', ARGV[i + 2], 'a', ARGV[i + 3], 't', ARGV[i + 4], 'j', ARGV[i + 1])
            else
              moved = redis.call('XADD', KEYS[1], '*', 'p', ARGV[i + 2], 'a', ARGV[i + 3], 't', ARGV[i + 4], 'j', ARGV[i + 1], 'k', key)
              moveKey(key, ARGV[i + 1], moved)
            end
            redis.pcall('SET', atName(ARGV[i + 1]), moved)
            redis.call('XACK', KEYS[1], ARGV[1], id)
            n = n + 1
          end
        end
        if n > 0 then
          trimSettled()
          redis.call('PUBLISH', ARGV[3], n)
        end
        return n
        """;

    /// <summary>
    /// KEYS: stream, dead, delayed, scheduled. ARGV: dead-letter id, nudge channel. Puts a dead letter back on the queue as
    /// a new job (attempt 1, same job id) and removes it from the dead letters. A dead letter that had an idempotency key
    /// keeps it and takes it back when it is free (or stale); when another job holds it meanwhile, the requeued job runs
    /// without holding it (and takes it if it is free when the job next moves: a retry or a hand-back).
    /// Returns the new stream id, or nil when there is no such dead letter.
    /// </summary>
    public const string Requeue = Now + KeyHelpers + RecordHelpers + """

        local found = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1])
        if #found == 0 then return false end
        local f = {}
        local raw = found[1][2]
        for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
        local job = f['j'] or ARGV[1]
        local key = f['k']
        local id
        if key then
          id = redis.call('XADD', KEYS[1], '*', 'p', f['p'] or '', 't', string.format('%.0f', now), 'j', job, 'k', key)
          local holder, where = holderOf(keyName(key))
          if not holder or holder == job or not alive(holder, where, KEYS[3], KEYS[4]) then
            redis.call('SET', keyName(key), job .. '|' .. id)
          end
        else
          id = redis.call('XADD', KEYS[1], '*', 'p', f['p'] or '', 't', string.format('%.0f', now), 'j', job)
        end
        redis.call('XDEL', KEYS[2], ARGV[1])
        -- The job lives again: its record (history kept, no expiry) and where it is now.
        redis.pcall('SET', atName(job), id)
        redis.pcall('ZREM', endedName('D'), job)
        local rec = recordOf(job)
        redis.pcall('HDEL', endedRecords(), job)
        if rec then redis.pcall('SET', recName(job), 'q' .. US .. (string.match(rec, '^[^\31]*\31[^\31]*(.*)$') or '')) end
        redis.call('PUBLISH', ARGV[2], 1)
        return id
        """;

    /// <summary>
    /// KEYS: stream. ARGV: group, this consumer, min idle ms. Removes other consumers that hold no pending entries and
    /// have been idle longer than min idle (one with pending entries is never removed: Redis would drop its entries).
    /// Returns the names removed.
    /// </summary>
    public const string RemoveIdleConsumers = """
        local removed = {}
        local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
        if not ok then return removed end
        for _, c in ipairs(consumers) do
          local name, pending, idle
          for i = 1, #c, 2 do
            if c[i] == 'name' then name = c[i + 1] elseif c[i] == 'pending' then pending = c[i + 1] elseif c[i] == 'idle' then idle = c[i + 1] end
          end
          if name ~= ARGV[2] and pending == 0 and idle > tonumber(ARGV[3]) then
            redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
            removed[#removed + 1] = name
          end
        end
        return removed
        """;

    /// <summary>KEYS: stream. ARGV: group, consumer. Removes the consumer if it holds no pending entries; returns 1 if it did.</summary>
    public const string RemoveConsumerIfEmpty = """
        local mine = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
        if #mine > 0 then return 0 end
        redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
        return 1
        """;

    /// <summary>
    /// KEYS: stream, epoch. ARGV: group, consumer. Creates the group (and the stream) unless it exists, reading from the
    /// stream's start so jobs enqueued before any consumer existed are delivered too, and the queue's epoch (see
    /// <see cref="Epoch"/>) unless it exists, in one step: a group made again after Redis lost its data comes with a new
    /// epoch. Returns the epoch.
    /// </summary>
    public const string CreateGroup = Epoch + """
        local created = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
        if type(created) == 'table' and created.err and not string.find(created.err, 'BUSYGROUP', 1, true) then return created end
        return epochOf(KEYS[2], ARGV[2])
        """;

    /// <summary>
    /// KEYS: stream, delayed, scheduled. ARGV: group, job id, finished-job retention ms, 1 to cancel only a scheduled job
    /// that has not come due (else 0), cancel channel, how long a cancel asked of a running job is kept (ms). Cancels a
    /// job by id, wherever it is: a scheduled one or one waiting for a retry leaves the delayed set, a queued one not yet
    /// delivered to any consumer leaves the stream; either way its key is freed and it ends as cancelled. A queued entry
    /// cannot be acknowledged (no consumer holds it) and a deleted one ahead of the group would cost the group its lag
    /// (see <see cref="Unsettled"/>): it is deleted and the stream's counters set back as if it had never been added
    /// (<c>XSETID</c> with <c>ENTRIESADDED</c> one lower and <c>MAXDELETEDID</c> as it was: O(1), Redis 7.0 or later;
    /// before, Redis has no lag to keep). Nothing reads the deleted id of an entry no consumer was given. One
    /// delivered to a consumer (running, or in its prefetch) is marked in its record and its stream id published on the
    /// cancel channel, for the instance that holds it. Returns { 1 } cancelled, { 2, consumer } asked,
    /// { 3 } already ended (its record says how), or { 0 } unknown.
    /// </summary>
    public const string Cancel = Now + KeyHelpers + RecordHelpers + Vanished + Settled + """

        local job = ARGV[2]
        local rec = recordOf(job)
        if isEnded(rec) then return { 3 } end
        local at = string.format('%.0f', now)
        local function canceled(id, attempt, enq, key)
          releaseKey(key, job, nil, 0)
          endRecord(job, id, 'C', header('C', '1', at, attempt or '1', enq or '0', '', '', '') .. historyOf(rec), at, tonumber(ARGV[3]))
          redis.pcall('DEL', atName(job))
          return { 1 }
        end
        local function fromMember(member)
          local _, attempt, stamp, tail = string.match(member, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
          return attempt, stamp, splitKey(tail or '')
        end
        local member = redis.call('HGET', KEYS[3], job)
        if member then
          redis.call('HDEL', KEYS[3], job)
          redis.call('ZREM', KEYS[2], member)
          local attempt, stamp, key = fromMember(member)
          return canceled(job, attempt, stamp, key)
        end
        if ARGV[4] == '1' then return { 0 } end
        local where = redis.pcall('GET', atName(job))
        if type(where) ~= 'string' then
          where = nil
          if string.match(job, '^%d+%-%d+$') then where = job end
        end
        if not where then return { 0 } end
        if string.sub(where, 1, 1) == 'z' then
          local due = delayedMember(job, string.sub(where, 2))
          if not due then return { 0 } end
          redis.call('ZREM', KEYS[2], due)
          local attempt, stamp, key = fromMember(due)
          return canceled('', attempt, stamp, key)
        end
        local entry = redis.call('XRANGE', KEYS[1], where, where)
        if #entry == 0 then return { 0 } end
        local f = {}
        local raw = entry[1][2]
        for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
        local held = redis.call('XPENDING', KEYS[1], ARGV[1], where, where, 1)
        if #held > 0 then
          if rec then
            rec = (string.match(rec, '^([^\31]*)') or 'r') .. US .. '1' .. (string.match(rec, '^[^\31]*\31[^\31]*(.*)$') or '')
            redis.pcall('SET', recName(job), rec)
          else
            redis.pcall('SET', recName(job), header('r', '1', '', f['a'] or '1', f['t'] or '0', '', '', ''), 'PX', ARGV[6])
          end
          redis.pcall('PUBLISH', ARGV[5], where)
          return { 2, held[1][2] }
        end
        -- Completed and acknowledged, waiting for the trim: not queued (its key is the completed job's, kept for its retention).
        if settled(where) then return { 0 } end
        -- Queued, ahead of the group: no consumer holds it, so it cannot be acknowledged, and a tombstone at or ahead of
        -- the group's position costs the group its lag (see Unsettled). The stream's counters are set back as if the
        -- entry had never been added: one entry fewer added, and the deleted id from before (0-1 for none: 0-0 cannot
        -- be set). Nothing reads the deleted id of an entry no consumer was given (see Vanished).
        local okInfo, info = pcall(redis.call, 'XINFO', 'STREAM', KEYS[1])
        redis.call('XDEL', KEYS[1], where)
        if okInfo then
          local last, deleted, added
          for i = 1, #info, 2 do
            local k = info[i]
            if k == 'last-generated-id' then last = info[i + 1] elseif k == 'max-deleted-entry-id' then deleted = info[i + 1]
            elseif k == 'entries-added' then added = info[i + 1] end
          end
          -- Redis before 7.0 reports neither (and no lag to keep).
          if last and deleted and type(added) == 'number' then
            if deleted == '0-0' then deleted = '0-1' end
            redis.pcall('XSETID', KEYS[1], last, 'ENTRIESADDED', added - 1, 'MAXDELETEDID', deleted)
          end
        end
        return canceled(where, f['a'], f['t'], f['k'])
        """;

    /// <summary>
    /// KEYS: stream, epoch. ARGV: group, consumer, id, job id, attempt, enqueued at, started at ('' when it never
    /// started), idempotency key (empty: none), the epoch it was fetched under, 1 when this consumer already found that
    /// Redis lost it (else 0), finished-job retention ms. Ends an entry this consumer still owns as cancelled (it honoured
    /// a cancel by id, or the cancel came before it started): acknowledged and left to the trim (see <see cref="Trim"/>),
    /// its key freed, its record ended.
    /// Returns 1, or 0 when another consumer owns it now.
    /// </summary>
    public const string SettleCanceled = Now + Vanished + KeyHelpers + RecordHelpers + Trim + """

        local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
        if #mine == 0 and ARGV[10] ~= '1' and not vanished(ARGV[3], KEYS[2], ARGV[9]) then return 0 end
        ackAndTrim(ARGV[3])
        releaseKey(ARGV[8], ARGV[4], nil, 0)
        local rec = recordOf(ARGV[4])
        local at = string.format('%.0f', now)
        endRecord(ARGV[4], ARGV[3], 'C', header('C', '1', at, ARGV[5], ARGV[6], ARGV[2], ARGV[7], '') .. historyOf(rec), at, tonumber(ARGV[11]))
        return 1
        """;

    /// <summary>
    /// KEYS: stream, delayed, scheduled. ARGV: group, job id. Reads where a job is, without writing anything:
    /// { 'E', record } ended (see the remarks: in the ended hash, or a record string the previous version wrote); { 'S', record or '', due, attempt, enqueued at } scheduled;
    /// { 'R', record or '', due, attempt, enqueued at } waiting for a retry; { 'P', record or '', stream id, fields,
    /// consumer, ms since its consumer last claimed it, deliveries } delivered to a consumer; { 'Q', record or '', stream
    /// id, fields } queued; { '' } unknown (or ended longer ago than the retention).
    /// </summary>
    public const string Status = KeyHelpers + RecordHelpers + Vanished + Settled + """
        local job = ARGV[2]
        local rec = recordOf(job)
        if isEnded(rec) then return { 'E', rec } end
        local function fromMember(kind, member, score)
          local _, attempt, stamp = string.match(member, '^([^|]*)|([^|]*)|([^|]*)|')
          return { kind, rec or '', score or '', attempt or '1', stamp or '0' }
        end
        local member = redis.call('HGET', KEYS[3], job)
        if member then return fromMember('S', member, redis.call('ZSCORE', KEYS[2], member)) end
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
        local entry = redis.call('XRANGE', KEYS[1], where, where)
        if #entry == 0 then return { '' } end
        local held = redis.call('XPENDING', KEYS[1], ARGV[1], where, where, 1)
        if #held > 0 then return { 'P', rec or '', where, entry[1][2], held[1][2], held[1][3], held[1][4] } end
        if settled(where) then return { '' } end
        return { 'Q', rec or '', where, entry[1][2] }
        """;

    /// <summary>
    /// KEYS: delayed, scheduled. ARGV: count, scan limit. Lists up to count scheduled jobs (not retries), soonest first,
    /// reading at most scan limit members of the delayed set: { id, due (unix ms), scheduled at (unix ms), payload }... .
    /// </summary>
    public const string ListScheduled = """
        local function payloadOf(tail)
          local _, payload = string.match(tail, '^\1([^\1]*)\1(.*)$')
          return payload or tail
        end
        local found = {}
        local want, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
        local start = 0
        while #found < want and start < limit do
          local page = redis.call('ZRANGE', KEYS[1], start, start + 255, 'WITHSCORES')
          if #page == 0 then break end
          for i = 1, #page, 2 do
            local job, attempt, stamp, payload = string.match(page[i], '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
            if job and redis.call('HEXISTS', KEYS[2], job) == 1 then
              found[#found + 1] = { job, page[i + 1], stamp, payloadOf(payload) }
              if #found >= want then break end
            end
          end
          start = start + 256
        end
        return found
        """;

    /// <summary>
    /// KEYS: stream, delayed, dead, scheduled. ARGV: group. Returns { unsettled stream entries (pending + lag, or the
    /// stream's length when Redis cannot tell the lag; see <see cref="Unsettled"/>), delayed retries, dead letters, pending,
    /// lag or -1, { name, pending, idle ms }..., scheduled jobs } for the queue's group.
    /// </summary>
    public const string Stats = GroupState + """
        local scheduled = redis.call('HLEN', KEYS[4])
        local length = redis.call('XLEN', KEYS[1])
        local delayed = redis.call('ZCARD', KEYS[2])
        local dead = redis.call('XLEN', KEYS[3])
        local pending, lag = 0, -1
        local consumers = {}
        local p, _, l = groupState()
        if p then
          pending = p
          if l then lag = l end
          local okc, list = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
          if okc then
            for _, c in ipairs(list) do
              local name, p, idle
              for i = 1, #c, 2 do
                if c[i] == 'name' then name = c[i + 1] elseif c[i] == 'pending' then p = c[i + 1] elseif c[i] == 'idle' then idle = c[i + 1] end
              end
              consumers[#consumers + 1] = { name, p, idle }
            end
          end
        end
        -- Settled entries wait for the trim (see Trim): the stream's unsettled entries are pending + lag, when known.
        if lag >= 0 then length = pending + lag end
        return { length, delayed - scheduled, dead, pending, lag, consumers, scheduled }
        """;

    /// <summary>
    /// KEYS: stream, delayed, scheduled. ARGV: group, phases (letters in the order L, Z, S, D, C: L the stream, newest
    /// first; Z the delayed set, soonest first; S, D, C the ended lists, newest first), live kinds wanted (a subset of
    /// Q queued, P running, S scheduled, R retrying), cursor phase ('' to start), cursor position (a stream id or a
    /// score), cursor skip (members at that score already passed), limit, scan limit, error text ('' for any; lower
    /// case, matched in the job's last error, ASCII case-insensitive). Reads only. Returns { jobs, next phase ('' when
    /// done), next position, next skip, scanned } where each job is { job id, then its reply as <see cref="Status"/>
    /// gives it }. Ended records are fetched with one HMGET of the ended hash per batch (and one MGET of record strings
    /// the previous version wrote, for those not in the hash); at most scan limit entries are examined.
    /// </summary>
    public const string FindJobs = KeyHelpers + RecordHelpers + Vanished + """
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
        """;
}
