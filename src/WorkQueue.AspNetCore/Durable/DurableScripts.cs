namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// The Lua scripts of the durable-queue protocol. Each step that moves a job between places is one script, so a crash
/// between two commands can neither lose nor duplicate it, and every script touches only the queue's own keys (one hash
/// slot). Times come from Redis's own clock (<c>TIME</c>), so instances with skewed clocks agree on due times.
/// </summary>
/// <remarks>
/// Stream entry fields: <c>p</c> the payload (JSON), <c>a</c> the attempt (1 for the first run), <c>t</c> when the job was
/// first enqueued (Unix ms, Redis time), <c>j</c> the job's id (the stream id it was first stored under; absent on a first
/// attempt, whose job id is its own stream id). A delayed retry is a sorted-set member <c>jobId|attempt|enqueuedAt|payload</c>
/// scored by its due time.
/// </remarks>
internal static class DurableScripts
{
    private const string Now = """
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        """;

    /// <summary>
    /// <c>vanished(id)</c>: whether Redis lost an entry (a restart without persistence, a failover to an empty replica, a
    /// flush) rather than someone settling it: pending for no consumer, not in the stream, and never deleted from it (the
    /// stream's <c>max-deleted-entry-id</c> is below it, or there is no stream). Every way WorkQueue settles an entry
    /// deletes it (XDEL), which raises that id. Redis before 7.0 does not report it: there, nothing counts as vanished.
    /// KEYS[1] is the stream, ARGV[1] the group.
    /// </summary>
    private const string Vanished = "\n" + """
        local function before(a, b)
          local am, as = string.match(a, '^(%d+)-(%d+)$')
          local bm, bs = string.match(b, '^(%d+)-(%d+)$')
          if not am or not bm then return false end
          am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
          return am < bm or (am == bm and as < bs)
        end
        local function vanished(id)
          local okp, anyone = pcall(redis.call, 'XPENDING', KEYS[1], ARGV[1], id, id, 1)
          if okp and #anyone > 0 then return false end
          if #redis.call('XRANGE', KEYS[1], id, id) > 0 then return false end
          local ok, info = pcall(redis.call, 'XINFO', 'STREAM', KEYS[1])
          if not ok then return true end
          for i = 1, #info, 2 do
            if info[i] == 'max-deleted-entry-id' then return before(info[i + 1], id) end
          end
          return false
        end
        """ + "\n";

