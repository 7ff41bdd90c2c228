-- try(...): redis.pcall with Redis's refusal as a second result (reply, nil; or nil, error message), so a caller can
-- tell a refused command from its reply in one line.

local function try(...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply.err then return nil, reply.err end
  return reply
end
