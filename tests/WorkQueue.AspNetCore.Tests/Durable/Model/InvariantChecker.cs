using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Durable.Calls;

namespace WorkQueue.AspNetCore.Tests.Durable.Model;

/// <summary>
/// Reads the queue's whole state from Redis after a step and compares it with the <see cref="ReferenceModel"/>:
/// <list type="bullet">
/// <item>every live job is in exactly one place (undelivered in the stream, in model order; pending for its consumer;
/// in the delayed set, with the scheduled hash for a scheduled one), and nothing else is there;</item>
/// <item>every ended job is listed once, in its ending's list, with its record (until trimmed), a dead-lettered one
/// with its dead letter; nothing else is listed or recorded;</item>
/// <item>a key names its live holder where it is, or a succeeded job as done (with an expiry), or nothing;</item>
/// <item>every <c>at:</c> pointer and <c>job:</c> record belongs to a live job (or expires), and every live job that
/// moved has its pointer; settled stream entries wait only behind a pending one (the trim); no other key exists;</item>
/// <item>the stats script's counts, the recurring hash, the scheduled-id counter and a sample of job statuses match.</item>
/// </list>
/// Where Redis picks something the model cannot (a stream id of a queued job, a score of an ended one), the first read
/// learns it and every later read must agree.
/// </summary>
internal sealed class InvariantChecker(ScriptDriver driver, ReferenceModel model, Random random)
{
    private readonly IDatabase _db = driver.Db;
    private readonly RedisStreamKeys _keys = driver.Keys;
    private readonly string _root = ((string)driver.Keys.Stream!)[..^"stream".Length];
    private readonly List<string> _problems = [];

    public void Check()
    {
        _problems.Clear();
        var group = ReadGroup();
        var stream = _db.StreamRange(_keys.Stream);
        var pending = group is null ? [] : _db.StreamPendingMessages(_keys.Stream, RedisStreamKeys.Group, 100_000, RedisValue.Null);
        CheckStream(group, stream, pending);
        CheckDelayed();
        CheckEnded();
        CheckDeadLetters();
        CheckNames();
        CheckStats();
        CheckRecurring();
        CheckStatuses();
        if (_problems.Count > 0)
        {
            throw new ModelMismatchException("Invariants broken:\n  - " + string.Join("\n  - ", _problems));
        }
    }

    private void Problem(string message) => _problems.Add(message);

    private (string LastDelivered, long Pending, long? Lag)? ReadGroup()
    {
        RedisResult groups;
        try
        {
            groups = _db.Execute("XINFO", "GROUPS", (string)_keys.Stream!);
        }
        catch (RedisServerException)
        {
            return null;
        }

        foreach (var raw in (RedisResult[])groups!)
        {
            var fields = (RedisResult[])raw!;
            string? name = null;
            string last = "0-0";
            long pendingCount = 0;
            long? lag = null;
            for (int i = 0; i + 1 < fields.Length; i += 2)
            {
                switch ((string?)fields[i])
                {
                    case "name": name = (string?)fields[i + 1]; break;
                    case "last-delivered-id": last = (string)fields[i + 1]!; break;
                    case "pending": pendingCount = (long)fields[i + 1]; break;
                    case "lag": lag = fields[i + 1].IsNull ? null : (long)fields[i + 1]; break;
                }
            }

            if (name == RedisStreamKeys.Group)
            {
                return (last, pendingCount, lag);
            }
        }

        return null;
    }

    private static string JobOf(StreamEntry e) => (string?)e["j"] ?? (string)e.Id!;