    /// <summary>
    /// KEYS: stream, delayed, scheduled, recurring, ids. ARGV: group, consumer, capacity, nudge channel, fetch count (0: no
    /// fetch), promote limit, enqueue count n, then n payloads, then their n specs, then the ids of completed entries. One
    /// turn of the store's loop in one call (one round trip, and under <c>appendfsync always</c> one fsync where three
    /// calls waited for three), in three parts that each fail on their own:
    /// <list type="number">
    /// <item>enqueues: adds as many payloads as the queue has room for (unfinished = stream entries + delayed retries and
    /// scheduled jobs), in order, until one is refused. A spec says how: empty, now; <c>d{ms}</c>, after a delay on Redis's
    /// clock; <c>a{unix ms}</c>, at a time (either, when due already, now); <c>r{unix ms}|{recurring id}</c>, a recurring
    /// job's occurrence, added only if no occurrence of that job at or after that time was added before (by any
    /// instance: the check and the add are this one script), else answered with an empty id. A job that is not due
    /// yet goes to the delayed set as a first attempt under a new job id <c>s{ms}-{n}</c>, recorded in the scheduled hash
    /// so that it can be cancelled or listed;</item>
    /// <item>acknowledgements: acknowledges and deletes the completed entries (so memory does not grow with history);</item>
    /// <item>the fetch, when asked: moves due retries and scheduled jobs to the stream, then reads up to fetch count new
    /// entries for the consumer.</item>
    /// </list>
    /// Returns { new ids, enqueue error or nil, acknowledgement error or nil, ms until the next delayed job is due or -1,
    /// entries, fetch error or nil }. Any enqueue publishes a nudge, so consumers asleep until a later due time look again.
    /// </summary>
    public const string Round = Now + """

        local function try(...)
          local reply = redis.pcall(...)
          if type(reply) == 'table' and reply.err then return nil, reply.err end
          return reply
        end
        local count = tonumber(ARGV[7])
        local ids, enqueueError = {}, false
        if count > 0 then
          local room = tonumber(ARGV[3]) - redis.call('XLEN', KEYS[1]) - redis.call('ZCARD', KEYS[2])
          local stamp = string.format('%.0f', now)
          local added = 0
          for i = 8, 7 + count do
            if added >= room then break end
            local spec = ARGV[i + count]
            local kind = string.sub(spec, 1, 1)
            local due = now
            if kind == 'd' then due = now + tonumber(string.sub(spec, 2)) elseif kind == 'a' then due = tonumber(string.sub(spec, 2)) end
            local id, err
            if kind == 'r' then
              local at, recurring = string.match(spec, '^r(%d+)|(.*)$')
              local last = redis.call('HGET', KEYS[4], recurring)
              if last and tonumber(last) >= tonumber(at) then
                id = ''
              else
                -- Added before it is recorded: a refused record can at worst let another instance add it again (at
                -- least once), never lose it.
                id, err = try('XADD', KEYS[1], '*', 'p', ARGV[i], 'a', '1', 't', stamp)
                if id then redis.pcall('HSET', KEYS[4], recurring, at) end
              end
            elseif due > now then
              local n, refused = try('INCR', KEYS[5])
              if n then
                id = 's' .. stamp .. '-' .. n
                local member = id .. '|1|' .. stamp .. '|' .. ARGV[i]
                local added
                added, err = try('ZADD', KEYS[2], string.format('%.0f', due), member)
                if not err then redis.pcall('HSET', KEYS[3], id, member) end
              else
                err = refused
              end
              if err then id = nil end
            else
              id, err = try('XADD', KEYS[1], '*', 'p', ARGV[i], 'a', '1', 't', stamp)
            end
            if not id then
              enqueueError = err
              break
            end
            ids[#ids + 1] = id
            if id ~= '' then added = added + 1 end
          end
          if added > 0 then redis.pcall('PUBLISH', ARGV[4], added) end
        end
        local ackError = false
        if #ARGV >= 8 + 2 * count then
          local done = {}
          for i = 8 + 2 * count, #ARGV do done[#done + 1] = ARGV[i] end
          local _, err = try('XACK', KEYS[1], ARGV[1], unpack(done))
          if not err then _, err = try('XDEL', KEYS[1], unpack(done)) end
          ackError = err or false
        end
        local nextDue, entries, fetchError = -1, {}, false
        if tonumber(ARGV[5]) > 0 then
          local due, err = try('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[6]))
          for _, member in ipairs(due or {}) do
            local job, attempt, stamp, payload = string.match(member, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
            local _, refused = try('XADD', KEYS[1], '*', 'p', payload, 'a', attempt, 't', stamp, 'j', job)
            if not refused then _, refused = try('ZREM', KEYS[2], member) end
            if not refused then redis.pcall('HDEL', KEYS[3], job) end
            if refused then
              err = refused
              break
            end
          end
          local first = try('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
          if first and #first > 0 then nextDue = math.max(0, tonumber(first[2]) - now) end
          local read, readError = try('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[5], 'STREAMS', KEYS[1], '>')
          if read then entries = read[1][2] end
          fetchError = readError or err or false
        end
        return { ids, enqueueError, ackError, nextDue, entries, fetchError }
        """;

    /// <summary>
    /// KEYS: stream. ARGV: group, consumer, id... Refreshes the claim of each entry this consumer still owns, without
    /// raising its delivery count (JUSTID) and without taking back an entry another consumer has reclaimed. Returns
    /// { ids this consumer no longer owns (another consumer took them, or they were settled elsewhere), ids Redis lost
    /// (see <see cref="Vanished"/>) }.
    /// </summary>
    public const string KeepAlive = Vanished + """
        local lost, gone = {}, {}
        for i = 3, #ARGV do
          local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
          if #mine == 1 then
            redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
          elseif vanished(ARGV[i]) then
            gone[#gone + 1] = ARGV[i]
          else
            lost[#lost + 1] = ARGV[i]
          end
        end
        return { lost, gone }
        """;

