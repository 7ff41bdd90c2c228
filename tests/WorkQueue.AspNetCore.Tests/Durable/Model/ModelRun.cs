using System.Globalization;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;

namespace WorkQueue.AspNetCore.Tests.Durable.Model;

/// <summary>
/// One seeded run of the model test: each step picks an operation with the seeded <see cref="Random"/>, applies it to
/// Redis (through <see cref="ScriptDriver"/>) and to the <see cref="ReferenceModel"/>, compares the scripts' replies with
/// what the model expects, then <see cref="InvariantChecker"/> reads Redis whole and compares it with the model.
/// </summary>
internal sealed class ModelRun
{
    private const int HistoryLength = 30;
    private const int MaxAttempts = 3;
    private static readonly string[] KeyPool = ["k0", "k1", "k2", "k3", "k4"];
    private static readonly string[] RecurringIds = ["ra", "rb"];
    private static readonly string[] Schedules = ["0 * * * * *", "*/2 * * * * *"];

    private readonly Random _rng;
    private readonly ReferenceModel _m = new();
    private readonly ScriptDriver _d;
    private readonly InvariantChecker _check;
    private readonly Queue<string> _history = new();
    private readonly ModelOps _ops;
    private readonly Dictionary<string, long> _nextFire = new(StringComparer.Ordinal);
    private readonly RedisStreamKeys _keys;
    private int _n;
    private int _instances;

    public ModelRun(IDatabase db, int seed, ModelOps ops)
    {
        Seed = seed;
        _rng = new Random(seed);
        _ops = ops;

        // The settings a seed runs with: most seeds keep records and an unbounded queue; some a small capacity, no
        // key retention, no records, or poison after two deliveries.
        Settings = new ModelSettings(
            Capacity: _rng.Next(4) == 0 ? 6 : 1_000_000,
            KeyRetentionMs: _rng.Next(3) == 0 ? 0 : 3_600_000,
            FinishedRetentionMs: _rng.Next(6) == 0 ? 0 : 3_600_000,
            MaxFinished: 100_000,
            MaxDeliveries: _rng.Next(3) == 0 ? 1 : 3,
            Prefetch: 1 + _rng.Next(3));
        _keys = new RedisStreamKeys("model" + seed.ToString(CultureInfo.InvariantCulture) + "-" + Guid.NewGuid().ToString("N")[..6], "q");
        _d = new ScriptDriver(db, _keys, Settings);
        _check = new InvariantChecker(_d, _m, new Random(seed ^ 0x5bd1e995));
    }

    public int Seed { get; }

    public ModelSettings Settings { get; }

    public int Steps { get; private set; }

    /// <summary>Gets how many times each operation ran (for the test's output).</summary>
    public Dictionary<string, int> OpCounts { get; } = new(StringComparer.Ordinal);

    public void Run(int steps)
    {
        for (int i = 0; i < 3; i++)
        {
            Spawn();
        }

        _d.CreateGroup(_m.Instances[0].Name);
        for (int step = 1; step <= steps; step++)
        {
            Steps = step;
            string what = string.Empty;
            try
            {
                what = Step();
                Remember(step, what);
                _check.Check();
            }
            catch (Exception ex) when (ex is ModelMismatchException or RedisException or InvalidCastException or KeyNotFoundException or InvalidOperationException or NullReferenceException)
            {
                if (what.Length == 0)
                {
                    Remember(step, "(the step that failed)");
                }

                throw new ModelFailedException(Describe(step, ex), ex);
            }
        }
    }

    /// <summary>The failure's report: the seed to replay, the step, the recent history, what disagreed.</summary>
    private string Describe(int step, Exception ex) =>
        string.Create(CultureInfo.InvariantCulture, $"""
            Durable model test failed: seed {Seed}, step {step} (replay: WORKQUEUE_MODEL_SEED={Seed} WORKQUEUE_MODEL_STEPS={step}{(_ops.Extra.Count == 0 ? string.Empty : " WORKQUEUE_MODEL_OPS=" + string.Join(",", _ops.Extra))}).
            Settings: {Settings}. Queue keys: {_keys.Stream}.
            {ex.GetType().Name}: {ex.Message}
            Last {_history.Count} steps:
              {string.Join("\n  ", _history)}
            Jobs not ended: {string.Join(", ", _m.Jobs.Where(j => !j.IsEnded && j.Place != Place.Lost).Take(40))}
            Instances: {string.Join(", ", _m.Instances.Select(i => $"{i} holds [{string.Join(" ", i.Held.Select(h => "#" + h.N))}]"))}
            """);

    private void Remember(int step, string what)
    {
        _history.Enqueue(string.Create(CultureInfo.InvariantCulture, $"{step}: {what}"));
        while (_history.Count > HistoryLength)
        {
            _history.Dequeue();
        }
    }