    private void CheckStream((string LastDelivered, long Pending, long? Lag)? group, StreamEntry[] stream, StreamPendingMessageInfo[] pending)
    {
        if (group is null)
        {
            Problem("the consumer group does not exist");
            return;
        }

        var cmp = StreamIdComparer.Instance;
        string last = group.Value.LastDelivered;
        var pendingIds = pending.ToDictionary(static p => (string)p.MessageId!, StringComparer.Ordinal);
        var byId = stream.ToDictionary(static e => (string)e.Id!, StringComparer.Ordinal);

        // Undelivered entries: the queued jobs, in the model's order (learning the stream ids of jobs moved to the stream).
        var undelivered = stream.Where(e => cmp.Compare((string)e.Id!, last) > 0).ToList();
        var queue = model.Queue;
        if (undelivered.Count != queue.Count || !undelivered.Select(JobOf).SequenceEqual(queue.Select(static j => j.JobId)))
        {
            Problem($"queued in the stream: [{string.Join(" ", undelivered.Select(e => $"{e.Id}:{JobOf(e)}"))}]; the model's queue: [{string.Join(" ", queue.Select(static j => j.JobId))}]");
        }
        else
        {
            for (int i = 0; i < queue.Count; i++)
            {
                var job = queue[i];
                var e = undelivered[i];
                string id = (string)e.Id!;
                if (job.StreamId is null)
                {
                    job.StreamId = id;
                    job.StreamIds.Add(id);
                }
                else if (job.StreamId != id)
                {
                    Problem($"{job} is queued as {id}, the model saw it as {job.StreamId}");
                }

                if (job.EnqueuedAt == 0)
                {
                    job.EnqueuedAt = (long)e["t"];
                }

                CheckFields(job, e, "queued");
            }
        }

        // Pending entries: the running jobs Redis holds, each for its consumer.
        var running = model.Jobs.Where(static j => j.Place == Place.Running && !j.Vanished).ToList();
        if (group.Value.Pending != running.Count || pending.Length != running.Count)
        {
            Problem($"pending: {group.Value.Pending} ({pending.Length} listed); the model has {running.Count} running in Redis");
        }

        foreach (var job in running)
        {
            if (!pendingIds.TryGetValue(job.StreamId!, out var p))
            {
                Problem($"{job} is not pending as {job.StreamId}");
                continue;
            }

            if (p.ConsumerName != job.Consumer || p.DeliveryCount != job.Deliveries)
            {
                Problem($"{job} is pending for {p.ConsumerName} with {p.DeliveryCount} deliveries; the model: {job.Consumer}, {job.Deliveries}");
            }

            if (!byId.TryGetValue(job.StreamId!, out var e))
            {
                Problem($"{job} is pending as {job.StreamId}, which is not in the stream");
            }
            else
            {
                CheckFields(job, e, "running");
            }
        }

        foreach (var p in pending)
        {
            if (!running.Any(j => j.StreamId == (string)p.MessageId!))
            {
                Problem($"entry {p.MessageId} is pending for {p.ConsumerName}, no running job of the model is");
            }
        }

        // Settled entries (delivered, pending for nobody) wait for the trim only behind an older pending one.
        string? oldestPending = pending.Length == 0 ? null : pending.Select(static p => (string)p.MessageId!).Min(cmp);
        foreach (var e in stream)
        {
            string id = (string)e.Id!;
            if (cmp.Compare(id, last) <= 0 && !pendingIds.ContainsKey(id) && (oldestPending is null || cmp.Compare(id, oldestPending) < 0))
            {
                Problem($"settled entry {id} (job {JobOf(e)}) is still in the stream with no older pending entry (oldest pending: {oldestPending ?? "none"}): not trimmed");
            }
        }

        if (group.Value.Lag is null)
        {
            Problem("the group's lag is unknown (a tombstone at or after its position)");
        }
        else if (group.Value.Lag != queue.Count)
        {
            Problem($"the group's lag is {group.Value.Lag}; the model has {queue.Count} queued");
        }
    }

    private void CheckFields(ModelJob job, StreamEntry e, string how)
    {
        string payload = (string)e["p"]!;
        int attempt = e["a"].IsNull ? 1 : (int)e["a"];
        string? key = e["k"].IsNull ? null : (string?)e["k"];
        long t = (long)e["t"];
        if (payload != job.Payload || attempt != job.Attempt || key != job.Key || t != job.EnqueuedAt)
        {
            Problem($"{how} entry {e.Id} of {job}: payload {payload}, attempt {attempt}, key {key}, t {t}; the model: {job.Payload}, {job.Attempt}, {job.Key}, {job.EnqueuedAt}");
        }
    }

