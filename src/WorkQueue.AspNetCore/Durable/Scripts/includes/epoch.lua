-- epochOf(key, consumer): the queue's epoch, a token written together with its consumer group (see createGroup.lua).
-- Redis losing its data loses the token with the group, and whoever makes the group again writes a new one, so an
-- entry fetched under another epoch than the current one was lost by Redis, whatever happened to the new stream
-- since. A missing token (evicted, deleted, or the group made again by something other than createGroup.lua) is
-- written anew here, so entries read from now on carry one. Returns '' when Redis refuses (the entries then rely on
-- vanished's other test only).

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
