using System.Globalization;

namespace WorkQueue.AspNetCore.Tests.Durable.Model;

/// <summary>Where a job of the model is.</summary>
internal enum Place
{
    /// <summary>In the stream, not delivered to any consumer.</summary>
    Queued,

    /// <summary>Delivered to a consumer (pending in the group), live or dead; or held in memory only, when Redis lost it (<see cref="ModelJob.Vanished"/>).</summary>
    Running,

    /// <summary>In the delayed set and the scheduled hash: a scheduled job not yet promoted.</summary>
    Scheduled,

    /// <summary>In the delayed set: a failed job waiting for its retry.</summary>
    Retrying,

    Succeeded,
    DeadLettered,
    Canceled,

    /// <summary>Redis lost it with its data while no live instance held it (the documented loss).</summary>
    Lost,
}

/// <summary>One accepted job, as the model knows it.</summary>
internal sealed class ModelJob(string jobId, int n, string payload, string? key)
{
    public string JobId { get; } = jobId;

    /// <summary>Gets the number in its payload: the model's name for it, whatever its ids.</summary>
    public int N { get; } = n;

    public string Payload { get; } = payload;

    /// <summary>Gets the job type its payload names ('' for the queue's default type, stored bare).</summary>
    public string JobType { get; } = WorkQueue.AspNetCore.Durable.JobTypeEnvelope.Read(payload, out _) ?? string.Empty;

    /// <summary>Gets the idempotency key it carries (its entries' <c>k</c>), or null.</summary>
    public string? Key { get; } = key;

    public Place Place { get; set; }

    public int Attempt { get; set; } = 1;

    /// <summary>Gets or sets its entries' <c>t</c>: when it was first enqueued (Redis's clock).</summary>
    public long EnqueuedAt { get; set; }

    /// <summary>Gets or sets its current stream entry (Queued: learned from the stream; Running: as fetched).</summary>
    public string? StreamId { get; set; }

    /// <summary>Gets or sets the consumer that holds it (Running).</summary>
    public string? Consumer { get; set; }

    public long Deliveries { get; set; }

    /// <summary>Gets or sets its due time (Scheduled, Retrying): Redis's score.</summary>
    public long Due { get; set; }

    /// <summary>Gets or sets its member of the delayed set (Scheduled, Retrying).</summary>
    public string? Member { get; set; }

    /// <summary>Gets or sets a value indicating whether a cancel by id marked its record (a live job).</summary>
    public bool CancelAsked { get; set; }

    /// <summary>Gets or sets a value indicating whether the cancel reached the instance that holds it (the entry's flag).</summary>
    public bool CancelDelivered { get; set; }

    /// <summary>Gets or sets a value indicating whether its live record exists (<c>job:{id}</c>): a failed attempt or a cancel asked.</summary>
    public bool HasLiveRecord { get; set; }

    /// <summary>Gets or sets a value indicating whether the live record has an expiry (a cancel mark with no record before).</summary>
    public bool LiveRecordExpires { get; set; }

    /// <summary>Gets or sets a value indicating whether Redis lost the entry its instance holds (Running, in memory only).</summary>
    public bool Vanished { get; set; }

    public string Epoch { get; set; } = string.Empty;

    public long StartedAt { get; set; }

    /// <summary>Gets or sets its entry in the dead-letter stream, while there is one.</summary>
    public string? DeadLetterId { get; set; }

    /// <summary>Gets or sets a value indicating whether its ended record is gone (trimmed, records off, or lost with Redis's data).</summary>
    public bool RecordGone { get; set; }

    /// <summary>Gets or sets its score in its ended list, once read.</summary>
    public long? EndedScore { get; set; }

    /// <summary>Gets or sets the cancel flag its ended record carries.</summary>
    public bool EndedCancel { get; set; }

    /// <summary>Gets every stream id it has had.</summary>
    public List<string> StreamIds { get; } = [];

    public bool IsLive => Place is Place.Queued or Place.Running or Place.Scheduled or Place.Retrying;

    public bool IsEnded => Place is Place.Succeeded or Place.DeadLettered or Place.Canceled;

    /// <summary>Gets the letter of its ended record.</summary>
    public char EndedLetter => Place switch { Place.Succeeded => 'S', Place.DeadLettered => 'D', _ => 'C' };

    /// <summary>Gets where its idempotency key says it is while it holds it: its stream entry, or z{due}.</summary>
    public string Where => Place is Place.Scheduled or Place.Retrying ? "z" + Due.ToString(CultureInfo.InvariantCulture) : StreamId!;

    /// <summary>Gets a value indicating whether Redis holds a live place for it (not lost with Redis's data while held).</summary>
    public bool InRedis => IsLive && !Vanished;