    private void CheckDelayed()
    {
        var delayed = _db.SortedSetRangeByRankWithScores(_keys.Delayed);
        var scheduled = _db.HashGetAll(_keys.Scheduled).ToDictionary(static h => (string)h.Name!, static h => (string)h.Value!, StringComparer.Ordinal);
        var waiting = model.Jobs.Where(static j => j.Place is Place.Scheduled or Place.Retrying).ToList();
        if (delayed.Length != waiting.Count)
        {
            Problem($"delayed: {delayed.Length} members; the model has {waiting.Count} waiting: [{string.Join(" ", waiting)}]");
        }

        var members = delayed.ToDictionary(static d => (string)d.Element!, static d => (long)d.Score, StringComparer.Ordinal);
        foreach (var job in waiting)
        {
            if (!members.TryGetValue(job.Member!, out long score))
            {
                Problem($"{job} is not in the delayed set (member {job.Member})");
            }
            else if (score != job.Due)
            {
                Problem($"{job} is due at {score}; the model says {job.Due}");
            }

            bool inHash = scheduled.TryGetValue(job.JobId, out string? member);
            if (job.Place == Place.Scheduled && (!inHash || member != job.Member))
            {
                Problem($"{job} is scheduled but the scheduled hash has {(inHash ? member : "nothing")} for it");
            }
        }

        foreach (var (id, _) in scheduled)
        {
            if (!model.ById.TryGetValue(id, out var job) || job.Place != Place.Scheduled)
            {
                Problem($"the scheduled hash has {id}, which the model does not have scheduled ({(job is null ? "unknown" : job.ToString())})");
            }
        }

        foreach (var (member, _) in members)
        {
            if (!waiting.Any(j => j.Member == member))
            {
                Problem($"delayed member {member} belongs to no waiting job of the model");
            }
        }

        var counter = _db.StringGet(_keys.Ids);
        long ids = counter.IsNull ? 0 : (long)counter;
        if (ids != model.ScheduledCounter)
        {
            Problem($"the scheduled-id counter is {ids}; the model's {model.ScheduledCounter}");
        }
    }

    private void CheckEnded()
    {
        var records = _db.HashGetAll(_keys.EndedRecords).ToDictionary(static h => (string)h.Name!, static h => (string)h.Value!, StringComparer.Ordinal);
        var listedIn = new Dictionary<string, char>(StringComparer.Ordinal);
        foreach (var (letter, name) in new[] { ('S', _keys.Succeeded), ('D', _keys.DeadLettered), ('C', _keys.Canceled) })
        {
            foreach (var member in _db.SortedSetRangeByRankWithScores(name))
            {
                string id = (string)member.Element!;
                if (!listedIn.TryAdd(id, letter))
                {
                    Problem($"{id} is listed in ended:{listedIn[id]} and ended:{letter}");
                    continue;
                }

                if (!model.ById.TryGetValue(id, out var job) || !job.IsEnded || job.EndedLetter != letter || job.RecordGone)
                {
                    Problem($"{id} is listed in ended:{letter}; the model: {(job is null ? "unknown" : job + (job.RecordGone ? " (record gone)" : string.Empty))}");
                    continue;
                }

                long score = (long)member.Score;
                if (job.EndedScore is null)
                {
                    job.EndedScore = score;
                }
                else if (job.EndedScore != score)
                {
                    Problem($"{job} ended at {score} in its list; the model learned {job.EndedScore}");
                }
            }
        }

        foreach (var job in model.Jobs.Where(static j => j.IsEnded && !j.RecordGone))
        {
            if (!listedIn.ContainsKey(job.JobId))
            {
                Problem($"{job} is not listed in ended:{job.EndedLetter}");
            }

            if (!records.TryGetValue(job.JobId, out string? record))
            {
                Problem($"{job} has no ended record");
                continue;
            }

            string[] fields = record.Split('\u001e')[0].Split('\u001f');
            if (fields[0] != job.EndedLetter.ToString() || (fields[1] == "1") != job.EndedCancel)
            {
                Problem($"{job}'s ended record says state '{fields[0]}', cancel '{fields[1]}'; the model: {job.EndedLetter}, cancel {job.EndedCancel}");
            }

            // The job type, after the error, only when it is not the default one (whoever ended the job).
            string recorded = fields.Length > 8 ? fields[8] : string.Empty;
            if (recorded != job.JobType || fields.Length > 9 || (fields.Length == 9 && job.JobType.Length == 0))
            {
                Problem($"{job}'s ended record names job type '{recorded}' in {fields.Length} fields; the model: '{job.JobType}'");
            }
        }

        foreach (var (id, _) in records)
        {
            if (!listedIn.ContainsKey(id))
            {
                Problem($"the ended hash has a record of {id}, which no ended list holds ({(model.ById.TryGetValue(id, out var job) ? job : "unknown")})");
            }
        }
    }

    private void CheckDeadLetters()
    {
        var dead = _db.StreamRange(_keys.Dead);
        var expected = model.Jobs.Where(static j => j.DeadLetterId is not null).ToDictionary(static j => j.DeadLetterId!, StringComparer.Ordinal);
        if (dead.Length != expected.Count)
        {
            Problem($"the dead stream has {dead.Length} entries; the model {expected.Count}");
        }

        foreach (var e in dead)
        {
            if (!expected.TryGetValue((string)e.Id!, out var job))
            {
                Problem($"dead letter {e.Id} (job {(string?)e["j"]}) is not one the model has");
            }
            else if ((string?)e["j"] != job.JobId || (string?)e["p"] != job.Payload || (e["k"].IsNull ? null : (string?)e["k"]) != job.Key)
            {
                Problem($"dead letter {e.Id}: job {(string?)e["j"]}, payload {(string?)e["p"]}, key {(string?)e["k"]}; the model: {job}");
            }
        }
    }