    private string Step()
    {
        var live = _m.Instances.Where(static i => i.Alive).ToList();
        var takers = live.Where(i => !i.Paused && i.Held.Count < Settings.Prefetch).ToList();
        var holders = live.Where(static i => i.Held.Count > 0).ToList();
        var choices = new List<(string Name, int Weight, Func<string> Run)>
        {
            ("enqueue", 20, () => Enqueue(Pick(live))),
            ("fetch", takers.Count > 0 ? 14 : 0, () => Fetch(Pick(takers))),
            ("succeed", holders.Count > 0 ? 14 : 0, () => Succeed(Pick(holders))),
            ("fail", holders.Count > 0 ? 10 : 0, () => Fail(Pick(holders))),
            ("postpone", holders.Any(static i => i.Held.Any(static h => !h.CancelDelivered)) ? 3 : 0, () => Postpone(Pick(holders.Where(static i => i.Held.Any(static h => !h.CancelDelivered)).ToList()))),
            ("cancel", _m.Jobs.Count > 0 ? 7 : 0, Cancel),
            ("cancel-other-id", _ops.CancelByStreamId && _m.Jobs.Count > 0 ? 4 : 0, CancelByOtherId),
            ("settle-cancel", holders.Any(static i => i.Held.Any(static h => h.CancelDelivered)) ? 4 : 0, SettleCancel),
            ("heartbeat", holders.Count > 0 ? 3 : 0, () => Heartbeat(Pick(holders))),
            ("die", live.Count >= 2 ? 2 : 0, () => Die(Pick(live))),
            ("reclaim", takers.Count > 0 && _m.Instances.Any(static i => !i.Alive && i.Held.Count > 0) ? 6 : 0, () => Reclaim(Pick(takers))),
            ("pause", live.Any(static i => !i.Paused) ? 2 : 0, () => Pause(Pick(live.Where(static i => !i.Paused).ToList()))),
            ("resume", live.Any(static i => i.Paused) ? 4 : 0, () => Resume(Pick(live.Where(static i => i.Paused).ToList()))),
            ("requeue", _m.Jobs.Any(static j => j.DeadLetterId is not null) ? 3 : 0, Requeue),
            ("delete-dead-letter", _m.Jobs.Any(static j => j.DeadLetterId is not null) ? 1 : 0, DeleteDeadLetter),
            ("trim", 2, () => Trim(Pick(live))),
            ("recurring-offer", 6, RecurringOffer),
            ("recurring-pause", 2, RecurringPause),
            ("recurring-register", 2, RecurringRegister),
            ("data-loss", _ops.DataLoss ? 1 : 0, DataLoss),
        };
        int total = choices.Sum(static c => c.Weight);
        int roll = _rng.Next(total);
        foreach (var (name, weight, run) in choices)
        {
            if (roll < weight)
            {
                OpCounts[name] = OpCounts.GetValueOrDefault(name) + 1;
                return run();
            }

            roll -= weight;
        }

        throw new InvalidOperationException("No operation chosen.");
    }

    private T Pick<T>(IReadOnlyList<T> items) => items[_rng.Next(items.Count)];

    private ModelInstance Spawn()
    {
        var instance = new ModelInstance("i" + (_instances++).ToString(CultureInfo.InvariantCulture));
        _m.Instances.Add(instance);
        return instance;
    }

    private int Room(ModelInstance instance) => instance.Alive && !instance.Paused ? Settings.Prefetch - instance.Held.Count : 0;

    /// <summary>
    /// The next job's payload: of the queue's default type for two jobs in three, else of one of two other job types;
    /// one in four carries an enqueuing trace (so a default-type one has a header without a name); the rest are bare.
    /// </summary>
    private string NextPayload(out int n)
    {
        n = ++_n;
        string json = string.Create(CultureInfo.InvariantCulture, $"{{\"n\":{n}}}");
        string? type = _rng.Next(3) == 0 ? (_rng.Next(2) == 0 ? "sms" : "billing.receipt:v2") : null;
        string? trace = _rng.Next(4) == 0 ? string.Create(CultureInfo.InvariantCulture, $"00-{n:x32}-{n:x16}-01") : null;
        return WorkQueue.AspNetCore.Durable.JobTypeEnvelope.Write(type, trace, json);
    }

    // ---- Operations -------------------------------------------------------------------------------------------------

    private string Enqueue(ModelInstance instance)
    {
        int count = 1 + _rng.Next(3);
        var items = new List<(EnqueueItem Item, int N)>();
        for (int i = 0; i < count; i++)
        {
            string payload = NextPayload(out int n);
            string key = _rng.Next(3) == 0 ? Pick(KeyPool) : string.Empty;
            int kind = _rng.Next(10);
            string spec = kind switch
            {
                // Scheduled far ahead (never due in a run), due 1 ms after the round (promoted by a later fetch), or
                // at a time that has passed (stored at once).
                7 => RedisStreamStore.DelaySpec(TimeSpan.FromMilliseconds(ModelSettings.FarMs)),
                8 => RedisStreamStore.DelaySpec(TimeSpan.FromMilliseconds(1)),
                9 => RedisStreamStore.AtSpec(DateTimeOffset.FromUnixTimeMilliseconds(1_000)),
                _ => string.Empty,
            };
            items.Add((new EnqueueItem(payload, spec, key), n));
        }

        int fetch = _rng.Next(2) == 0 ? Room(instance) : 0;
        var reply = _d.Round(instance.Name, [.. items.Select(static i => i.Item)], [], fetch, trim: false, Settings.MaxFinished);
        var outcome = ApplyEnqueues(items, reply);
        ApplyFetch(instance, fetch, reply);
        return $"enqueue by {instance}: {string.Join(", ", outcome)}{FetchNote(fetch, reply)}";
    }

    private static string FetchNote(int fetch, ModelRoundReply reply) =>
        fetch == 0 ? string.Empty : $"; fetched {reply.Fetched.Count} of {fetch}: [{string.Join(" ", reply.Fetched.Select(static e => e.JobId))}]";

