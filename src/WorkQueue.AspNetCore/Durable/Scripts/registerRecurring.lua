-- A recurring job's schedule as the instances share it: the field @{id} of the recurring hash (KEYS[1]) holds
-- {generation}|{state}|{schedule}|{base}, the state c (registered in code), r (changed at runtime) or x (removed at
-- runtime), the schedule the job runs on (for x, the one removed), and for a runtime change the schedule in code it
-- overrode (base). Every write increments the generation. ARGV: the job's id, the change (c, r or x), the instance's
-- schedule. A registration in code (c, each start) is written unless the same schedule is registered, or a runtime
-- change overrode that very schedule (so a restart keeps a runtime Remove or AddOrUpdate; a deploy with another
-- schedule in code wins over both). A runtime change is always written; a removal also lifts the job's pause in the
-- store. Returns { generation, state, schedule, Redis's time (Unix ms) } as they are now. An id starting with @ or ~
-- names another job's schedule or pause field (the job's own fields are {id}, @{id} and ~{id}): refused with an error,
-- nothing written (AddRecurringJob and AddOrUpdate refuse such ids first).
--- @include "includes/now"

local recurring = KEYS[1]
local id, change, schedule = ARGV[1], ARGV[2], ARGV[3]

local first = string.sub(id, 1, 1)
if first == '@' or first == '~' or id == '' then
  return redis.error_reply('ERR recurring job id must not be empty nor start with @ or ~: ' .. id)
end
local field = '@' .. id
local record = redis.call('HGET', recurring, field)
local generation, state, current, base = 0, nil, nil, nil
if record then
  local g
  g, state, current, base = string.match(record, '^(%d+)|(%a)|([^|]*)|(.*)$')
  generation = tonumber(g) or 0
end
if change == 'c' then
  if state == 'c' and current == schedule then return { generation, state, current, now } end
  if (state == 'r' or state == 'x') and base == schedule then return { generation, state, current, now } end
  base = schedule
else
  if state == 'c' then base = current elseif not state then base = '' end
  if change == 'x' and current then schedule = current end
end
generation = generation + 1
redis.call('HSET', recurring, field, generation .. '|' .. change .. '|' .. schedule .. '|' .. base)
-- A removed job's pause goes with it: the job added again (at runtime, or by a deploy) is a new one, not paused.
if change == 'x' then redis.call('HDEL', recurring, '~' .. id) end
return { generation, change, schedule, now }