    /// <summary>Every other name of the queue: keys, pointers, live records; nothing else may exist.</summary>
    private void CheckNames()
    {
        var names = ((RedisResult[])_db.Execute("KEYS", _root + "*")!).Select(static r => (string)r!).ToList();
        var fixedNames = new HashSet<string>(StringComparer.Ordinal)
        {
            "stream", "delayed", "scheduled", "ids", "epoch", "recurring", "dead", "ended", "ended:S", "ended:D", "ended:C", "ended-sweep",
        };
        var keysSeen = new HashSet<string>(StringComparer.Ordinal);
        var pointersSeen = new HashSet<string>(StringComparer.Ordinal);
        var recordsSeen = new HashSet<string>(StringComparer.Ordinal);
        var others = names.Where(n => !fixedNames.Contains(n[_root.Length..])).ToList();

        // Read in one pipeline: a step's check must stay a few round trips however many names there are.
        var values = others.Select(n => _db.StringGetAsync(n)).ToList();
        var ttls = others.Select(n => _db.ExecuteAsync("PTTL", n)).ToList();
        for (int i = 0; i < others.Count; i++)
        {
            string name = others[i];
            string tail = name[_root.Length..];
            string? value = values[i].GetAwaiter().GetResult();
            long ttl = (long)ttls[i].GetAwaiter().GetResult();
            if (tail.StartsWith("key:", StringComparison.Ordinal))
            {
                string key = tail[4..];
                keysSeen.Add(key);
                CheckKey(key, value, ttl);
            }
            else if (tail.StartsWith("at:", StringComparison.Ordinal))
            {
                string job = tail[3..];
                pointersSeen.Add(job);
                CheckPointer(job, value, ttl);
            }
            else if (tail.StartsWith("job:", StringComparison.Ordinal))
            {
                string job = tail[4..];
                recordsSeen.Add(job);
                CheckLiveRecord(job, value, ttl);
            }
            else
            {
                Problem($"unexpected name {name}");
            }
        }

        foreach (var (key, hold) in model.Keys)
        {
            if (!keysSeen.Contains(key))
            {
                Problem($"key {key} is missing: the model says {(hold.Done ? "done by " : "held by ")}{hold.Job}");
            }
        }

        foreach (var job in model.Jobs.Where(static j => j.InRedis && j.Place != Place.Scheduled && j.Where != j.JobId))
        {
            if (!pointersSeen.Contains(job.JobId))
            {
                Problem($"{job} moved (it is at {job.Where}) but has no at: pointer");
            }
        }

        foreach (var job in model.Jobs.Where(static j => j.InRedis && j.HasLiveRecord))
        {
            if (!recordsSeen.Contains(job.JobId))
            {
                Problem($"{job} has no live record (job:), the model says it has one");
            }
        }
    }

    private void CheckKey(string key, string? value, long ttl)
    {
        if (!model.Keys.TryGetValue(key, out var hold))
        {
            Problem($"key {key} = {value} (ttl {ttl}) exists; the model says nobody holds it");
            return;
        }

        var job = hold.Job;
        if (hold.Done)
        {
            if (value != job.JobId + "|done" || ttl <= 0 || job.Place != Place.Succeeded)
            {
                Problem($"key {key} = {value} (ttl {ttl}); the model: done by {job}");
            }
        }
        else if (!job.InRedis || value != job.JobId + "|" + job.Where || ttl != -1)
        {
            Problem($"key {key} = {value} (ttl {ttl}); the model: held by {job} at {(job.InRedis ? job.Where : "no place")}");
        }
    }

    private void CheckPointer(string id, string? value, long ttl)
    {
        if (!model.ById.TryGetValue(id, out var job) || !job.InRedis || job.Place == Place.Scheduled || job.Where == job.JobId)
        {
            if (ttl <= 0)
            {
                Problem($"pointer at:{id} = {value} (no expiry) of a job that has not moved or does not live: {(job is null ? "unknown" : job.ToString())}");
            }

            return;
        }

        if (value != job.Where)
        {
            Problem($"pointer at:{id} = {value}; {job} is at {job.Where}");
        }
    }