    /// <summary>The enqueue part of a round, in order, as round.lua does it: the model's answer for each, checked against Redis's.</summary>
    private List<string> ApplyEnqueues(List<(EnqueueItem Item, int N)> items, ModelRoundReply reply)
    {
        Expect(reply.EnqueueError is null, $"the enqueue part failed: {reply.EnqueueError}");
        Expect(reply.Ids.Length == items.Count, $"{reply.Ids.Length} answers for {items.Count} enqueues");
        long room = Settings.Capacity - _m.Unfinished - _m.Delayed;
        long added = 0;
        string stamp = reply.Now.ToString(CultureInfo.InvariantCulture);
        var notes = new List<string>();
        for (int i = 0; i < items.Count; i++)
        {
            var (item, n) = items[i];
            string id = reply.Ids[i];
            string? key = item.Key.Length == 0 ? null : item.Key;
            string note = $"#{n}{(key is null ? string.Empty : " k=" + key)}{(item.Spec.Length == 0 ? string.Empty : " " + item.Spec)}";
            if (item.Spec.StartsWith('r'))
            {
                notes.Add(note + " -> " + ApplyOffer(item, n, id, room, ref added, reply.Now));
                continue;
            }

            if (key is not null && _m.HolderOf(key) is { } holder)
            {
                Expect(id == "!" + holder.JobId, $"{note}: expected !{holder.JobId} (the key's holder, {holder}), Redis answered '{id}'");
                notes.Add(note + " -> dup of #" + holder.N);
                continue;
            }

            if (added >= room)
            {
                Expect(id == "#", $"{note}: expected # (full: capacity {Settings.Capacity}, unfinished {_m.Unfinished}, delayed {_m.Delayed}, added {added}), Redis answered '{id}'");
                notes.Add(note + " -> full");
                continue;
            }

            added++;
            bool scheduled = item.Spec.StartsWith('d');
            ModelJob job;
            if (scheduled)
            {
                long due = reply.Now + long.Parse(item.Spec.AsSpan(1), CultureInfo.InvariantCulture);
                string expected = "s" + stamp + "-" + (_m.ScheduledCounter + 1).ToString(CultureInfo.InvariantCulture);
                Expect(id == expected, $"{note}: expected scheduled id {expected}, Redis answered '{id}'");
                _m.ScheduledCounter++;
                job = new ModelJob(id, n, item.Payload, key)
                {
                    Place = Place.Scheduled,
                    Due = due,
                    EnqueuedAt = reply.Now,
                    Member = id + "|1|" + stamp + "|" + (key is null ? string.Empty : "\u0001" + key + "\u0001") + item.Payload,
                };
            }
            else
            {
                Expect(IsStreamId(id), $"{note}: expected a new stream id, Redis answered '{id}'");
                Expect(!_m.ById.ContainsKey(id), $"{note}: the new id {id} is an id the model already knows ({(_m.ById.TryGetValue(id, out var other) ? other : null)})");
                job = new ModelJob(id, n, item.Payload, key) { Place = Place.Queued, StreamId = id, EnqueuedAt = reply.Now };
                job.StreamIds.Add(id);
                _m.Queue.Add(job);
            }

            _m.Add(job);
            if (key is not null)
            {
                _m.Keys[key] = new KeyHold(job, false);
            }

            notes.Add(note + " -> " + id);
        }

        return notes;
    }

    /// <summary>A recurring occurrence's offer, as round.lua answers it.</summary>
    private string ApplyOffer(EnqueueItem item, int n, string id, long room, ref long added, long now)
    {
        string[] parts = item.Spec[1..].Split('|');
        long fire = long.Parse(parts[0], CultureInfo.InvariantCulture);
        string schedule = parts[1];
        string recurring = parts[2];
        if (!_m.Recurring.TryGetValue(recurring, out var state))
        {
            _m.Recurring[recurring] = state = new ModelRecurring();
        }

        string expected;
        bool fresh = false;
        long addedBefore = added;
        if (state.Record is not { } record)
        {
            state.Record = (1, "c", schedule, schedule);
            expected = Decide();
        }
        else if (record.State == "x")
        {
            expected = "-" + record.Generation.ToString(CultureInfo.InvariantCulture);
        }
        else if (record.Schedule != schedule)
        {
            expected = "^" + record.Generation.ToString(CultureInfo.InvariantCulture) + "|" + record.Schedule;
        }
        else
        {
            expected = Decide();
        }

        if (fresh)
        {
            Expect(IsStreamId(id), $"offer #{n} {item.Spec}: expected a new stream id, Redis answered '{id}'");
            added++;
            state.Last = fire;
            var job = new ModelJob(id, n, item.Payload, null) { Place = Place.Queued, StreamId = id, EnqueuedAt = now };
            job.StreamIds.Add(id);
            _m.Queue.Add(job);
            _m.Add(job);
            return id;
        }

        Expect(id == expected, $"offer #{n} {item.Spec}: expected '{expected}', Redis answered '{id}'");
        return expected.Length == 0 ? "claimed elsewhere" : expected;

        string Decide()
        {
            if (state.Paused)
            {
                return "~";
            }

            if (state.Last is { } last && last >= fire)
            {
                return string.Empty;
            }

            if (addedBefore >= room)
            {
                return "#";
            }

            fresh = true;
            return "(new)";
        }
    }

    /// <summary>The fetch part of a round: due delayed jobs promoted in order, then the read of the first undelivered ones.</summary>
    private void ApplyFetch(ModelInstance instance, int fetch, ModelRoundReply reply)
    {
        if (fetch == 0)
        {
            Expect(reply.Fetched.Count == 0, "a round without a fetch read entries");
            return;
        }

        Expect(reply.FetchError is null, $"the fetch part failed: {reply.FetchError}");
        var due = _m.Jobs
            .Where(j => j.Place is Place.Scheduled or Place.Retrying && j.Due <= reply.Now)
            .OrderBy(static j => j.Due)
            .ThenBy(static j => j.Member, StringComparer.Ordinal)
            .Take(256)
            .ToList();
        foreach (var job in due)
        {
            job.Place = Place.Queued;
            job.StreamId = null;
            job.Member = null;
            _m.Queue.Add(job);
            _m.MoveKey(job);
        }

        var expected = _m.Queue.Take(fetch).ToList();
        Expect(
            reply.Fetched.Select(static e => e.JobId).SequenceEqual(expected.Select(static j => j.JobId)),
            $"{instance} fetched [{string.Join(" ", reply.Fetched.Select(static e => e.JobId))}], the model expected [{string.Join(" ", expected.Select(static j => j.JobId))}] (due promoted: [{string.Join(" ", due.Select(static j => j.JobId))}])");
        for (int i = 0; i < expected.Count; i++)
        {
            var job = expected[i];
            var entry = reply.Fetched[i];
            CheckEntry(job, entry, "fetched");
            _m.Queue.RemoveAt(0);
            Deliver(instance, job, entry.StreamId, 1, reply.Epoch);
        }
    }

    private void CheckEntry(ModelJob job, DurableEntry entry, string how)
    {
        Expect(
            entry.Payload == job.Payload && entry.Attempt == job.Attempt && entry.IdempotencyKey == job.Key && (job.EnqueuedAt == 0 || entry.EnqueuedAtMs == job.EnqueuedAt),
            $"{how} entry {entry.StreamId} of {job}: payload {entry.Payload}, attempt {entry.Attempt}, key {entry.IdempotencyKey}, enqueued at {entry.EnqueuedAtMs}; the model has {job.Payload}, {job.Attempt}, {job.Key}, {job.EnqueuedAt}");
        Expect(job.StreamId is null || job.StreamId == entry.StreamId, $"{how} {job} as {entry.StreamId}, but the model saw it queued as {job.StreamId}");
        job.EnqueuedAt = entry.EnqueuedAtMs;
    }

