using System.Diagnostics;
using System.Text;

namespace WorkQueue.Testing.Internal;

/// <summary>The idle wait: every queue looked at until it is seen idle twice with nothing enqueued in between.</summary>
internal sealed partial class WorkQueueTestHarness
{
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(10);
    private static readonly TimeSpan ListTimeout = TimeSpan.FromSeconds(5);
    private static readonly JobState[] BusyStates = [JobState.Queued, JobState.Running, JobState.Retrying];
    private const int ListedJobs = 10;

    // A durable queue's figures from Redis are read about once a second, on the store's thread, one read after the other.
    // The second read that ends after the first idle look was sent after the first one ended, so after that look: it
    // sees every job stored before the wait began.
    private const int FreshDurableReads = 2;

    public async Task WaitUntilIdleAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default)
    {
        var limit = timeout ?? _idleTimeout;
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(limit, TimeSpan.Zero, nameof(timeout));
        long start = Stopwatch.GetTimestamp();
        Look? idleSince = null;
        var durableReads = new Dictionary<string, (DateTimeOffset? ReadAt, int Count)>(StringComparer.OrdinalIgnoreCase);
        while (true)
        {
            var look = TakeLook();
            if (!look.IsIdle)
            {
                idleSince = null;
            }
            else if (idleSince is null || look.Activity != idleSince.Activity)
            {
                idleSince = look;
                durableReads.Clear();
                foreach (var queue in look.Queues.Where(q => q.Snapshot.Durable is not null))
                {
                    durableReads[queue.Snapshot.Name] = (queue.Snapshot.Durable!.ReadAt, 0);
                }
            }
            else
            {
                foreach (var queue in look.Queues.Where(q => q.Snapshot.Durable is not null))
                {
                    var readAt = queue.Snapshot.Durable!.ReadAt;
                    if (durableReads.TryGetValue(queue.Snapshot.Name, out var seen) && seen.ReadAt != readAt)
                    {
                        durableReads[queue.Snapshot.Name] = (readAt, seen.Count + 1);
                    }
                }

                if (durableReads.Values.All(r => r.Count >= FreshDurableReads))
                {
                    return;
                }
            }

            if (Stopwatch.GetElapsedTime(start) >= limit)
            {
                throw new TimeoutException(await DescribeAsync(look, limit, idleSince is not null).ConfigureAwait(false));
            }

            await Task.Delay(PollInterval, cancellationToken).ConfigureAwait(false);
        }
    }

    private Look TakeLook()
    {
        var queues = Provider.Queues.Select(q => new QueueLook(q.GetSnapshot())).ToArray();
        int inline = Volatile.Read(ref _inlineRunning);
        long recorded;
        lock (_lock)
        {
            recorded = _jobs.Count;
        }

        // Anything that moved between two looks: jobs accepted, attempts started, calls recorded.
        long activity = recorded + queues.Sum(q => q.Snapshot.Totals.Enqueued + q.Snapshot.Totals.Started);
        return new Look(queues, inline, activity);
    }

    private async Task<string> DescribeAsync(Look look, TimeSpan limit, bool idleButUnconfirmed)
    {
        var text = new StringBuilder($"WorkQueue's queues were not idle after {limit}:");
        if (look.InlineRunning > 0)
        {
            text.Append($"{Environment.NewLine}  {look.InlineRunning} inline job(s) still running.");
        }

        foreach (var queue in look.Queues)
        {
            if (queue.IsBusy)
            {
                text.Append($"{Environment.NewLine}  queue '{queue.Snapshot.Name}': {queue.Describe()}");
                text.Append(await ListJobsAsync(queue).ConfigureAwait(false));
                if (queue.RetryWaiting && Clock is not null)
                {
                    text.Append($"{Environment.NewLine}    (a retry waits on the fake clock: advance it past the retry's delay)");
                }
            }
            else if (queue.ScheduledLater > 0)
            {
                text.Append($"{Environment.NewLine}  queue '{queue.Snapshot.Name}': idle; {queue.ScheduledLater} scheduled for later (not waited for).");
            }
        }

        if (idleButUnconfirmed)
        {
            text.Append($"{Environment.NewLine}  Every queue looked idle last, but a durable queue's figures were not read from Redis again since (is the store connected?).");
        }

        return text.ToString();
    }

    private async Task<string> ListJobsAsync(QueueLook queue)
    {
        try
        {
            using var cancel = new CancellationTokenSource(ListTimeout);
            var page = await Provider.Inner.GetQueue(queue.Snapshot.Name)
                .FindJobsAsync(new JobQuery { States = BusyStates, Limit = ListedJobs }, cancel.Token)
                .ConfigureAwait(false);
            if (page.Jobs.Count == 0)
            {
                return $"{Environment.NewLine}    (no job listed: only tracked jobs have ids; WorkQueueOptions.TrackAllJobs tracks every job)";
            }

            var text = new StringBuilder();
            foreach (var job in page.Jobs)
            {
                text.Append($"{Environment.NewLine}    job {job.Id} {job.Name}: {job.State}, attempt {job.Attempt}");
                if (job.LastError is { } error)
                {
                    text.Append($", last error: {error}");
                }
            }

            if (page.Next is not null)
            {
                text.Append($"{Environment.NewLine}    (more not listed)");
            }

            return text.ToString();
        }
        catch (Exception ex)
        {
            return $"{Environment.NewLine}    (the jobs could not be listed: {ex.GetType().Name}: {ex.Message})";
        }
    }

    /// <summary>Every queue at one moment (each snapshot taken in turn).</summary>
    private sealed record Look(QueueLook[] Queues, int InlineRunning, long Activity)
    {
        public bool IsIdle => InlineRunning == 0 && Queues.All(q => !q.IsBusy);
    }

    /// <summary>One queue's snapshot, read as busy or idle.</summary>
    private sealed class QueueLook(WorkQueueSnapshot snapshot)
    {
        public WorkQueueSnapshot Snapshot { get; } = snapshot;

        /// <summary>Jobs accepted and not ended, other than those waiting for their time (which are not waited for).</summary>
        private long Unfinished => Math.Max(0, Snapshot.Totals.Unfinished - Snapshot.Scheduled);

        /// <summary>Jobs waiting for a retry here (in memory): unfinished, neither queued nor running.</summary>
        private long Retrying => Math.Max(0, Unfinished - Snapshot.Depth - Snapshot.RunningJobs);

        public long ScheduledLater => Snapshot.Scheduled + (Snapshot.Durable?.Scheduled ?? 0);

        public bool RetryWaiting => Retrying > 0 || Snapshot.Durable?.DelayedRetries > 0;

        public bool IsBusy => Unfinished > 0 || Snapshot.Durable is { } durable && (
            durable.ReadAt is null
            || durable.HeldHere > 0
            || durable.StreamLength > 0
            || durable.Pending > 0
            || durable.Lag > 0
            || durable.DelayedRetries > 0);

        public string Describe()
        {
            var parts = new List<string>();
            if (Snapshot.Durable is { } durable)
            {
                parts.Add(durable.ReadAt is null
                    ? $"durable, not read from Redis yet{(durable.IsConnected ? string.Empty : $" (not connected: {durable.LastError})")}"
                    : $"durable: in Redis {durable.StreamLength} unfinished ({durable.Pending} fetched by a consumer, {durable.Lag?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "?"} not fetched yet), {durable.DelayedRetries} waiting to retry, {durable.Scheduled ?? 0} scheduled for later; consumers: {string.Join(", ", durable.Consumers.Select(c => $"{c.Name} {c.Pending} pending{(c.IsThisProcess ? " (this process)" : string.Empty)}"))}");
                parts.Add($"here {durable.HeldHere} held, {Snapshot.RunningJobs} running");
            }
            else
            {
                parts.Add($"{Snapshot.Depth} queued, {Snapshot.RunningJobs} running, {Retrying} waiting to retry, {Snapshot.Scheduled} scheduled for later (not waited for)");
            }

            if (Snapshot.IsPaused)
            {
                parts.Add("paused");
            }

            return string.Join("; ", parts) + ".";
        }
    }
}