    private void CheckLiveRecord(string id, string? value, long ttl)
    {
        if (!model.ById.TryGetValue(id, out var job) || !job.InRedis || !job.HasLiveRecord)
        {
            if (ttl <= 0)
            {
                Problem($"live record job:{id} (no expiry) of a job that does not live or has none: {(job is null ? "unknown" : job.ToString())}: {value?.Replace('\u001f', '|').Replace('\u001e', '/')}");
            }

            return;
        }

        string[] fields = (value ?? string.Empty).Split('\u001e')[0].Split('\u001f');
        if ((ttl > 0) != job.LiveRecordExpires || (fields.Length > 1 && (fields[1] == "1") != job.CancelAsked))
        {
            Problem($"live record job:{id} = {value?.Replace('\u001f', '|').Replace('\u001e', '/')} (ttl {ttl}); the model: {job}, cancel asked {job.CancelAsked}, expires {job.LiveRecordExpires}");
        }
    }

    private void CheckStats()
    {
        var s = driver.Stats();
        long queued = model.Queue.Count;
        long running = model.Jobs.Count(static j => j.Place == Place.Running && !j.Vanished);
        long retrying = model.Count(Place.Retrying);
        long scheduled = model.Count(Place.Scheduled);
        long dead = model.Jobs.Count(static j => j.DeadLetterId is not null);
        if (s.Length != queued + running || s.Pending != running || s.Lag != queued || s.DelayedRetries != retrying || s.Scheduled != scheduled || s.DeadLetters != dead)
        {
            Problem($"stats: length {s.Length}, pending {s.Pending}, lag {s.Lag}, delayed retries {s.DelayedRetries}, scheduled {s.Scheduled}, dead letters {s.DeadLetters}; the model: {queued + running}, {running}, {queued}, {retrying}, {scheduled}, {dead}");
        }
    }

    private void CheckRecurring()
    {
        var hash = _db.HashGetAll(_keys.Recurring).ToDictionary(static h => (string)h.Name!, static h => (string)h.Value!, StringComparer.Ordinal);
        var expected = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var (id, r) in model.Recurring)
        {
            if (r.Last is { } last)
            {
                expected[id] = last.ToString(CultureInfo.InvariantCulture);
            }

            if (r.Paused)
            {
                expected["~" + id] = "1";
            }

            if (r.Record is { } rec)
            {
                expected["@" + id] = string.Create(CultureInfo.InvariantCulture, $"{rec.Generation}|{rec.State}|{rec.Schedule}|{rec.Base}");
            }
        }

        string Show(Dictionary<string, string> d) => string.Join(" ", d.OrderBy(static p => p.Key, StringComparer.Ordinal).Select(static p => $"{p.Key}={p.Value}"));
        if (Show(hash) != Show(expected))
        {
            Problem($"recurring hash: {Show(hash)}; the model: {Show(expected)}");
        }
    }

    /// <summary>A few jobs' status (status.lua, what GetJobAsync reads) against where the model has them.</summary>
    private void CheckStatuses()
    {
        if (model.Jobs.Count == 0)
        {
            return;
        }

        for (int i = 0; i < 3; i++)
        {
            var job = model.Jobs[random.Next(model.Jobs.Count)];
            var reply = driver.Status(job.JobId);
            var expected = job switch
            {
                { IsEnded: true, RecordGone: false } => StatusKind.Ended,
                { IsEnded: true } => StatusKind.Unknown,
                { Place: Place.Scheduled } => StatusKind.Scheduled,
                { Place: Place.Retrying } => StatusKind.Retrying,
                { Place: Place.Queued } => StatusKind.Queued,
                { Place: Place.Running, Vanished: false } => StatusKind.Running,
                _ => StatusKind.Unknown,
            };
            if (reply.Kind != expected)
            {
                Problem($"status of {job}: {reply.Kind}; the model expects {expected}");
            }
            else if (reply.Kind == StatusKind.Running && reply.Consumer != job.Consumer)
            {
                Problem($"status of {job}: held by {reply.Consumer}");
            }
            else if (reply.Kind == StatusKind.Ended && reply.Record.State != job.EndedLetter)
            {
                Problem($"status of {job}: ended record of state '{reply.Record.State}'");
            }
            else if (reply.Kind != StatusKind.Unknown && (reply.JobType ?? string.Empty) != job.JobType)
            {
                Problem($"status of {job}: job type '{reply.JobType}'; the model: '{job.JobType}'");
            }
        }
    }
}