    private static void Deliver(ModelInstance instance, ModelJob job, string streamId, long deliveries, string epoch)
    {
        job.Place = Place.Running;
        job.StreamId = streamId;
        if (!job.StreamIds.Contains(streamId))
        {
            job.StreamIds.Add(streamId);
        }

        job.Consumer = instance.Name;
        job.Deliveries = deliveries;
        job.Epoch = epoch;
        job.CancelDelivered = false;
        job.Vanished = false;
        job.StartedAt = 0;
        instance.Held.Add(job);
    }

    private string Fetch(ModelInstance instance)
    {
        int fetch = 1 + _rng.Next(Room(instance));
        var reply = _d.Round(instance.Name, [], [], fetch, trim: false, Settings.MaxFinished);
        ApplyFetch(instance, fetch, reply);
        return $"fetch by {instance}{FetchNote(fetch, reply)}";
    }

    private string Succeed(ModelInstance instance)
    {
        var acks = instance.Held.Where(_ => _rng.Next(2) == 0).ToList();
        if (acks.Count == 0)
        {
            acks.Add(Pick(instance.Held));
        }

        foreach (var job in acks)
        {
            job.StartedAt = job.StartedAt == 0 ? 1_700_000_000_000 : job.StartedAt;
        }

        int fetch = _rng.Next(3) == 0 ? Room(instance) + acks.Count : 0;
        if (!instance.Alive || instance.Paused)
        {
            fetch = 0;
        }

        bool trim = _rng.Next(4) == 0;
        var reply = _d.Round(instance.Name, [], [.. acks.Select(static j => j.Held())], fetch, trim, Settings.MaxFinished);
        Expect(reply.AckError is null, $"the acknowledgement part failed: {reply.AckError}");
        Expect(acks.Count == 0 || reply.AcksApplied, "the round says its acknowledgements were not applied");
        Expect(reply.InvalidAcks == 0, $"the round left out {reply.InvalidAcks} acknowledgements as unreadable");
        Expect(reply.TrimError is null, $"the trim part failed: {reply.TrimError}");
        foreach (var job in acks)
        {
            instance.Held.Remove(job);
            _m.ReleaseKeyOnSuccess(job, Settings.KeyRetentionMs);
            End(job, Place.Succeeded, job.CancelDelivered || (job.HasLiveRecord && job.CancelAsked));
            job.EndedScore = Settings.FinishedRetentionMs > 0 ? reply.Now : null;
        }

        ApplyTrim(trim, reply.Now, Settings.MaxFinished);
        ApplyFetch(instance, fetch, reply);
        return $"succeed by {instance}: [{string.Join(" ", acks.Select(static j => "#" + j.N))}]{FetchNote(fetch, reply)}";
    }

    private void End(ModelJob job, Place place, bool cancel)
    {
        job.Place = place;
        job.Consumer = null;
        job.CancelDelivered = false;
        job.HasLiveRecord = false;
        job.LiveRecordExpires = false;
        job.CancelAsked = false;
        job.Vanished = false;
        job.EndedCancel = cancel;
        job.RecordGone = Settings.FinishedRetentionMs == 0;
        job.EndedScore = null;
        job.Member = null;
        _m.Queue.Remove(job);
    }

    /// <summary>The trim part of a round that asked for it: each ended list's oldest members beyond the cap dropped with their records.</summary>
    private void ApplyTrim(bool trim, long now, long cap)
    {
        if (!trim)
        {
            return;
        }

        long cutoff = now - Settings.FinishedRetentionMs;
        foreach (var place in new[] { Place.Succeeded, Place.DeadLettered, Place.Canceled })
        {
            var listed = _m.Jobs
                .Where(j => j.Place == place && !j.RecordGone)
                .OrderBy(static j => j.EndedScore ?? throw new ModelMismatchException($"{j} has no score learned in its ended list"))
                .ThenBy(static j => j.JobId, StringComparer.Ordinal)
                .ToList();
            long expired = listed.Count(j => j.EndedScore < cutoff);
            long over = Math.Min(65_536, Math.Max(listed.Count - cap, expired));
            foreach (var job in listed.Take((int)Math.Max(0, over)))
            {
                job.RecordGone = true;
                job.EndedScore = null;
            }
        }
    }

    private string Fail(ModelInstance instance)
    {
        var job = Pick(instance.Held);
        job.StartedAt = 1_700_000_000_000;
        if (job.CancelDelivered || job.Attempt >= MaxAttempts || _rng.Next(8) == 0)
        {
            return DeadLetter(instance, job);
        }

        long delay = _rng.Next(3) == 0 ? ModelSettings.FarMs : 0;
        var held = job.Held();
        bool stored = _d.ScheduleRetry(instance.Name, held, delay, "boom " + job.Attempt.ToString(CultureInfo.InvariantCulture));
        Expect(stored, $"the retry of {job} by its owner {instance} was refused");
        MoveToDelayed(instance, job, held.ToSettled().RetryMember, "retry");
        job.Attempt++;
        job.CancelDelivered = false;
        job.HasLiveRecord = true;
        job.LiveRecordExpires = false;
        return $"fail by {instance}: #{job.N} retry {(delay == 0 ? "due now" : "far")} (attempt {job.Attempt} due {job.Due})";
    }

    /// <summary>
    /// A held job handed back unrun (its type unknown to this instance, during a rolling deploy): to the delayed set as
    /// the same attempt, its key and pointer with it, its record as it was.
    /// </summary>
    private string Postpone(ModelInstance instance)
    {
        var job = Pick(instance.Held.Where(static h => !h.CancelDelivered).ToList());
        long delay = _rng.Next(3) == 0 ? ModelSettings.FarMs : 0;
        var held = job.Held();
        bool stored = _d.Postpone(instance.Name, held, delay);
        Expect(stored, $"the hand-back of {job} by its owner {instance} was refused");
        MoveToDelayed(instance, job, held.ToSettled().SameAttemptMember, "hand-back");
        return $"postpone by {instance}: #{job.N} handed back {(delay == 0 ? "due now" : "far")} (attempt {job.Attempt} due {job.Due})";
    }

