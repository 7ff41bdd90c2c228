-- enqueue(width, section): the round's enqueues. Reads the section's elements from ARGV (width 1: a payload alone,
-- due now, no key; width 3: payload, spec, idempotency key), ARGV[3] the capacity, ARGV[4] the nudge channel and
-- ARGV[11] the nudge tag; KEYS[1..5] (stream, delayed, scheduled, recurring, ids). Records in enqueued.answers one
-- answer per element, in order (see round.lua; ?{why} for each one not stored), each as soon as it is known (so a
-- fault that escapes leaves the answers given so far true), and in enqueued.error the part's error or false: a write Redis refused (that
-- element and every later one answered ?{error}: none of them stored), a key the part writes holding another type,
-- or a fault in the script. Every element is read (its spec, its key) before the first write; one that cannot be
-- read is answered ?{why} alone, and the others go on. Each answer is recorded right after its element's write, so a
-- fault while handling an element leaves no doubt about it: it is answered ?{fault}, not stored, and the rest go on.
-- On Redis Cluster while the queue's slot migrates, a keyed enqueue whose key is not on this node is such a fault (its
-- key's read fails it, see holderOf in keys.lua and here.lua).
--- @include "../now"
--- @include "../try"
--- @include "../keys"
--- @include "../unfinished"

-- What a spec asks for: its kind ('' now, 'd' after a delay, 'a' at a time, 'r' a recurring occurrence) and its
-- fields (ms; or fire time, schedule, recurring id), else nil and why it cannot be read. Numbers of at most 15 digits
-- (a double holds them exactly; 100 years of ms is 13).
local function readSpec(spec)
  if spec == '' then return '' end
  local kind = string.sub(spec, 1, 1)
  if kind == 'd' or kind == 'a' then
    local ms = string.match(spec, '^[da](%d+)$')
    if not ms or #ms > 15 then return nil, 'malformed spec' end
    return kind, tonumber(ms)
  end
  if kind == 'r' then
    local fire, schedule, recurring = string.match(spec, '^r(%d+)|([^|]*)|(.+)$')
    if not fire or #fire > 15 then return nil, 'malformed recurring spec' end
    return kind, tonumber(fire), schedule, recurring
  end
  return nil, 'unknown spec'
end

-- Why key does not hold the type the part writes (nil: it does, or holds nothing).
local function wrongType(key, expected)
  local t = redis.pcall('TYPE', key)
  if type(t) == 'table' then t = t.ok or t.err end
  if t == expected or t == 'none' then return nil end
  return 'WRONGTYPE ' .. key .. ' holds a ' .. tostring(t) .. ', not a ' .. expected
end

-- What the round's enqueue part answered (read by round.lua, also after a fault).
local enqueued = { answers = {}, error = false }

local function faultText(fault)
  if type(fault) == 'table' then return tostring(fault.err) end
  return tostring(fault)
end

