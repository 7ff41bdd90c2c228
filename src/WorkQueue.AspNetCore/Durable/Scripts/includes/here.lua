-- here(...): Redis Cluster. While the queue's slot migrates to another node, a command on a key the script builds
-- itself (not among its KEYS: a job's record or pointer, an idempotency key, the ended hash) fails when this node lacks
-- that key, not yet written or already moved ("Script attempted to access a non local key"); the scripts touch such
-- keys with redis.pcall, which takes that failure for a missing key, so the script went on and wrote the rest (a job
-- moved to the delayed set without its record and pointer). here reads the named keys with one MGET through
-- redis.call before the script's first write, so that the script fails whole, nothing written, and the store sends it
-- again once the slot has moved: Redis refuses a command on several keys of a migrating slot unless all of them are on
-- this node (TRYAGAIN when some are, ASK when none is). Outside a migration, and on one Redis, it never fails (the keys
-- share the queue's hash tag). MGET: one call for any number of keys, of any type (it answers nil for a key that holds
-- no string, never WRONGTYPE), and the documented least-privilege ACL already allows it. Returns MGET's reply.
local function here(...)
  return redis.call('MGET', ...)
end