    /// <summary>A held job the script just put in the delayed set under <paramref name="member"/>: it waits there, its key and pointer with it.</summary>
    private void MoveToDelayed(ModelInstance instance, ModelJob job, string member, string what)
    {
        double? score = _d.Db.SortedSetScore(_keys.Delayed, member);
        Expect(score is not null, $"the {what} of {job} stored no member {member} in the delayed set");
        instance.Held.Remove(job);
        job.Place = Place.Retrying;
        job.Due = (long)score!.Value;
        job.Member = member;
        job.StreamId = null;
        job.Consumer = null;
        job.Vanished = false;
        _m.MoveKey(job);
    }

    private string DeadLetter(ModelInstance instance, ModelJob job)
    {
        bool stored = _d.DeadLetter(instance.Name, job.Held(), "boom", "failed");
        Expect(stored, $"the dead letter of {job} by its owner {instance} was refused");
        instance.Held.Remove(job);
        _m.ReleaseKey(job);
        End(job, Place.DeadLettered, job.CancelDelivered || (job.HasLiveRecord && job.CancelAsked));
        job.DeadLetterId = LearnDeadLetter(job);
        return $"fail by {instance}: #{job.N} dead-lettered as {job.DeadLetterId}";
    }

    /// <summary>The dead letter a script just added for the job (the newest entry of the dead stream naming it).</summary>
    private string LearnDeadLetter(ModelJob job)
    {
        LearnDeadLetters([job]);
        return job.DeadLetterId!;
    }

    /// <summary>The dead letters a script just added for these jobs, in order, at the dead stream's end.</summary>
    private void LearnDeadLetters(List<ModelJob> jobs)
    {
        if (jobs.Count == 0)
        {
            return;
        }

        var newest = _d.Db.StreamRange(_keys.Dead, "-", "+", jobs.Count, Order.Descending).Reverse().ToArray();
        Expect(
            newest.Select(static e => (string?)e["j"]).SequenceEqual(jobs.Select(static j => j.JobId)),
            $"the dead stream ends with [{string.Join(" ", newest.Select(static e => (string?)e["j"]))}], the model expected dead letters of [{string.Join(" ", jobs.Select(static j => j.JobId))}]");
        for (int i = 0; i < jobs.Count; i++)
        {
            jobs[i].DeadLetterId = (string)newest[i].Id!;
        }
    }

    private string Cancel() => CancelJob(Pick(_m.Jobs), null, _rng.Next(8) == 0);

    /// <summary>
    /// A cancel by one of a job's other ids (a stream id it had or has, its dead letter's id; see
    /// <see cref="ModelOps.CancelByStreamId"/>). By the entry a queued or running job is in now, the model expects the
    /// job's own cancel, exactly as by its job id; by any other, either that or NotFound with nothing changed.
    /// </summary>
    private string CancelByOtherId()
    {
        var candidates = _m.Jobs.Where(j => OtherIds(j).Any()).ToList();
        if (candidates.Count == 0)
        {
            return Cancel();
        }

        var job = Pick(candidates);
        return CancelJob(job, Pick(OtherIds(job).ToList()), scheduledOnly: false);

        IEnumerable<string> OtherIds(ModelJob j) =>
            j.StreamIds.Where(id => id != j.JobId).Concat(j.DeadLetterId is { } dead && !_m.ById.ContainsKey(dead) ? [dead] : []);
    }

    private string CancelJob(ModelJob job, string? otherId, bool scheduledOnly)
    {
        var (code, consumer) = _d.Cancel(otherId ?? job.JobId, scheduledOnly);
        string before = job.ToString();
        string how = otherId is null ? string.Empty : $" by its other id {otherId}";
        long expected = job switch
        {
            { IsEnded: true, RecordGone: false } => 3,
            { Place: Place.Scheduled } => 1,
            _ when scheduledOnly => 0,
            { Place: Place.Retrying or Place.Queued } => 1,
            { Place: Place.Running, Vanished: false } => 2,
            _ => 0,
        };
        // The entry a queued or running job is in now names it (its field j): a cancel by that id is the job's own cancel
        // (issue 28 item 5). Any other id of it may be gone (trimmed, a settled entry) and read as NotFound.
        bool current = otherId is not null && otherId == job.StreamId && job.InRedis && job.Place is Place.Queued or Place.Running;
        if (otherId is not null && code == 0 && !current)
        {
            return $"cancel {before}{how}: NotFound";
        }

        Expect(code == expected, $"cancel{(scheduledOnly ? " (scheduled only)" : string.Empty)} of {job}{how}: expected {expected}, Redis answered {code}");
        if (code == 1)
        {
            _m.ReleaseKey(job);
            End(job, Place.Canceled, true);
        }
        else if (code == 2)
        {
            Expect(consumer == job.Consumer, $"cancel of {job}{how}: Redis says {consumer} holds it");

            // A mark on a job with no record yet expires (a day); on a record (a failed attempt, a cancel before) it is rewritten without.
            job.LiveRecordExpires = !job.HasLiveRecord;
            job.HasLiveRecord = true;
            job.CancelAsked = true;

            // The cancel channel reaches the instance that holds it, when that one lives.
            if (_m.HolderInstance(job) is { Alive: true })
            {
                job.CancelDelivered = true;
            }
        }

        return $"cancel{(scheduledOnly ? " scheduled-only" : string.Empty)} {before}{how}: {code}";
    }

    private string SettleCancel()
    {
        var instance = Pick(_m.Instances.Where(static i => i.Alive && i.Held.Any(static h => h.CancelDelivered)).ToList());
        var job = Pick(instance.Held.Where(static h => h.CancelDelivered).ToList());
        bool stored = _d.SettleCanceled(instance.Name, job.Held());
        Expect(stored, $"the cancel of {job} settled by its owner {instance} was refused");
        instance.Held.Remove(job);
        _m.ReleaseKey(job);
        End(job, Place.Canceled, true);
        return $"settle-cancel by {instance}: #{job.N}";
    }