local function enqueue(width, section)
  local ids, partError = enqueued.answers, false
  local count = section.count
  if count == 0 then return end
  -- The room is read first: a stream or delayed set of another type refuses every enqueue, before any write.
  local ok, room = pcall(function() return tonumber(ARGV[3]) - unfinished() - redis.call('ZCARD', KEYS[2]) end)
  if not ok then
    partError = faultText(room)
    for j = 1, count do ids[j] = '?' .. partError end
    enqueued.error = partError
    return
  end
  local stamp = string.format('%.0f', now)
  local added = 0
  if width == 1 then
    for j = 1, count do
      if partError then
        ids[j] = '?' .. partError
      elseif added >= room then
        ids[j] = '#'
      else
        local id = redis.pcall('XADD', KEYS[1], '*', 'p', ARGV[section.first + j - 1], 't', stamp)
        if type(id) == 'table' then
          partError = id.err
          ids[j] = '?' .. partError
        else
          ids[j] = id
          added = added + 1
        end
      end
    end
  else
    -- Every element read before the first write: its spec and key, and the types of the keys its kind writes.
    local kinds, nums, schedules, recurrings = {}, {}, {}, {}
    local delayed, recurring = false, false
    for j = 1, count do
      local i = section.first + 3 * (j - 1)
      local kind, num, schedule, id = readSpec(ARGV[i + 1])
      local key = ARGV[i + 2]
      if not kind then
        ids[j] = '?' .. num
      elseif string.find(key, '%c') then
        ids[j] = '?malformed idempotency key'
      else
        kinds[j], nums[j], schedules[j], recurrings[j] = kind, num, schedule, id
        delayed = delayed or kind == 'd' or kind == 'a'
        recurring = recurring or kind == 'r'
      end
    end
    local delayedRefused, recurringRefused
    if delayed then
      delayedRefused = wrongType(KEYS[3], 'hash') or wrongType(KEYS[5], 'string')
      if not delayedRefused then
        local n = redis.pcall('GET', KEYS[5])
        if type(n) == 'string' and not string.match(n, '^%-?%d+$') then delayedRefused = 'the id counter ' .. KEYS[5] .. ' holds no integer' end
      end
    end
    if recurring then recurringRefused = wrongType(KEYS[4], 'hash') end
    -- The first write Redis refused, and the first fault: each is the part's error.
    local refusal, fault
    local j = 1
    local function run()
      while j <= count do
        if ids[j] then
          -- Unreadable: answered already.
        elseif refusal then
          ids[j] = '?' .. refusal
        else
          local i = section.first + 3 * (j - 1)
          local payload, key = ARGV[i], ARGV[i + 2]
          local kind = kinds[j]
          local name, holder
          if key ~= '' then
            name = keyName(key)
            -- Strict: on Redis Cluster while the slot migrates, a key not on this node fails this element before its
            -- write (see here.lua), where it was taken for free and the job stored without it.
            local job, where = holderOf(name, true)
            if job and alive(job, where, KEYS[2], KEYS[3]) then holder = job end
          end
          local id, err, at
          if holder then
            ids[j] = '!' .. holder
          elseif kind == 'r' and recurringRefused then
            ids[j] = '?' .. recurringRefused
          elseif kind == 'r' then
            -- Refusals and a claim made elsewhere are answered before the room is looked at: only an occurrence
            -- that would be added needs room, and the others are told what became of theirs.
            local fire, schedule, job = nums[j], schedules[j], recurrings[j]
            local record = redis.call('HGET', KEYS[4], '@' .. job)
            local generation, state, current
            if record then
              generation, state, current = string.match(record, '^(%d+)|(%a)|([^|]*)|')
            else
              -- Lost with Redis's data (or its registration's write failed): the first offer makes its schedule the
              -- job's, as a start would, so that one schedule at a time claims again (instances that disagreed about
              -- it before the loss would otherwise all run theirs).
              redis.pcall('HSET', KEYS[4], '@' .. job, '1|c|' .. schedule .. '|' .. schedule)
            end
            local last = redis.call('HGET', KEYS[4], job)
            if state == 'x' then
              -- Removed at runtime (by any instance): the offering instance drops the job.
              ids[j] = '-' .. generation
            elseif current and current ~= schedule then
              -- Another schedule is the job's now (a runtime change, or a deploy): the offering one is stale.
              ids[j] = '^' .. generation .. '|' .. current
            elseif redis.call('HGET', KEYS[4], '~' .. job) == '1' then
              -- Paused in the store (by any instance): nothing is enqueued or claimed.
              ids[j] = '~'
            elseif last and not string.match(last, '^%d+$') then
              -- A claim that is no time (written by hand, or a field another name collided with): neither read as
              -- none (the occurrence could run twice) nor as any time.
              ids[j] = '?the claim of recurring job ' .. job .. ' holds no time'
            elseif last and tonumber(last) >= fire then
              ids[j] = ''
            elseif added >= room then
              ids[j] = '#'
            else
              -- Added before it is recorded: a refused record can at worst let another instance add it again (at
              -- least once), never lose it.
              id, err = try('XADD', KEYS[1], '*', 'p', payload, 't', stamp)
              if id then
                ids[j] = id
                redis.pcall('HSET', KEYS[4], job, string.format('%.0f', fire))
              end
            end
          elseif (kind == 'd' or kind == 'a') and delayedRefused then
            ids[j] = '?' .. delayedRefused
          elseif added >= room then
            ids[j] = '#'
          else
            local due = now
            if kind == 'd' then due = now + nums[j] elseif kind == 'a' then due = nums[j] end
            if due > now then
              local n, refused = try('INCR', KEYS[5])
              if n then
                id = 's' .. stamp .. '-' .. n
                local score = string.format('%.0f', due)
                local member = id .. '|1|' .. stamp .. '|' .. keyTag(key) .. payload
                local _, refusedAdd = try('ZADD', KEYS[2], score, member)
                err = refusedAdd
                if err then
                  id = nil
                else
                  ids[j] = id
                  redis.pcall('HSET', KEYS[3], id, member)
                end
                at = 'z' .. score
              else
                err = refused
              end
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
                ids[j] = id
              end
            end
          end
          if err then
            -- Redis refused the element's write: neither it nor any later one is stored (see the header).
            refusal = err
            ids[j] = '?' .. err
          elseif id then
            added = added + 1
            -- Taken after the add: a refused write leaves the job without its key (a repeat may add another), never
            -- a key without its job.
            if name then redis.pcall('SET', name, id .. '|' .. (at or id)) end
          end
        end
        j = j + 1
      end
    end
    while true do
      local done, thrown = pcall(run)
      if done then break end
      -- A fault while handling element j (a bug, a read Redis refused): its answer, if recorded, stands (it was
      -- recorded with its write); else it is not stored. The others go on.
      local why = faultText(thrown)
      if not ids[j] then ids[j] = '?' .. why end
      fault = fault or why
      j = j + 1
    end
    partError = refusal or fault or delayedRefused or recurringRefused or false
  end
  -- '{added}|{tag}': the tag tells the publishing consumer which of its rounds this is (see OwnNudgeFilter);
  -- every other consumer, of any version, fetches on any message.
  if added > 0 then redis.pcall('PUBLISH', ARGV[4], added .. '|' .. ARGV[11]) end
  enqueued.error = partError
end