    public HeldEntry Held() => new(StreamId!, JobId, Payload, Attempt, EnqueuedAt, Key, Epoch, Vanished, CancelDelivered, StartedAt);

    public override string ToString() =>
        string.Create(CultureInfo.InvariantCulture, $"#{N}({JobId} {Place}{(Consumer is null || Place != Place.Running ? string.Empty : "@" + Consumer)} a{Attempt}{(Key is null ? string.Empty : " k=" + Key)}{(Vanished ? " vanished" : string.Empty)})");
}

/// <summary>One simulated instance of the queue: a consumer of the group.</summary>
internal sealed class ModelInstance(string name)
{
    public string Name { get; } = name;

    public bool Alive { get; set; } = true;

    public bool Paused { get; set; }

    /// <summary>Gets the jobs it holds, in the order it took them.</summary>
    public List<ModelJob> Held { get; } = [];

    public string ReclaimCursor { get; set; } = "0-0";

    public override string ToString() => Name + (Alive ? string.Empty : "(dead)") + (Paused ? "(paused)" : string.Empty);
}

/// <summary>A recurring job's state in the store, as the model knows it.</summary>
internal sealed class ModelRecurring
{
    public long? Last { get; set; }

    public bool Paused { get; set; }

    /// <summary>Gets or sets the shared schedule record (generation, state, schedule, base), or null.</summary>
    public (long Generation, string State, string Schedule, string Base)? Record { get; set; }
}

/// <summary>Who holds an idempotency key: a live job, or a succeeded one for the retention (<c>done</c>).</summary>
internal sealed record KeyHold(ModelJob Job, bool Done);

/// <summary>The reference model: every job accepted, where the model says it is, the keys, the recurring jobs.</summary>
internal sealed class ReferenceModel
{
    public List<ModelJob> Jobs { get; } = [];

    public Dictionary<string, ModelJob> ById { get; } = new(StringComparer.Ordinal);

    /// <summary>Gets the queued jobs in stream order.</summary>
    public List<ModelJob> Queue { get; } = [];

    public Dictionary<string, KeyHold> Keys { get; } = new(StringComparer.Ordinal);

    public Dictionary<string, ModelRecurring> Recurring { get; } = new(StringComparer.Ordinal);

    public List<ModelInstance> Instances { get; } = [];

    /// <summary>Gets or sets the counter that numbers scheduled jobs (<c>ids</c>).</summary>
    public long ScheduledCounter { get; set; }

    public int Count(Place place) => Jobs.Count(j => j.Place == place);

    /// <summary>Gets the unsettled entries Redis counts for the capacity: the stream's pending and undelivered ones.</summary>
    public long Unfinished => Jobs.Count(j => j.InRedis && j.Place is Place.Queued or Place.Running);

    public long Delayed => Jobs.Count(j => j.Place is Place.Scheduled or Place.Retrying);

    /// <summary>Gets the live job an idempotency key would refuse an enqueue for, or null.</summary>
    public ModelJob? HolderOf(string key) => Keys.TryGetValue(key, out var hold) && (hold.Done || hold.Job.InRedis) ? hold.Job : null;

    public void Add(ModelJob job)
    {
        Jobs.Add(job);
        ById[job.JobId] = job;
    }

    /// <summary>moveKey in keys.lua: the key follows the job if the job holds it or nobody does.</summary>
    public void MoveKey(ModelJob job)
    {
        if (job.Key is null)
        {
            return;
        }

        if (!Keys.TryGetValue(job.Key, out var hold) || hold.Job == job)
        {
            Keys[job.Key] = new KeyHold(job, false);
        }
    }

    /// <summary>releaseKey in keys.lua after a success: freed, or kept as done for the retention.</summary>
    public void ReleaseKeyOnSuccess(ModelJob job, long retentionMs)
    {
        if (job.Key is not null && Keys.TryGetValue(job.Key, out var hold) && hold.Job == job && !hold.Done)
        {
            if (retentionMs > 0)
            {
                Keys[job.Key] = new KeyHold(job, true);
            }
            else
            {
                Keys.Remove(job.Key);
            }
        }
    }

    /// <summary>releaseKey in keys.lua without a place (a dead letter, a cancel): freed if it names the job.</summary>
    public void ReleaseKey(ModelJob job)
    {
        if (job.Key is not null && Keys.TryGetValue(job.Key, out var hold) && hold.Job == job)
        {
            Keys.Remove(job.Key);
        }
    }

    public ModelInstance? HolderInstance(ModelJob job) => Instances.FirstOrDefault(i => i.Held.Contains(job));
}