    private string Heartbeat(ModelInstance instance)
    {
        var held = instance.Held.Where(static h => !h.Vanished).ToList();
        var (lost, gone) = _d.KeepAlive(instance.Name, [.. held.Select(static h => h.Held())]);
        Expect(lost.Length == 0 && gone.Length == 0, $"heartbeat of {instance}: lost [{string.Join(" ", lost)}], gone [{string.Join(" ", gone)}]; it owns every one");
        return $"heartbeat by {instance} ({held.Count} held)";
    }

    private string Die(ModelInstance instance)
    {
        instance.Alive = false;
        foreach (var job in instance.Held.ToList())
        {
            if (job.Vanished)
            {
                // Held in its memory only: gone with it.
                job.Place = Place.Lost;
                instance.Held.Remove(job);
            }
        }

        MakeIdle(instance);
        var spawned = _m.Instances.Count(static i => i.Alive) < 3 ? Spawn() : null;
        return $"die {instance} holding [{string.Join(" ", instance.Held.Select(static h => "#" + h.N))}]{(spawned is null ? string.Empty : "; start " + spawned)}";
    }

    /// <summary>A dead consumer's entries, idle for as long as it has been dead (XCLAIM to itself, JUSTID: no delivery counted).</summary>
    private void MakeIdle(ModelInstance dead)
    {
        foreach (var job in dead.Held)
        {
            _d.Db.Execute("XCLAIM", (string)_keys.Stream!, RedisStreamKeys.Group, dead.Name, "0", job.StreamId!, "IDLE", ModelSettings.DeadIdleMs.ToString(CultureInfo.InvariantCulture), "JUSTID");
        }
    }

    private string Reclaim(ModelInstance instance)
    {
        int count = Room(instance);
        var pel = _m.Jobs.Where(static j => j.Place == Place.Running && !j.Vanished).OrderBy(static j => j.StreamId!, StreamIdComparer.Instance).ToList();
        int index = pel.FindIndex(j => StreamIdComparer.Instance.Compare(j.StreamId!, instance.ReclaimCursor) >= 0);
        if (index < 0)
        {
            index = pel.Count;
        }

        // XAUTOCLAIM: from the cursor, at most count * 10 entries looked at, the idle ones (a dead consumer's) claimed.
        var claimed = new List<ModelJob>();
        int attempts = count * 10;
        int left = count;
        while (attempts > 0 && left > 0 && index < pel.Count)
        {
            attempts--;
            var job = pel[index++];
            if (_m.Instances.First(i => i.Name == job.Consumer).Alive)
            {
                continue;
            }

            claimed.Add(job);
            left--;
        }

        string cursor = index < pel.Count ? pel[index].StreamId! : "0-0";
        var reply = _d.Reclaim(instance.Name, ModelSettings.ReclaimMinIdleMs, instance.ReclaimCursor, count, Settings.MaxDeliveries);
        var kept = new List<ModelJob>();
        var poisoned = new List<ModelJob>();
        var notes = new List<string>();
        bool endedAny = false;
        foreach (var job in claimed)
        {
            var dead = _m.Instances.First(i => i.Name == job.Consumer);
            dead.Held.Remove(job);
            job.Deliveries++;
            if (job.HasLiveRecord && job.CancelAsked)
            {
                endedAny = true;
                _m.ReleaseKey(job);
                End(job, Place.Canceled, true);
                notes.Add($"#{job.N} canceled");
            }
            else if (job.Deliveries > Settings.MaxDeliveries)
            {
                endedAny = true;
                _m.ReleaseKey(job);
                End(job, Place.DeadLettered, job.HasLiveRecord && job.CancelAsked);
                poisoned.Add(job);
                notes.Add($"#{job.N} poison");
            }
            else
            {
                kept.Add(job);
            }
        }

        Expect(
            reply.Claimed.Select(static e => e.StreamId).SequenceEqual(kept.Select(static j => j.StreamId!)),
            $"reclaim by {instance} (cursor {instance.ReclaimCursor}, count {count}) took [{string.Join(" ", reply.Claimed.Select(static e => e.StreamId))}], the model expected [{string.Join(" ", kept.Select(static j => j.StreamId))}] of claimed [{string.Join(" ", claimed.Select(static j => j.StreamId))}]");
        Expect(reply.Cursor == cursor, $"reclaim by {instance}: next cursor {reply.Cursor}, the model expected {cursor}");
        Expect(reply.EndedAny == endedAny, $"reclaim by {instance}: ended any {reply.EndedAny}, the model expected {endedAny}");
        for (int i = 0; i < kept.Count; i++)
        {
            var job = kept[i];
            var entry = reply.Claimed[i];
            CheckEntry(job, entry, "reclaimed");
            Expect(entry.Deliveries == job.Deliveries, $"reclaimed {job}: {entry.Deliveries} deliveries, the model counts {job.Deliveries}");
            Deliver(instance, job, entry.StreamId, job.Deliveries, reply.Epoch);
            notes.Add($"#{job.N} taken");
        }

        LearnDeadLetters(poisoned);
        instance.ReclaimCursor = cursor;
        return $"reclaim by {instance}: [{string.Join(", ", notes)}] next {cursor}";
    }

    private string Pause(ModelInstance instance)
    {
        instance.Paused = true;
        return "pause " + instance + ": " + HandBack(instance, instance.Held.ToList());
    }

    private string HandBack(ModelInstance instance, List<ModelJob> jobs)
    {
        if (jobs.Count == 0)
        {
            return "nothing held";
        }

        long n = _d.Release(instance.Name, [.. jobs.Select(static j => j.Held())]);
        Expect(n == jobs.Count, $"hand-back by {instance} of {jobs.Count}: Redis handed back or ended {n}");
        var notes = new List<string>();
        foreach (var job in jobs)
        {
            instance.Held.Remove(job);
            if (job.HasLiveRecord && job.CancelAsked)
            {
                _m.ReleaseKey(job);
                End(job, Place.Canceled, true);
                notes.Add($"#{job.N} canceled");
            }
            else
            {
                job.Place = Place.Queued;
                job.StreamId = null;
                job.Consumer = null;
                job.CancelDelivered = false;
                job.Vanished = false;
                _m.Queue.Add(job);
                _m.MoveKey(job);
                notes.Add($"#{job.N} back");
            }
        }

        return $"handed back [{string.Join(", ", notes)}]";
    }

