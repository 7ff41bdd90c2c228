-- now: Redis's clock, in Unix ms, read once at the start of a call (TIME). Every time these scripts write or compare
-- comes from Redis's clock, so instances with skewed clocks agree on due times and ages.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