    /// <summary>
    /// KEYS: stream. ARGV: group, consumer, id... Takes back entries pending for this consumer that it does not hold (a
    /// call that read them lost its reply): for each still pending here, returns { id, fields, deliveries }; one deleted
    /// meanwhile is acknowledged. An entry another consumer has reclaimed is left to it.
    /// </summary>
    public const string Adopt = """
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
        return found
        """;

    /// <summary>
    /// KEYS: stream, dead. ARGV: group, consumer, min idle ms, cursor, count, max deliveries. Claims entries whose
    /// consumer has not refreshed them for min idle (XAUTOCLAIM raises their delivery count); an entry delivered more
    /// than max deliveries times is dead-lettered as poison in the same step. Returns { next cursor, { id, fields, deliveries }... }.
    /// With count 0 (no room to take anything now) it only looks: returns { cursor, {}, 1 } when some entry has been idle
    /// for min idle, else { cursor, {}, 0 }, so the caller can keep its next free slot for it.
    /// </summary>
    public const string Reclaim = Now + """

        if tonumber(ARGV[5]) == 0 then
          local idle = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', ARGV[3], '-', '+', 1)
          return { ARGV[4], {}, #idle }
        end
        local claimed = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'COUNT', ARGV[5])
        local keep = {}
        for _, entry in ipairs(claimed[2]) do
          local id = entry[1]
          local info = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
          local deliveries = info[1][4]
          if deliveries > tonumber(ARGV[6]) then
            local f = {}
            local raw = entry[2]
            for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
            redis.call('XADD', KEYS[2], '*', 'j', f['j'] or id, 'p', f['p'] or '', 'a', f['a'] or '1', 't', f['t'] or '0',
              'e', 'Delivered ' .. deliveries .. ' times without completing (its consumers stopped or crashed each time): treated as poison.',
              'r', 'poison', 'f', string.format('%.0f', now), 'c', ARGV[2])
            redis.call('XACK', KEYS[1], ARGV[1], id)
            redis.call('XDEL', KEYS[1], id)
          else
            keep[#keep + 1] = { id, entry[2], deliveries }
          end
        end
        if claimed[3] then
          for _, id in ipairs(claimed[3]) do redis.call('XACK', KEYS[1], ARGV[1], id) end
        end
        return { claimed[1], keep }
        """;

    /// <summary>
    /// KEYS: stream, delayed. ARGV: group, consumer, id, delay ms, member. Moves a failed entry this consumer still owns
    /// to the delayed set, due after the delay by Redis's clock; one Redis lost (<see cref="Vanished"/>) is stored there
    /// again. Returns 1, or 0 when another consumer owns it now.
    /// </summary>
    public const string ScheduleRetry = Now + Vanished + """

        local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
        if #mine == 0 and not vanished(ARGV[3]) then return 0 end
        redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[5])
        redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
        redis.call('XDEL', KEYS[1], ARGV[3])
        return 1
        """;

    /// <summary>
    /// KEYS: stream, dead. ARGV: group, consumer, id, job id, payload, attempt, enqueued at, error, reason. Moves an entry
    /// this consumer still owns (or that Redis lost, see <see cref="Vanished"/>) to the dead-letter stream. Returns 1, or 0
    /// when another consumer owns it now.
    /// </summary>
    public const string DeadLetter = Now + Vanished + """

        local mine = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
        if #mine == 0 and not vanished(ARGV[3]) then return 0 end
        redis.call('XADD', KEYS[2], '*', 'j', ARGV[4], 'p', ARGV[5], 'a', ARGV[6], 't', ARGV[7], 'e', ARGV[8], 'r', ARGV[9],
          'f', string.format('%.0f', now), 'c', ARGV[2])
        redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
        redis.call('XDEL', KEYS[1], ARGV[3])
        return 1
        """;