    private string Resume(ModelInstance instance)
    {
        instance.Paused = false;
        return "resume " + instance;
    }

    private string Requeue()
    {
        var job = Pick(_m.Jobs.Where(static j => j.DeadLetterId is not null).ToList());
        string dead = job.DeadLetterId!;
        var requeue = _d.Requeue(dead, Settings.Capacity);
        string? id = requeue.NewId;
        if (Settings.Capacity - _m.Unfinished - _m.Delayed <= 0)
        {
            // A requeue honours the room as an enqueue does: refused without a write, the dead letter stays.
            Expect(requeue.QueueFull, $"requeue of {job}'s dead letter {dead} into a full queue (capacity {Settings.Capacity}, unfinished {_m.Unfinished}, delayed {_m.Delayed}): Redis answered {requeue}");
            return $"requeue {job}'s dead letter {dead} -> full";
        }

        Expect(id is not null && IsStreamId(id), $"requeue of {job}'s dead letter {dead}: Redis answered {requeue}");
        bool hadRecord = !job.RecordGone;
        job.Place = Place.Queued;
        job.Attempt = 1;
        job.EnqueuedAt = 0;
        job.StreamId = id;
        job.StreamIds.Add(id!);
        job.DeadLetterId = null;
        job.HasLiveRecord = hadRecord;
        job.LiveRecordExpires = false;
        job.CancelAsked = false;
        job.RecordGone = false;
        job.EndedScore = null;
        _m.Queue.Add(job);
        if (job.Key is { } key)
        {
            var hold = _m.Keys.GetValueOrDefault(key);
            if (hold is null || hold.Job == job || (!hold.Done && !hold.Job.InRedis))
            {
                _m.Keys[key] = new KeyHold(job, false);
            }
        }

        return $"requeue {dead} of #{job.N} as {id}";
    }

    private string DeleteDeadLetter()
    {
        var job = Pick(_m.Jobs.Where(static j => j.DeadLetterId is not null).ToList());
        Expect(_d.DeleteDeadLetter(job.DeadLetterId!), $"delete of {job}'s dead letter {job.DeadLetterId}: not found");
        string dead = job.DeadLetterId!;
        job.DeadLetterId = null;
        return $"delete dead letter {dead} of #{job.N}";
    }

    private string Trim(ModelInstance instance)
    {
        long cap = _rng.Next(2) == 0 ? Settings.MaxFinished : _rng.Next(30);
        var reply = _d.Round(instance.Name, [], [], 0, trim: true, cap);
        ApplyTrim(true, reply.Now, cap);
        return $"trim by {instance} to {cap}";
    }

    /// <summary>One occurrence of a recurring job offered by one to three instances, each in a round of its own, as their timers would.</summary>
    private string RecurringOffer()
    {
        string id = Pick(RecurringIds);
        long fire = _nextFire.GetValueOrDefault(id, 1_700_000_000_000);
        int roll = _rng.Next(10);
        if (roll < 3)
        {
            // The next occurrence.
            fire += 60_000;
        }
        else if (roll == 3)
        {
            // A late offer of an earlier one (an instance starting up that catches up, a slow timer).
            fire -= 60_000;
        }

        _nextFire[id] = Math.Max(fire, _nextFire.GetValueOrDefault(id, 1_700_000_000_000));
        string schedule = _rng.Next(6) == 0 ? Schedules[1] : Schedules[0];
        var live = _m.Instances.Where(static i => i.Alive).OrderBy(_ => _rng.Next()).Take(1 + _rng.Next(3)).ToList();
        var notes = new List<string>();
        foreach (var instance in live)
        {
            string payload = NextPayload(out int n);
            var item = new EnqueueItem(payload, string.Create(CultureInfo.InvariantCulture, $"r{fire}|{schedule}|{id}"), string.Empty);
            var reply = _d.Round(instance.Name, [item], [], 0, trim: false, Settings.MaxFinished);
            notes.Add(instance.Name + ": " + string.Join(", ", ApplyEnqueues([(item, n)], reply)));
        }

        return $"recurring offer {id} at {fire} on '{schedule}': {string.Join("; ", notes)}";
    }

    private ModelRecurring RecurringState(string id)
    {
        if (!_m.Recurring.TryGetValue(id, out var state))
        {
            _m.Recurring[id] = state = new ModelRecurring();
        }

        return state;
    }

    private string RecurringPause()
    {
        string id = Pick(RecurringIds);
        var state = RecurringState(id);
        bool paused = _rng.Next(3) == 0 ? state.Paused : !state.Paused;
        _d.SetRecurringPaused(id, paused);
        state.Paused = paused;
        return $"recurring {(paused ? "pause" : "resume")} {id}";
    }

    /// <summary>A registration in code (c), a change at runtime (r) or a removal (x), as registerRecurring.lua decides.</summary>
    private string RecurringRegister()
    {
        string id = Pick(RecurringIds);
        string code = _rng.Next(10) switch { < 5 => "c", < 8 => "r", _ => "x" };
        string schedule = _rng.Next(3) == 0 ? Schedules[1] : Schedules[0];
        var state = RecurringState(id);
        var record = state.Record;
        long generation = record?.Generation ?? 0;
        string? current = record?.Schedule;
        string? kind = record?.State;
        string @base = record?.Base ?? string.Empty;
        var reply = _d.RegisterRecurring(id, code, schedule);
        bool unchanged = code == "c" && ((kind == "c" && current == schedule) || (kind is "r" or "x" && @base == schedule));
        if (!unchanged)
        {
            if (code == "c")
            {
                @base = schedule;
            }
            else
            {
                if (kind == "c")
                {
                    @base = current!;
                }
                else if (kind is null)
                {
                    @base = string.Empty;
                }

                if (code == "x" && current is not null)
                {
                    schedule = current;
                }
            }

            state.Record = (generation + 1, code, schedule, @base);
            if (code == "x")
            {
                state.Paused = false;
            }
        }

        var now = state.Record!.Value;
        Expect(
            reply.Generation == now.Generation && reply.State == now.State && reply.Schedule == now.Schedule,
            $"register {id} {code} '{schedule}': Redis answered {reply}, the model expected {now}");
        return $"recurring register {id} {code}: {now}";
    }

