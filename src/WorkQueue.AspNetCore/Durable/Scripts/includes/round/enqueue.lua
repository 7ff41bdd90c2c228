-- enqueue(width, section): the round's enqueues. Reads the section's elements from ARGV (width 1: a payload alone,
-- due now, no key; width 3: payload, spec, idempotency key), ARGV[3] the capacity, ARGV[4] the nudge channel and
-- ARGV[11] the nudge tag; KEYS[1..5] (stream, delayed, scheduled, recurring, ids). Returns the answers, one per
-- element in order up to the first Redis refused (see round.lua), and that refusal's message or false.
--- @include "../now"
--- @include "../try"
--- @include "../keys"
--- @include "../unfinished"

local function enqueue(width, section)
  local ids, enqueueError = {}, false
  local count = section.count
  if count == 0 then return ids, enqueueError end
  local room = tonumber(ARGV[3]) - unfinished() - redis.call('ZCARD', KEYS[2])
  local stamp = string.format('%.0f', now)
  local added = 0
  if width == 1 then
    for j = 1, count do
      if added >= room then
        ids[j] = '#'
      else
        local id = redis.pcall('XADD', KEYS[1], '*', 'p', ARGV[section.first + j - 1], 't', stamp)
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
      local i = section.first + 3 * (j - 1)
      local payload, spec, key = ARGV[i], ARGV[i + 1], ARGV[i + 2]
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
  if added > 0 then redis.pcall('PUBLISH', ARGV[4], added .. '|' .. ARGV[11]) end
  return ids, enqueueError
end
