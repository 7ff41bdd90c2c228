using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// A durable job by id, on a real redis-server: its status in each state, its attempts, how long an ended one is kept,
/// and a cancel by id of a queued, scheduled, retrying or running job, on this instance or another.
/// </summary>
public sealed class DurableJobsTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task Enqueue_FirstAttempt_StoredWithoutAttemptFieldAndReadAsAttemptOne()
    {
        var log = new JobLog { Behavior = static (_, call, _) => call == 1 ? throw new InvalidOperationException("first try") : ValueTask.CompletedTask };
        string prefix = DurableTestHost.NewPrefix();
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "p", configureDurable: d => d.Consume = false);
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = FindStore(producer).Keys;
        string plain = await producer.Producer.EnqueueAsync(new TestJob(1));
        string keyed = (await producer.Producer.EnqueueAsync(new TestJob(2), new JobOptions { IdempotencyKey = "first-attempt" })).JobId;

        // A first attempt's entry carries no attempt (every reader takes a missing one as 1); the key and time are there.
        var entries = await db.StreamRangeAsync(keys.Stream);
        Assert.Equal([plain, keyed], entries.Select(e => (string)e.Id!));
        Assert.All(entries, e => Assert.DoesNotContain(e.Values, v => v.Name == "a"));
        Assert.Equal("first-attempt", (string?)entries[1]["k"]);
        Assert.All(entries, e => Assert.False(e["t"].IsNullOrEmpty));
        Assert.Equal((JobState.Queued, 1), ((await producer.Producer.GetJobAsync(plain))!.State, (await producer.Producer.GetJobAsync(plain))!.Attempt));
        var page = await producer.Producer.FindJobsAsync(new JobQuery { States = [JobState.Queued] });
        Assert.All(page.Jobs, j => Assert.Equal(1, j.Attempt));
        Assert.Equal(2, page.Jobs.Count);

        // Each fails once: the consumer ran attempt 1 and the retry is attempt 2 (written as such), then both succeed.
        await using var consumer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "c", configure: o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(10);
        });
        foreach (string id in new[] { plain, keyed })
        {
            var done = await Eventually.ValueAsync(() => producer.Producer.GetJobAsync(id), j => j?.State == JobState.Succeeded, $"job {id} to succeed");
            Assert.Equal([1, 2], done!.Attempts.Select(a => a.Number));
            Assert.Equal(2, done.Attempt);
        }

        // A dead letter without an attempt (written by hand) reads as attempt 1, as a stream entry does.
        await db.StreamAddAsync(keys.Dead, [new("j", "1-1"), new("p", "{}"), new("t", "0"), new("e", "by hand"), new("r", "failed"), new("f", "0")]);
        Assert.Equal(1, (await FindStore(producer).Jobs.ReadDeadLettersAsync(1))[0].Attempt);
    }

    [Fact]
    public async Task GetJobAsync_QueuedScheduledRunningSucceeded_EachReadFromRedis()
    {
        var log = new JobLog();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (_, _, _) => await release.Task;
        string prefix = DurableTestHost.NewPrefix();

        // A producer only: what it enqueues stays queued until a consumer starts.
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "p", configureDurable: d => d.Consume = false);
        string queued = await producer.Producer.EnqueueAsync(new TestJob(1));
        string scheduled = await producer.Producer.ScheduleAsync(new TestJob(2), TimeSpan.FromHours(1));

        var q = await producer.Producer.GetJobAsync(queued);
        Assert.NotNull(q);
        Assert.Equal((queued, DurableTestHost.Queue, JobState.Queued, 1), (q.Id, q.QueueName, q.State, q.Attempt));
        Assert.Null(q.WorkerName);
        Assert.Empty(q.Attempts);
        Assert.True(q.EnqueuedAt > DateTimeOffset.UtcNow.AddMinutes(-1));
        var s = await producer.Producer.GetJobAsync(scheduled);
        Assert.NotNull(s);
        Assert.Equal(JobState.Scheduled, s.State);
        Assert.True(s.RunAt > DateTimeOffset.UtcNow.AddMinutes(59), $"runAt {s.RunAt}");

        await using var consumer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "c");
        string consumerName = FindStore(consumer).ConsumerName;
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the queued job to start");

        // Read from the other instance (Redis knows the consumer), and from the one that runs it (which knows when it started).
        var elsewhere = await producer.Producer.GetJobAsync(queued);
        Assert.NotNull(elsewhere);
        Assert.Equal((JobState.Running, consumerName), (elsewhere.State, elsewhere.WorkerName));
        Assert.Null(elsewhere.StartedAt);
        var here = await consumer.Producer.GetJobAsync(queued);
        Assert.NotNull(here);
        Assert.Equal(JobState.Running, here.State);
        Assert.NotNull(here.StartedAt);
        var running = Assert.Single(here.Attempts);
        Assert.Equal((1, consumerName, JobState.Running), (running.Number, running.WorkerName, running.Outcome));

        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 1, "the job to complete");
        var done = await Eventually.ValueAsync(() => producer.Producer.GetJobAsync(queued), j => j?.State == JobState.Succeeded, "the success recorded");
        Assert.Equal((1, consumerName, false), (done!.Attempt, done.WorkerName, done.CancelRequested));
        Assert.NotNull(done.StateSince);
        var attempt = Assert.Single(done.Attempts);
        Assert.Equal((JobState.Succeeded, consumerName), (attempt.Outcome, attempt.WorkerName));
        Assert.NotNull(attempt.StartedAt);
        Assert.NotNull(attempt.EndedAt);

        Assert.Null(await producer.Producer.GetJobAsync("1-0"));
        Assert.Null(await producer.Producer.GetJobAsync("s1-1"));
        await Assert.ThrowsAsync<ArgumentException>(async () => await producer.Producer.GetJobAsync("not-an-id"));
        await Assert.ThrowsAsync<ArgumentException>(async () => await producer.Producer.GetJobAsync(""));
    }

    [Theory]
    [InlineData("99999999999999999999-0")]
    [InlineData("1-18446744073709551616")]
    [InlineData("s18446744073709551616-1")]
    [InlineData("01-0")]
    [InlineData("not-an-id")]
    public async Task JobIdMethods_IdOutsideRedisGrammar_ThrowArgumentExceptionNamingJobId(string id)
    {
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), prefix, "p", configureDurable: d => d.Consume = false);

        var get = await Assert.ThrowsAsync<ArgumentException>(async () => await host.Producer.GetJobAsync(id));
        var cancel = await Assert.ThrowsAsync<ArgumentException>(async () => await host.Producer.CancelAsync(id));
        var cancelScheduled = await Assert.ThrowsAsync<ArgumentException>(async () => await host.Producer.CancelScheduledAsync(id));

        Assert.All(new[] { get, cancel, cancelScheduled }, ex => Assert.Equal("jobId", ex.ParamName));

        // The extremes of the grammar reach Redis, which knows no such job.
        Assert.Null(await host.Producer.GetJobAsync("18446744073709551615-18446744073709551615"));
        Assert.Equal(JobCancelOutcome.NotFound, (await host.Producer.CancelAsync("0-0")).Outcome);
        Assert.False(await host.Producer.CancelScheduledAsync("s18446744073709551615-0"));
    }

    [Fact]
    public async Task GetJobAsync_FailedTwiceThenSucceeded_ListsEveryAttemptAndRetryingBetween()
    {
        var log = new JobLog();
        var secondFailed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var letThirdRun = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (_, call, _) =>
        {
            if (call == 3)
            {
                await letThirdRun.Task;
                return;
            }

            throw new InvalidOperationException($"failure {call}");
        };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.Retry.MaxAttempts = 3;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(300);
            o.Retry.UseJitter = false;
        });

        string id = await host.Producer.EnqueueAsync(new TestJob(1));
        var retrying = await Eventually.ValueAsync(() => host.Producer.GetJobAsync(id), j => j?.State == JobState.Retrying, "the first retry waiting");
        Assert.NotNull(retrying!.RunAt);
        Assert.Contains("failure 1", retrying.LastError);
        Assert.Equal(JobState.Retrying, Assert.Single(retrying.Attempts).Outcome);

        // Its third attempt runs under a new stream entry: the job's id still finds it.
        await log.WaitUntilAsync(() => log.Runs.Count == 3, "the third attempt to start");
        var third = await host.Producer.GetJobAsync(id);
        Assert.Equal((JobState.Running, 3), (third!.State, third.Attempt));
        letThirdRun.SetResult();

        var done = await Eventually.ValueAsync(() => host.Producer.GetJobAsync(id), j => j?.State == JobState.Succeeded, "the success");
        Assert.Equal(3, done!.Attempt);
        Assert.Equal([1, 2, 3], done.Attempts.Select(a => a.Number));
        Assert.Equal([JobState.Retrying, JobState.Retrying, JobState.Succeeded], done.Attempts.Select(a => a.Outcome));
        Assert.Contains("failure 1", done.Attempts[0].Error);
        Assert.Contains("failure 2", done.Attempts[1].Error);
        Assert.All(done.Attempts, a => Assert.Equal(FindStore(host).ConsumerName, a.WorkerName));
        Assert.Contains("failure 2", done.LastError);

        // Nothing of the live job is left behind but its record (the pointer to its newer entry is gone).
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        Assert.False(await client.GetDatabase().KeyExistsAsync(FindStore(host).Keys.JobLocation(id)));
    }

    [Fact]
    public async Task GetJobAsync_FailedEveryAttempt_DeadLetteredWithItsAttempts()
    {
        var log = new JobLog { Behavior = static (_, call, _) => throw new InvalidOperationException($"boom {call}") };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(50);
        });

        string id = await host.Producer.EnqueueAsync(new TestJob(1));

        var dead = await Eventually.ValueAsync(() => host.Producer.GetJobAsync(id), j => j?.State == JobState.DeadLettered, "the dead letter");
        Assert.Equal(2, dead!.Attempt);
        Assert.Equal([JobState.Retrying, JobState.DeadLettered], dead.Attempts.Select(a => a.Outcome));
        Assert.Contains("boom 2", dead.LastError);
        Assert.False(dead.CancelIgnored);
    }

    [Fact]
    public async Task GetJobAsync_RetentionAndCountCap_ForgetEndedJobsAndTheirIndexEntries()
    {
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.FinishedJobRetention = TimeSpan.FromSeconds(1);
            o.MaxFinishedJobs = 2;
        });
        var store = FindStore(host);
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();

        var ids = new List<string>();
        for (int n = 1; n <= 4; n++)
        {
            ids.Add(await host.Producer.EnqueueAsync(new TestJob(n)));
            await log.WaitUntilAsync(() => log.Completed == n, $"job {n}");
            await Eventually.ValueAsync(() => host.Producer.GetJobAsync(ids[^1]), j => j?.State == JobState.Succeeded, $"job {n} recorded");
        }

        // A later round trims: only the 2 latest are kept (the count cap), their records with them.
        await Task.Delay(150);
        ids.Add(await host.Producer.EnqueueAsync(new TestJob(5)));
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(store.Keys.Succeeded) <= 2, "the list trimmed to the cap");
        Assert.Null(await host.Producer.GetJobAsync(ids[0]));
        Assert.False(await db.HashExistsAsync(store.Keys.EndedRecords, ids[0]));
        Assert.False(await db.KeyExistsAsync(store.Keys.JobRecord(ids[0])));

        // And the retention: the trim of a later round (an idle instance's poll, here) drops them.
        await Eventually.HoldsAsync(async () => await host.Producer.GetJobAsync(ids[^1]) is null, "the last record expired", TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task GetJobAsync_NoRetention_KeepsNoRecordOfSuccesses()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => o.FinishedJobRetention = TimeSpan.Zero);
        var store = FindStore(host);

        string id = await host.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Completed == 1, "the job");
        await Eventually.HoldsAsync(async () => await host.Producer.GetJobAsync(id) is null, "the entry acknowledged");

        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        Assert.False(await client.GetDatabase().KeyExistsAsync(store.Keys.JobRecord(id)));
        Assert.Equal(0, await client.GetDatabase().HashLengthAsync(store.Keys.EndedRecords));
        Assert.Equal(0, await client.GetDatabase().SortedSetLengthAsync(store.Keys.Succeeded));
    }

    [Fact]
    public async Task CancelAsync_QueuedJob_RemovedNeverRunsAndItsKeyFreed()
    {
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "p", configureDurable: d => d.Consume = false);
        var first = await producer.Producer.EnqueueAsync(new TestJob(1), new JobOptions { IdempotencyKey = "order-1" });
        string kept = await producer.Producer.EnqueueAsync(new TestJob(2));

        var result = await producer.Producer.CancelAsync(first.JobId);

        Assert.Equal(JobCancelOutcome.Canceled, result.Outcome);
        Assert.Equal(JobState.Canceled, result.Job!.State);
        Assert.Equal(JobCancelOutcome.AlreadyFinished, (await producer.Producer.CancelAsync(first.JobId)).Outcome);
        var again = await producer.Producer.EnqueueAsync(new TestJob(3), new JobOptions { IdempotencyKey = "order-1" });
        Assert.True(again.Created);

        await using var consumer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "c");
        await log.WaitUntilAsync(() => log.Completed == 2, "the two other jobs");
        Assert.Equal((0, 1, 1), (log.CallsOf(1), log.CallsOf(2), log.CallsOf(3)));
        Assert.Equal(JobState.Canceled, (await consumer.Producer.GetJobAsync(first.JobId))!.State);
        Assert.NotNull(kept);
    }

    [Fact]
    public async Task CancelAsync_RetriedJobByItsCurrentStreamId_CancelsTheJobUnderItsOwnId()
    {
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "p", configureDurable: d => d.Consume = false);
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = FindStore(producer).Keys;

        // A keyed job E1 whose first attempt failed and whose retry is queued as E2 (field j = E1), as a consumer leaves it.
        var (e1, e2) = await Scripts.ScriptState.RetriedAsync(db, keys, "order-7");
        Assert.Equal((e1, JobState.Queued, 2), ((await producer.Producer.GetJobAsync(e2))!.Id, (await producer.Producer.GetJobAsync(e2))!.State, (await producer.Producer.GetJobAsync(e2))!.Attempt));

        var result = await producer.Producer.CancelAsync(e2);

        Assert.Equal(JobCancelOutcome.Canceled, result.Outcome);
        Assert.Equal((e1, JobState.Canceled), (result.Job!.Id, result.Job.State));
        var ended = (await producer.Producer.GetJobAsync(e1))!;
        Assert.Equal((JobState.Canceled, 2), (ended.State, ended.Attempt));
        Assert.Equal("boom", Assert.Single(ended.Attempts).Error);
        Assert.False(await db.KeyExistsAsync(keys.JobLocation(e1)), "at:E1 is left");
        Assert.False(await db.KeyExistsAsync(keys.JobRecord(e1)), "job:E1 is left");
        Assert.False(await db.KeyExistsAsync(keys.JobRecord(e2)), "a record is written under E2");
        Assert.True((await producer.Producer.EnqueueAsync(new TestJob(2), new JobOptions { IdempotencyKey = "order-7" })).Created, "the key is still held");

        // It never runs: a consumer finds only the new job.
        await using var consumer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "c");
        await log.WaitUntilAsync(() => log.Completed == 1, "the new job");
        Assert.Equal((0, 1), (log.CallsOf(1), log.CallsOf(2)));
    }

    [Fact]
    public async Task CancelAsync_ScheduledAndRetryingJobs_RemovedFromTheDelayedSet()
    {
        var log = new JobLog { Behavior = static (job, _, _) => job.N == 2 ? throw new InvalidOperationException("fails") : ValueTask.CompletedTask };
        string prefix = DurableTestHost.NewPrefix();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o =>
        {
            o.Retry.MaxAttempts = 5;
            o.Retry.BaseDelay = TimeSpan.FromSeconds(30);
        });

        string scheduled = await host.Producer.ScheduleAsync(new TestJob(1), TimeSpan.FromHours(1));
        string failing = await host.Producer.EnqueueAsync(new TestJob(2));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(failing), j => j?.State == JobState.Retrying, "the retry waiting");

        var s = await host.Producer.CancelAsync(scheduled);
        var r = await host.Producer.CancelAsync(failing);

        Assert.Equal((JobCancelOutcome.Canceled, JobState.Canceled), (s.Outcome, s.Job!.State));
        Assert.Equal((JobCancelOutcome.Canceled, JobState.Canceled), (r.Outcome, r.Job!.State));
        Assert.Equal(JobState.Retrying, Assert.Single(r.Job.Attempts).Outcome);
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        Assert.Equal(0, await client.GetDatabase().SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)));
        Assert.False(await host.Producer.CancelScheduledAsync(scheduled));
        Assert.Equal(JobCancelOutcome.NotFound, (await host.Producer.CancelAsync("1-0")).Outcome);
    }

    [Fact]
    public async Task CancelAsync_RunningOnAnotherInstance_TokenFiresThereAndItEndsCanceled()
    {
        var log = new JobLog();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (_, _, token) =>
        {
            started.TrySetResult();
            await Task.Delay(Timeout.Infinite, token);
        };
        string prefix = DurableTestHost.NewPrefix();
        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "w");
        await using var admin = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", configureDurable: d => d.Consume = false);
        string id = await admin.Producer.EnqueueAsync(new TestJob(1));
        await Wait.ForAsync(started.Task, "the job to start on the worker");

        var result = await admin.Producer.CancelAsync(id);

        Assert.Equal(JobCancelOutcome.CancelRequested, result.Outcome);
        Assert.Equal(FindStore(worker).ConsumerName, result.Job!.WorkerName);
        Assert.True(result.Job.CancelRequested);
        var ended = await Eventually.ValueAsync(() => admin.Producer.GetJobAsync(id), j => j?.State == JobState.Canceled, "the job to end cancelled");
        Assert.False(ended!.CancelIgnored);
        Assert.Equal((JobState.Canceled, FindStore(worker).ConsumerName), (ended.Attempts.Single().Outcome, ended.Attempts.Single().WorkerName));
        Assert.Equal(1, worker.Control.GetSnapshot().Totals.Canceled);
        Assert.Equal(0, log.Completed);
    }

    [Fact]
    public async Task CancelAsync_RunningJobIgnoresItsToken_SucceedsFlaggedCancelIgnoredAndWarned()
    {
        var log = new JobLog();
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var tokenFired = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (_, _, token) =>
        {
            using var registration = token.Register(() => tokenFired.TrySetResult());
            started.TrySetResult();
            await release.Task;
        };
        string prefix = DurableTestHost.NewPrefix();
        var logs = new LogCapture();
        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "w", logs: logs);
        await using var admin = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", configureDurable: d => d.Consume = false);
        string id = await admin.Producer.EnqueueAsync(new TestJob(1));
        await Wait.ForAsync(started.Task, "the job to start");

        Assert.Equal(JobCancelOutcome.CancelRequested, (await admin.Producer.CancelAsync(id)).Outcome);
        await Wait.ForAsync(tokenFired.Task, "the job's token to fire on the other instance");
        release.SetResult();

        var ended = await Eventually.ValueAsync(() => admin.Producer.GetJobAsync(id), j => j?.State == JobState.Succeeded, "the job's success");
        Assert.True(ended!.CancelRequested);
        Assert.True(ended.CancelIgnored);
        Assert.Contains(logs.Entries, e => e.EventId.Id == 514 && e.Level == LogLevel.Warning && e.Message.Contains(id, StringComparison.Ordinal));
    }

    [Fact]
    public async Task CancelAsync_JobInAnotherInstancesPrefetch_NeverStartsAndEndsCanceled()
    {
        var log = new JobLog();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        log.Behavior = async (job, _, _) =>
        {
            if (job.N == 1)
            {
                await release.Task;
            }
        };
        string prefix = DurableTestHost.NewPrefix();
        await using var worker = await DurableTestHost.StartAsync(redis.Server, log, prefix, "w", configure: o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.MaxConcurrency = 1; });
        await using var admin = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", configureDurable: d => d.Consume = false);
        await admin.Producer.EnqueueAsync(new TestJob(1));
        await log.WaitUntilAsync(() => log.Runs.Count == 1, "the blocking job");
        string waiting = await admin.Producer.EnqueueAsync(new TestJob(2));
        await Eventually.ValueAsync(() => admin.Producer.GetJobAsync(waiting), j => j?.State == JobState.Running, "the second job delivered to the worker's prefetch");

        var result = await admin.Producer.CancelAsync(waiting);

        Assert.Equal(JobCancelOutcome.CancelRequested, result.Outcome);
        await Eventually.ValueAsync(() => admin.Producer.GetJobAsync(waiting), j => j?.State == JobState.Canceled, "the job settled as cancelled by its holder");
        release.SetResult();
        await log.WaitUntilAsync(() => log.Completed == 1, "the blocking job");
        string after = await admin.Producer.EnqueueAsync(new TestJob(3));
        await log.WaitUntilAsync(() => log.Completed == 2, "a later job");
        Assert.Equal(0, log.CallsOf(2));
        await Eventually.HoldsAsync(() => Task.FromResult(worker.Control.GetSnapshot().Totals.Canceled == 1), "the cancel counted where it was held");
        Assert.NotNull(after);
    }

    [Fact]
    public async Task CancelAsync_HeldByADeadConsumer_EndsCanceledWhenReclaimedInsteadOfRunning()
    {
        var log = new JobLog();
        string prefix = DurableTestHost.NewPrefix();
        await using var producer = await DurableTestHost.StartAsync(redis.Server, log, prefix, "p", configureDurable: d => d.Consume = false);
        string id = await producer.Producer.EnqueueAsync(new TestJob(1));

        // A consumer that read the job and died: it is pending there, and the cancel's message reaches nobody.
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        await Eventually.HoldsAsync(async () => (await db.StreamGroupInfoAsync(DurableTestHost.StreamKey(prefix))).Length == 1, "the group");
        Assert.Single(await db.StreamReadGroupAsync(DurableTestHost.StreamKey(prefix), RedisStreamKeys.Group, "ghost", StackExchange.Redis.StreamPosition.NewMessages, 1));
        var result = await producer.Producer.CancelAsync(id);
        Assert.Equal((JobCancelOutcome.CancelRequested, "ghost"), (result.Outcome, result.Job!.WorkerName));

        await using var survivor = await DurableTestHost.StartAsync(redis.Server, log, prefix, "s", configureDurable: d =>
        {
            d.ClaimTimeout = TimeSpan.FromSeconds(1);
            d.HeartbeatInterval = TimeSpan.FromMilliseconds(200);
        });
        var ended = await Eventually.ValueAsync(() => producer.Producer.GetJobAsync(id), j => j?.State == JobState.Canceled, "the reclaimed job ended cancelled");
        string after = await producer.Producer.EnqueueAsync(new TestJob(2));
        await log.WaitUntilAsync(() => log.Completed == 1, "a later job on the survivor");

        Assert.Equal(0, log.CallsOf(1));
        Assert.True(ended!.CancelRequested);

        // The later job's handler has returned; its acknowledgement reaches Redis with the store's next round.
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "an empty stream");
        Assert.NotNull(after);
    }

    [Fact]
    public async Task CancelAsync_RacingCompletion_EveryJobEndsOnceAndConsistently()
    {
        var log = new JobLog
        {
            Behavior = static async (job, _, token) =>
            {
                if (job.N % 3 == 0)
                {
                    await Task.Delay(job.N % 7, token);
                }
            },
        };
        string prefix = DurableTestHost.NewPrefix();
        await using var a = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a");
        await using var b = await DurableTestHost.StartAsync(redis.Server, log, prefix, "b");
        const int Jobs = 120;

        var ids = new string[Jobs];
        var outcomes = new JobCancelOutcome[Jobs];
        await Parallel.ForAsync(0, Jobs, new ParallelOptions { MaxDegreeOfParallelism = 8 }, async (n, _) =>
        {
            var producer = n % 2 == 0 ? a.Producer : b.Producer;
            ids[n] = await producer.EnqueueAsync(new TestJob(n));
            if (n % 2 == 0)
            {
                outcomes[n] = (await producer.CancelAsync(ids[n])).Outcome;
            }
        });

        for (int n = 0; n < Jobs; n++)
        {
            var job = await Eventually.ValueAsync(() => a.Producer.GetJobAsync(ids[n]), j => j is { State: JobState.Succeeded or JobState.Canceled }, $"job {n} to end");
            if (n % 2 == 1)
            {
                // Never cancelled: it ran, once, and succeeded.
                Assert.Equal((JobState.Succeeded, 1), (job!.State, log.CallsOf(n)));
                continue;
            }

            switch (outcomes[n])
            {
                case JobCancelOutcome.Canceled:
                    Assert.Equal((JobState.Canceled, 0), (job!.State, log.CallsOf(n)));
                    break;
                case JobCancelOutcome.CancelRequested:
                    Assert.True(job!.CancelRequested, $"job {n}");
                    Assert.True(log.CallsOf(n) <= 1, $"job {n} ran {log.CallsOf(n)} times");
                    break;
                case JobCancelOutcome.AlreadyFinished:
                    Assert.Equal((JobState.Succeeded, 1), (job!.State, log.CallsOf(n)));
                    break;
                default:
                    Assert.Fail($"job {n}: {outcomes[n]}");
                    break;
            }
        }

        // Every job accepted ended exactly once across the two instances: nothing lost, nothing run twice.
        var totals = new[] { a, b }.Select(h => h.Control.GetSnapshot().Totals).ToArray();
        long canceledByToken = totals.Sum(t => t.Canceled);
        long canceledWaiting = outcomes.Count(o => o == JobCancelOutcome.Canceled);
        Assert.Equal(Jobs, totals.Sum(t => t.Succeeded) + canceledByToken + canceledWaiting);
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        Assert.Equal(0, await client.GetDatabase().StreamLengthAsync(DurableTestHost.StreamKey(prefix)));
    }

    private static RedisStreamStore FindStore(DurableTestHost host) =>
        host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
}