    /// <summary>
    /// Redis loses the queue's data (a restart without persistence, a flush: every key of the queue deleted), then the
    /// recovery the store makes: the group made again with a new epoch, each live instance's heartbeat finding its held
    /// entries gone, and some of them (those not started) stored again at once (a hand-back of lost entries).
    /// </summary>
    private string DataLoss()
    {
        var names = ((RedisResult[])_d.Db.Execute("KEYS", ((string)_keys.Stream!)[..^"stream".Length] + "*")!).Select(static r => (RedisKey)(string)r!).ToArray();
        if (names.Length > 0)
        {
            _d.Db.KeyDelete(names);
        }

        int lost = 0;
        foreach (var job in _m.Jobs)
        {
            if (job.Place == Place.Running && _m.HolderInstance(job) is { Alive: true })
            {
                // Held by a live instance: it runs on, in memory only, until its outcome (or the hand-back below) stores it.
                job.HasLiveRecord = false;
                job.LiveRecordExpires = false;
                job.CancelAsked = false;
                continue;
            }

            if (job.IsLive)
            {
                job.Place = Place.Lost;
                lost++;
            }
            else if (job.IsEnded)
            {
                job.RecordGone = true;
                job.EndedScore = null;
            }

            job.DeadLetterId = null;
        }

        foreach (var dead in _m.Instances.Where(static i => !i.Alive))
        {
            dead.Held.Clear();
        }

        _m.Queue.Clear();
        _m.Keys.Clear();
        _m.Recurring.Clear();
        _m.ScheduledCounter = 0;

        // New entries must not take an id a lost one had: wait for Redis's clock to pass every id seen (a millisecond or two).
        long newest = _m.Jobs.SelectMany(static j => j.StreamIds).Select(static id => long.Parse(id.AsSpan(0, id.IndexOf('-')), CultureInfo.InvariantCulture)).DefaultIfEmpty(0).Max();
        while (RedisNowMs() <= newest)
        {
            Thread.Yield();
        }

        var live = _m.Instances.Where(static i => i.Alive).ToList();
        _d.CreateGroup(Pick(live).Name);
        var notes = new List<string>();
        foreach (var instance in live.Where(static i => i.Held.Count > 0))
        {
            var found = instance.Held.Where(static h => !h.Vanished).ToList();
            var (claimsLost, gone) = _d.KeepAlive(instance.Name, [.. found.Select(static h => h.Held())]);
            Expect(
                claimsLost.Length == 0 && gone.SequenceEqual(found.Select(static h => h.StreamId!)),
                $"heartbeat of {instance} after the loss: lost [{string.Join(" ", claimsLost)}], gone [{string.Join(" ", gone)}]; the model expected gone [{string.Join(" ", found.Select(static h => h.StreamId))}]");
            foreach (var job in found)
            {
                job.Vanished = true;
            }

            var restore = instance.Held.Where(_ => _rng.Next(2) == 0).ToList();
            notes.Add($"{instance}: {found.Count} found gone, {HandBack(instance, restore)}");
        }

        return $"data loss: {lost} lost; {string.Join("; ", notes)}";
    }

    private long RedisNowMs()
    {
        var time = (RedisResult[])_d.Db.Execute("TIME")!;
        return (long.Parse((string)time[0]!, CultureInfo.InvariantCulture) * 1000) + (long.Parse((string)time[1]!, CultureInfo.InvariantCulture) / 1000);
    }

    private static bool IsStreamId(string? id) => id is not null && StreamIdGrammar.IsJobId(id) && id[0] != 's';

    private static void Expect(bool condition, string message)
    {
        if (!condition)
        {
            throw new ModelMismatchException(message);
        }
    }
}

/// <summary>Redis disagreed with the model.</summary>
internal sealed class ModelMismatchException(string message) : Exception(message);

/// <summary>A model run failed: the message has the seed, the step and the history.</summary>
internal sealed class ModelFailedException(string message, Exception inner) : Exception(message, inner);

/// <summary>Which operations a run includes beyond the default mix (<c>WORKQUEUE_MODEL_OPS</c>, comma-separated names).</summary>
internal sealed record ModelOps(IReadOnlyList<string> Extra)
{
    /// <summary>Gets a value indicating whether Redis loses the queue's data now and then (in the CI mix; <c>no-data-loss</c> leaves it out).</summary>
    public bool DataLoss => !Has("no-data-loss");

    /// <summary>
    /// Gets a value indicating whether jobs are also cancelled by their other ids (a stream id it had or has, its dead
    /// letter's id): in the CI mix; <c>no-cancel-stream-id</c> leaves it out.
    /// </summary>
    public bool CancelByStreamId => !Has("no-cancel-stream-id");

    public bool Has(string name) => Extra.Contains(name, StringComparer.OrdinalIgnoreCase);
}

/// <summary>Orders stream ids as Redis does: by time, then sequence.</summary>
internal sealed class StreamIdComparer : IComparer<string>
{
    public static readonly StreamIdComparer Instance = new();

    public int Compare(string? x, string? y)
    {
        var (xm, xs) = Split(x!);
        var (ym, ys) = Split(y!);
        int c = xm.CompareTo(ym);
        return c != 0 ? c : xs.CompareTo(ys);
    }

    private static (ulong Ms, ulong Seq) Split(string id)
    {
        int dash = id.IndexOf('-');
        return dash < 0
            ? (ulong.Parse(id, CultureInfo.InvariantCulture), 0)
            : (ulong.Parse(id.AsSpan(0, dash), CultureInfo.InvariantCulture), ulong.Parse(id.AsSpan(dash + 1), CultureInfo.InvariantCulture));
    }
}