    /// <summary>
    /// KEYS: stream. ARGV: group, consumer, nudge channel, then per entry: id, job id, payload, attempt, enqueued at.
    /// Hands entries this consumer still owns (or that Redis lost, see <see cref="Vanished"/>) back as new entries at the
    /// stream's end (so any consumer reads them at once), same attempt. Returns how many were handed back.
    /// </summary>
    public const string Release = Vanished + """
        local n = 0
        for i = 4, #ARGV, 5 do
          local id = ARGV[i]
          local mine = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1, ARGV[2])
          if #mine == 1 or vanished(id) then
            redis.call('XADD', KEYS[1], '*', 'p', ARGV[i + 2], 'a', ARGV[i + 3], 't', ARGV[i + 4], 'j', ARGV[i + 1])
            redis.call('XACK', KEYS[1], ARGV[1], id)
            redis.call('XDEL', KEYS[1], id)
            n = n + 1
          end
        end
        if n > 0 then redis.call('PUBLISH', ARGV[3], n) end
        return n
        """;

    /// <summary>
    /// KEYS: stream, dead. ARGV: dead-letter id, nudge channel. Puts a dead letter back on the queue as a new job (attempt
    /// 1, same job id) and removes it from the dead letters. Returns the new stream id, or nil when there is no such dead letter.
    /// </summary>
    public const string Requeue = Now + """

        local found = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1])
        if #found == 0 then return false end
        local f = {}
        local raw = found[1][2]
        for i = 1, #raw, 2 do f[raw[i]] = raw[i + 1] end
        local id = redis.call('XADD', KEYS[1], '*', 'p', f['p'] or '', 'a', '1', 't', string.format('%.0f', now), 'j', f['j'] or ARGV[1])
        redis.call('XDEL', KEYS[2], ARGV[1])
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
    /// KEYS: delayed, scheduled. ARGV: job id. Cancels a scheduled job that has not come due. Returns 1, or 0 when there
    /// is no such job waiting (unknown, already due and moved to the stream, or cancelled).
    /// </summary>
    public const string CancelScheduled = """
        local member = redis.call('HGET', KEYS[2], ARGV[1])
        if not member then return 0 end
        redis.call('HDEL', KEYS[2], ARGV[1])
        return redis.call('ZREM', KEYS[1], member)
        """;

    /// <summary>
    /// KEYS: delayed, scheduled. ARGV: count, scan limit. Lists up to count scheduled jobs (not retries), soonest first,
    /// reading at most scan limit members of the delayed set: { id, due (unix ms), scheduled at (unix ms), payload }... .
    /// </summary>
    public const string ListScheduled = """
        local found = {}
        local want, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
        local start = 0
        while #found < want and start < limit do
          local page = redis.call('ZRANGE', KEYS[1], start, start + 255, 'WITHSCORES')
          if #page == 0 then break end
          for i = 1, #page, 2 do
            local job, attempt, stamp, payload = string.match(page[i], '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
            if job and redis.call('HEXISTS', KEYS[2], job) == 1 then
              found[#found + 1] = { job, page[i + 1], stamp, payload }
              if #found >= want then break end
            end
          end
          start = start + 256
        end
        return found
        """;

    /// <summary>
    /// KEYS: stream, delayed, dead, scheduled. ARGV: group. Returns { stream length, delayed retries, dead letters,
    /// pending, lag or -1, { name, pending, idle ms }..., scheduled jobs } for the queue's group.
    /// </summary>
    public const string Stats = """
        local scheduled = redis.call('HLEN', KEYS[4])
        local length = redis.call('XLEN', KEYS[1])
        local delayed = redis.call('ZCARD', KEYS[2])
        local dead = redis.call('XLEN', KEYS[3])
        local pending, lag = 0, -1
        local consumers = {}
        local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
        if ok then
          for _, g in ipairs(groups) do
            local name, p, l
            for i = 1, #g, 2 do
              if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'pending' then p = g[i + 1] elseif g[i] == 'lag' then l = g[i + 1] end
            end
            if name == ARGV[1] then
              pending = p
              if l then lag = l end
            end
          end
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
        return { length, delayed - scheduled, dead, pending, lag, consumers, scheduled }
        """;
}
