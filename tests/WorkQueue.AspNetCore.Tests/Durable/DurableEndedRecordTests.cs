using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// Where an ended durable job's record lives (see <see cref="DurableScripts"/>): a field of the queue's ended hash, listed
/// by its end and dropped with its list member by the round's trim (the retention, the count cap), never a string of its
/// own with an expiry; a live record (a retry, a cancel asked) is merged in once and leaves nothing behind; a record the
/// previous version wrote as a string is still read.
/// </summary>
public sealed class DurableEndedRecordTests(RedisServerFixture redis, ITestOutputHelper output) : IClassFixture<RedisServerFixture>
{
    private const char US = '\u001f';

    [Fact]
    public async Task EndedRecords_MoreEndingsThanTheCap_HashAndListsHoldTheNewestOfEachEnding()
    {
        const int Cap = 3;
        var log = new JobLog { Behavior = static (job, _, _) => job.N % 2 == 0 ? throw new InvalidOperationException($"even {job.N}") : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.MaxFinishedJobs = Cap;
            o.Retry.MaxAttempts = 1;
        });
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();

        // One at a time, so they end in order: odd ones succeed, even ones are dead-lettered.
        var ids = new List<string>();
        for (int n = 1; n <= 8; n++)
        {
            ids.Add(await host.Producer.EnqueueAsync(new TestJob(n)));
            var expected = n % 2 == 0 ? JobState.DeadLettered : JobState.Succeeded;
            await Eventually.ValueAsync(() => host.Producer.GetJobAsync(ids[^1]), j => j?.State == expected, $"job {n} ended");
        }

        await Eventually.HoldsAsync(
            async () => await db.SortedSetLengthAsync(keys.Succeeded) == Cap && await db.SortedSetLengthAsync(keys.DeadLettered) == Cap,
            "both lists trimmed to the cap");
        Assert.Equal(2 * Cap, await db.HashLengthAsync(keys.EndedRecords));
        for (int n = 1; n <= 8; n++)
        {
            var job = await host.Producer.GetJobAsync(ids[n - 1]);
            Assert.True(n <= 2 ? job is null : job?.State is JobState.Succeeded or JobState.DeadLettered, $"job {n}: {job?.State}");
            Assert.False(await db.KeyExistsAsync(keys.JobRecord(ids[n - 1])), $"job {n} left a record string");
        }
    }

    [Fact]
    public async Task Trim_RecordsOlderThanTheRetention_DroppedWithTheirListMembersOrWithout()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "retention");
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        long now = await RedisNowAsync(client);
        foreach (var (list, state) in new[] { (keys.Succeeded, "S"), (keys.DeadLettered, "D"), (keys.Canceled, "C") })
        {
            await db.HashSetAsync(keys.EndedRecords, [new($"old-{state}", Record(state, now - 120_000)), new($"new-{state}", Record(state, now))]);
            await db.SortedSetAddAsync(list, [new($"old-{state}", now - 120_000), new($"new-{state}", now)]);
        }

        // Records no list holds any more (a version before the ended hash trimmed the lists during a rolling upgrade).
        await db.HashSetAsync(keys.EndedRecords, [new("orphan-old", Record("S", now - 120_000)), new("orphan-new", Record("S", now))]);

        // A round with nothing to store, acknowledge or fetch, that trims: retention 1 minute, cap 10,000.
        var result = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(
            DurableScripts.Round,
            [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch],
            RoundArgs(keys, "c", 60_000, trim: true)))!);

        Assert.True(result.AckError is null, $"The acknowledgement part failed: {result.AckError}.");
        Assert.Equal(["new-C", "new-D", "new-S", "orphan-new"], (await db.HashKeysAsync(keys.EndedRecords)).Select(k => (string)k!).Order());
        foreach (var list in new[] { keys.Succeeded, keys.DeadLettered, keys.Canceled })
        {
            Assert.Single(await db.SortedSetRangeByRankAsync(list), m => ((string)m!).StartsWith("new-", StringComparison.Ordinal));
        }
    }

    [Fact]
    public async Task GetJobAsync_RetriedThenSucceeded_HistoryOnceAndNoLiveRecordLeft()
    {
        var log = new JobLog { Behavior = static (_, call, _) => call == 1 ? throw new InvalidOperationException("first try") : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(50);
        });
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();

        string id = await host.Producer.EnqueueAsync(new TestJob(1));
        var done = await Eventually.ValueAsync(() => host.Producer.GetJobAsync(id), j => j?.State == JobState.Succeeded, "the retried job's success");

        Assert.Equal([JobState.Retrying, JobState.Succeeded], done!.Attempts.Select(a => a.Outcome));
        Assert.Equal([1, 2], done.Attempts.Select(a => a.Number));
        Assert.Contains("first try", done.LastError);
        Assert.False(await db.KeyExistsAsync(keys.JobRecord(id)), "the live record string is left behind");
        Assert.False(await db.KeyExistsAsync(keys.JobLocation(id)), "the job's location is left behind");
        string record = (string)(await db.HashGetAsync(keys.EndedRecords, id))!;
        Assert.StartsWith("S", record, StringComparison.Ordinal);
        Assert.Equal(1, record.Count(c => c == '\u001e'));
    }

    [Fact]
    public async Task RequeueDeadLetter_RunsAgain_NoLongerReadAsDeadLettered()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = async (_, call, _) => { if (call == 1) { throw new InvalidOperationException("first try"); } await gate.Task; } };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => o.Retry.MaxAttempts = 1);
        var store = FindStore(host);
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();

        string id = await host.Producer.EnqueueAsync(new TestJob(1));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(id), j => j?.State == JobState.DeadLettered, "the dead letter");
        var dead = Assert.Single(await store.Jobs.ReadDeadLettersAsync(10));
        Assert.NotNull((await store.Jobs.RequeueDeadLetterAsync(dead.Id)).NewId);
        await log.WaitUntilAsync(() => log.Runs.Count == 2, "the requeued job to run");

        Assert.False(await db.HashExistsAsync(store.Keys.EndedRecords, id), "the dead letter's record is still an ended one");
        Assert.Equal(JobState.Running, (await host.Producer.GetJobAsync(id))?.State);

        gate.SetResult();
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(id), j => j?.State == JobState.Succeeded, "the requeued job's success");
        Assert.True(await db.HashExistsAsync(store.Keys.EndedRecords, id));
        Assert.Equal(0, await db.SortedSetLengthAsync(store.Keys.DeadLettered));
    }

    [Fact]
    public async Task GetJobAsync_EndedRecordThePreviousVersionWroteAsAString_StillFoundListedAndEnded()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix());
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        long now = await RedisNowAsync(client);

        // As the version before the ended hash recorded a success: a string with the retention as its expiry, listed by its end.
        const string Id = "1700000000000-7";
        await db.StringSetAsync(keys.JobRecord(Id), Record("S", now), TimeSpan.FromMinutes(10));
        await db.SortedSetAddAsync(keys.Succeeded, Id, now);

        var job = await host.Producer.GetJobAsync(Id);
        Assert.Equal(JobState.Succeeded, job?.State);
        Assert.Equal("old-consumer", job!.WorkerName);
        var page = await host.Producer.FindJobsAsync(new JobQuery { States = [JobState.Succeeded] });
        Assert.Equal(Id, Assert.Single(page.Jobs).Id);
        Assert.Equal(JobCancelOutcome.AlreadyFinished, (await host.Producer.CancelAsync(Id)).Outcome);
    }

    [Fact]
    public async Task ThreeInstances_RetriesAndCancels_EveryEndingInTheHashOnceAndNoRecordStringLeft()
    {
        const int Jobs = 300;
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog { Behavior = static (job, call, _) => job.N % 3 == 0 && call == 1 ? throw new InvalidOperationException($"first try of {job.N}") : ValueTask.CompletedTask };
        void Configure(WorkQueueOptions o)
        {
            o.Retry.MaxAttempts = 3;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(20);
        }

        await using var a = await DurableTestHost.StartAsync(redis.Server, log, prefix, "a", Configure);
        await using var b = await DurableTestHost.StartAsync(redis.Server, log, prefix, "b", Configure);
        await using var c = await DurableTestHost.StartAsync(redis.Server, log, prefix, "c", Configure);
        var keys = FindStore(a).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();

        var producers = new[] { a, b, c };
        string[] ids = await Task.WhenAll(Enumerable.Range(0, Jobs).Select(async n => await producers[n % 3].Producer.EnqueueAsync(new TestJob(n))));
        // Cancels racing the jobs: a queued job is removed, a running one (its handler ignores the token) ends flagged, an ended one is left.
        var cancels = await Task.WhenAll(Enumerable.Range(0, Jobs).Where(n => n % 10 == 5).Select(async n => (n, (await producers[(n + 1) % 3].Producer.CancelAsync(ids[n])).Outcome)));
        var asked = cancels.Where(x => x.Outcome == JobCancelOutcome.CancelRequested).Select(x => x.n).ToHashSet();

        try
        {
            await Eventually.HoldsAsync(
                async () => await db.SortedSetLengthAsync(keys.Succeeded) + await db.SortedSetLengthAsync(keys.Canceled) + await db.SortedSetLengthAsync(keys.DeadLettered) == Jobs,
                "every job ended", TimeSpan.FromSeconds(60));
        }
        catch (Xunit.Sdk.FailException)
        {
            // Which jobs, and where they are, so that a failure says what went wrong.
            var unended = new List<string>();
            for (int n = 0; n < Jobs; n++)
            {
                var job = await a.Producer.GetJobAsync(ids[n]);
                if (job?.State is not (JobState.Succeeded or JobState.Canceled or JobState.DeadLettered))
                {
                    unended.Add($"{n} ({ids[n]}): {job?.State.ToString() ?? "not found"}, attempt {job?.Attempt}, on {job?.WorkerName}, cancel asked {job?.CancelRequested}");
                }
            }

            Assert.Fail($"Not every job ended in 60 s: succeeded list {await db.SortedSetLengthAsync(keys.Succeeded)}, cancelled list {await db.SortedSetLengthAsync(keys.Canceled)}, dead-letter list {await db.SortedSetLengthAsync(keys.DeadLettered)}, ended hash {await db.HashLengthAsync(keys.EndedRecords)}, pending {(await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount}; not ended: {string.Join("; ", unended)}");
        }

        Assert.Equal(Jobs, await db.HashLengthAsync(keys.EndedRecords));
        var server = client.GetServer(client.GetEndPoints()[0]);
        Assert.Empty(server.Keys(pattern: $"{prefix}:*:job:*").ToList());
        Assert.Empty(server.Keys(pattern: $"{prefix}:*:at:*").ToList());
        for (int n = 0; n < Jobs; n++)
        {
            var job = await a.Producer.GetJobAsync(ids[n]);
            Assert.True(job?.State is JobState.Succeeded or JobState.Canceled or JobState.DeadLettered, $"job {n}: {job?.State}");
            if (job!.State == JobState.DeadLettered)
            {
                // Rarely, a cancel reaches a job whose first try is failing (every 30th from the 15th) while that try runs:
                // a job that throws after a cancel was asked is not retried (log 514), so it ends dead-lettered, flagged.
                Assert.Equal(15, n % 30);
                Assert.Contains(n, asked);
                Assert.True(job.CancelRequested);
                Assert.Equal([JobState.DeadLettered], job.Attempts.Select(x => x.Outcome));
            }
            else if (job.State == JobState.Succeeded)
            {
                // Its history once: a failed first try, then the success, for every third job.
                Assert.Equal(n % 3 == 0 ? [JobState.Retrying, JobState.Succeeded] : [JobState.Succeeded], job.Attempts.Select(x => x.Outcome));
                // A cancel asked of it while it ran (its handler ignored the token) is in its ended record.
                Assert.Equal(asked.Contains(n), job.CancelRequested);
            }
            else
            {
                Assert.Equal(5, n % 10);
            }
        }

        output.WriteLine($"cancels: {string.Join(", ", cancels.GroupBy(x => x.Outcome).Select(g => $"{g.Key} {g.Count()}"))}");
    }

    [Fact]
    public async Task Round_SuccessesOfOneRound_RecordedWithOneHsetOneZaddAndNoStringWrites()
    {
        const int Jobs = 100;
        await using var server = await RedisServer.StartAsync();
        await using var client = await DurableTestHost.ConnectAsync(server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "counts");
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        for (int i = 0; i < Jobs; i++)
        {
            await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("a", "1"), new("t", "0")]);
        }

        var read = await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, "c", StreamPosition.NewMessages, Jobs);
        Assert.Equal(Jobs, read.Length);
        await client.GetServer(client.GetEndPoints()[0]).ConfigResetStatisticsAsync();

        var args = new RoundArguments(0, false, releases: 0, plainAcks: 0, acks: Jobs, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, "c", 1_000, keys.NudgeName, 0, 256, 0, 600_000, 10_000, trim: false);
        foreach (var e in read)
        {
            args.AddAck(e.Id!, e.Id!, 1, 0, 1_700_000_000_000, cancelRequested: false);
        }

        var result = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch], args.Values))!);

        Assert.True(result.AckError is null, $"The acknowledgement part failed: {result.AckError}.");
        var calls = await CommandCallsAsync(client);
        output.WriteLine($"{Jobs} successes in one round: {string.Join(", ", calls.OrderBy(c => c.Key).Select(c => $"{c.Key} {c.Value}"))}");
        Assert.Equal(1, Calls(calls, "hset"));
        Assert.Equal(1, Calls(calls, "zadd"));
        Assert.Equal(1, Calls(calls, "mget"));
        Assert.Equal(0, Calls(calls, "set") + Calls(calls, "del") + Calls(calls, "pexpire"));
        Assert.Equal(Jobs, await db.HashLengthAsync(keys.EndedRecords));
        Assert.Equal(Jobs, await db.SortedSetLengthAsync(keys.Succeeded));
    }

    [Fact]
    public async Task Round_AcknowledgementSentAgainAfterALostReply_RecordKeepsItsHistoryAndCancelFlag()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "twice");
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        string id = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("a", "2"), new("t", "0")]))!;
        Assert.Single(await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, "c", StreamPosition.NewMessages, 1));

        // The live record of a job that failed once and was asked to cancel while it ran (its handler ignored it).
        await db.StringSetAsync(keys.JobRecord(id), string.Join(US, "r", "1", string.Empty, "2", "0", string.Empty, string.Empty, string.Empty)
            + "\u001e" + string.Join(US, "1", "c", "1", "2", "R", "first try"));

        // The store puts a round's acknowledgements back when its reply is lost (RedisStreamStore.Round.cs) and sends
        // them again: the second run finds the entry acknowledged and the live record merged and gone.
        var ack = new RoundArguments(0, false, releases: 0, plainAcks: 0, acks: 1, recordsKept: true);
        ack.SetSettings(RedisStreamKeys.Group, "c", 1_000, keys.NudgeName, 0, 256, 0, 600_000, 10_000, trim: false);
        ack.AddAck(id, id, 2, 0, 1_700_000_000_000, cancelRequested: false);
        var args = ack.Values;
        RedisKey[] roundKeys = [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch];
        var first = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, roundKeys, args))!);
        Assert.True(first.AckError is null, $"The acknowledgement part failed: {first.AckError}.");
        string recorded = (string)(await db.HashGetAsync(keys.EndedRecords, id))!;
        double? listed = await db.SortedSetScoreAsync(keys.Succeeded, id);
        Assert.Contains("first try", recorded, StringComparison.Ordinal);

        var second = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, roundKeys, args))!);

        Assert.True(second.AckError is null, $"The acknowledgement part failed: {second.AckError}.");
        Assert.Equal(recorded, (string)(await db.HashGetAsync(keys.EndedRecords, id))!);
        Assert.Equal(listed, await db.SortedSetScoreAsync(keys.Succeeded, id));
    }

    [Fact]
    public async Task Round_LateCompletionOfAnEntryRetriedElsewhere_JobStaysRetrying()
    {
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "late");
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        string id = (string)(await db.StreamAddAsync(keys.Stream, [new("p", "{}"), new("a", "1"), new("t", "0")]))!;
        Assert.Single(await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, "slow", StreamPosition.NewMessages, 1));

        // "slow" stopped refreshing its claim; "other" reclaimed the entry, ran it, it failed and is due again in a minute.
        await db.StreamClaimAsync(keys.Stream, RedisStreamKeys.Group, "other", 0, [id]);
        var retried = await db.ScriptEvaluateAsync(
            DurableScripts.ScheduleRetry,
            [keys.Stream, keys.Delayed, keys.Epoch],
            [RedisStreamKeys.Group, "other", id, 60_000, $"{id}|2|0|{{}}", id, string.Empty, string.Empty, 0, keys.NudgeName, 1, 0, 1_700_000_000_000, "failed elsewhere"]);
        Assert.Equal(1, (int)retried);

        // Then "slow"'s run returns normally: its completion is acknowledged in its next round (acknowledged even if
        // another consumer reclaimed the entry, see RedisStreamStore.Completed), after the entry was settled elsewhere.
        var result = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(
            DurableScripts.Round,
            [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch],
            RoundArgs(keys, "slow", 600_000, trim: false, id)))!);
        Assert.True(result.AckError is null, $"The acknowledgement part failed: {result.AckError}.");

        var status = (RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Status, [keys.Stream, keys.Delayed, keys.Scheduled], [RedisStreamKeys.Group, id]))!;
        Assert.Equal("R", (string)status[0]!);
        Assert.False(await db.HashExistsAsync(keys.EndedRecords, id), "the retrying job has an ended record");
        Assert.Null(await db.SortedSetScoreAsync(keys.Succeeded, id));
        Assert.True(await db.KeyExistsAsync(keys.JobRecord(id)), "the retrying job's live record is gone");
        Assert.True(await db.KeyExistsAsync(keys.JobLocation(id)), "the retrying job's location is gone");
    }

    [Fact]
    public async Task Trim_QueuePaused_CancelledScheduledJobsStillCappedAndOldRecordsForgotten()
    {
        const int Cap = 2;
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.MaxFinishedJobs = Cap;
            o.FinishedJobRetention = TimeSpan.FromSeconds(2);
        }, configureDurable: d => d.HeartbeatInterval = TimeSpan.FromMilliseconds(300));
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        string done = await host.Producer.EnqueueAsync(new TestJob(0));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(done), j => j?.State == JobState.Succeeded, "the first job's success");

        // A paused queue fetches nothing, so it sends no round of its own (nor does an instance whose slots are all
        // taken by long jobs); its ended records must still be trimmed, as GetJobAsync's remarks promise.
        host.Control.Pause();
        for (int n = 1; n <= 5; n++)
        {
            string id = await host.Producer.ScheduleAsync(new TestJob(n), TimeSpan.FromHours(1));
            Assert.True(await host.Producer.CancelScheduledAsync(id));
        }

        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(keys.Canceled) <= Cap, "the cancelled list trimmed to the cap while paused", TimeSpan.FromSeconds(15));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(done), j => j is null, "the success forgotten after the retention while paused", TimeSpan.FromSeconds(15));
        Assert.Equal(0, await db.SortedSetLengthAsync(keys.Succeeded));
    }

    [Fact]
    public async Task ManyJobs_DefaultRecords_NoRecordStringWrittenOrExpired()
    {
        const int Jobs = 2_000;
        await using var server = await RedisServer.StartAsync();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(server, log, DurableTestHost.NewPrefix(), configure: o => o.MaxFinishedJobs = 500);
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(server);
        var db = client.GetDatabase();
        var admin = client.GetServer(client.GetEndPoints()[0]);
        await admin.ConfigResetStatisticsAsync();

        await Task.WhenAll(Enumerable.Range(0, Jobs).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));
        await log.WaitUntilAsync(() => log.Completed == Jobs, $"{Jobs} jobs");
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(keys.Succeeded) == 500, "the list trimmed to the cap");

        var calls = await CommandCallsAsync(client);
        long expired = long.Parse(
            (await admin.InfoAsync("stats")).SelectMany(g => g).Single(p => p.Key == "expired_keys").Value, CultureInfo.InvariantCulture);
        output.WriteLine($"{Jobs} jobs, calls per job: " + string.Join(", ", calls.OrderBy(c => c.Key).Select(c => $"{c.Key} {(double)c.Value / Jobs:0.###}")) + $"; expired keys {expired}");
        Assert.Equal(500, await db.HashLengthAsync(keys.EndedRecords));
        Assert.Equal(0, expired);

        // Without idempotency keys nothing writes a string per job any more (a few SETs: the epoch, the recurring hash...).
        Assert.True(Calls(calls, "set") < Jobs / 20, $"set {Calls(calls, "set")}");
        Assert.True(Calls(calls, "del") < Jobs / 20, $"del {Calls(calls, "del")}");
        Assert.True(Calls(calls, "hset") <= Jobs, $"hset {Calls(calls, "hset")}");
    }

    [Fact]
    public async Task Trim_IdleConsumingInstance_PollsWithoutTrimmingUntilARecordIsDue()
    {
        await using var server = await RedisServer.StartAsync();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(server, log, DurableTestHost.NewPrefix(), configureDurable: d => d.PollInterval = TimeSpan.FromMilliseconds(50));
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(server);
        var db = client.GetDatabase();
        string id = await host.Producer.EnqueueAsync(new TestJob(1));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(id), j => j?.State == JobState.Succeeded, "the success recorded");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(keys.Stream) == 0, "the acknowledging round done");
        await client.GetServer(client.GetEndPoints()[0]).ConfigResetStatisticsAsync();

        // Twenty polls of an idle instance whose one record passes the retention in ten minutes: none needs a trim (each
        // trim reads every list and sweeps the ended hash); it used to trim on every poll at least 100 ms after the last.
        await Eventually.HoldsAsync(async () => Calls(await CommandCallsAsync(client), "xreadgroup") >= 20, "twenty polls");
        var calls = await CommandCallsAsync(client);
        output.WriteLine($"{Calls(calls, "xreadgroup")} polls: " + string.Join(", ", calls.OrderBy(c => c.Key).Select(c => $"{c.Key} {c.Value}")));
        Assert.True(Calls(calls, "hscan") <= 1, $"hscan {Calls(calls, "hscan")}");
        Assert.True(Calls(calls, "zcard") <= 3, $"zcard {Calls(calls, "zcard")}");
        Assert.NotNull(await host.Producer.GetJobAsync(id));
    }

    [Fact]
    public async Task Trim_IdleConsumingInstance_DropsARecordOnceItPassesTheRetention()
    {
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => o.FinishedJobRetention = TimeSpan.FromSeconds(1));
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        string first = await host.Producer.EnqueueAsync(new TestJob(1));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(first), j => j?.State == JobState.Succeeded, "the first success recorded");
        string second = await host.Producer.EnqueueAsync(new TestJob(2));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(second), j => j?.State == JobState.Succeeded, "the second success recorded");

        // Idle from here: each record goes once it passes the retention (the last trim told when), not at the heartbeat.
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(keys.Succeeded) == 0, "both records trimmed", TimeSpan.FromSeconds(8));
        Assert.Equal(0, await db.HashLengthAsync(keys.EndedRecords));
    }

    [Fact]
    public async Task Trim_IdleInstanceDeadLettersPoisonOnReclaim_ListCappedOnItsNextRound()
    {
        const int Cap = 1;
        var heartbeat = TimeSpan.FromSeconds(6);
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o => o.MaxFinishedJobs = Cap, configureDurable: d =>
        {
            d.PollInterval = TimeSpan.FromMilliseconds(50);
            d.HeartbeatInterval = heartbeat;
            d.ClaimTimeout = heartbeat * 3;
            d.MaxDeliveries = 1;
        });
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();

        // Half a heartbeat after the start, a success: its round trims, so the idle instance's next trim comes half a
        // heartbeat after the next heartbeat (whose reclaim ends the poison below) rather than with it.
        await Task.Delay(heartbeat / 2);
        string ok = await host.Producer.EnqueueAsync(new TestJob(1));
        await Eventually.ValueAsync(() => host.Producer.GetJobAsync(ok), j => j?.State == JobState.Succeeded, "the success recorded");

        // Three entries a consumer that died took more than MaxDeliveries times, idle past the claim timeout (added, read and
        // claimed in one script, so the instance cannot fetch them first).
        await db.ScriptEvaluateAsync(
            """
            local ids = {}
            for i = 1, 3 do ids[i] = redis.call('XADD', KEYS[1], '*', 'p', '{"n":-1}', 't', '0') end
            redis.call('XREADGROUP', 'GROUP', ARGV[1], 'ghost', 'COUNT', 3, 'STREAMS', KEYS[1], '>')
            for i = 1, 3 do redis.call('XCLAIM', KEYS[1], ARGV[1], 'ghost', 0, ids[i], 'IDLE', 600000, 'RETRYCOUNT', 5) end
            return ids
            """,
            [keys.Stream],
            [RedisStreamKeys.Group]);

        // The next heartbeat's reclaim dead-letters them as poison: endings of this instance, so its next round trims the
        // dead-letter list to the cap, as after a dead letter of a job it ran (not at its next idle trim, up to a heartbeat on).
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(keys.Dead) == 3, "the poison dead-lettered", TimeSpan.FromSeconds(15));
        await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(keys.DeadLettered) <= Cap, "the dead-letter list trimmed to the cap", TimeSpan.FromSeconds(1.5));
        Assert.DoesNotContain(log.Runs, r => r.Job.N == -1);
    }

    [Fact]
    public async Task Trim_EverySlotTakenByLongJobs_CancelledJobsStillCappedWhileTheyRun()
    {
        const int Cap = 2;
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var log = new JobLog { Behavior = (job, _, _) => job.N < 0 ? new ValueTask(release.Task) : ValueTask.CompletedTask };
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, DurableTestHost.NewPrefix(), configure: o =>
        {
            o.MaxFinishedJobs = Cap;
            o.MinWorkers = 1;
            o.MaxWorkers = 1;
        }, configureDurable: d =>
        {
            d.Prefetch = 1;
            d.HeartbeatInterval = TimeSpan.FromMilliseconds(300);
        });
        var keys = FindStore(host).Keys;
        await using var client = await DurableTestHost.ConnectAsync(redis.Server);
        var db = client.GetDatabase();
        try
        {
            // One long job runs, a second waits in the prefetch (of one): the instance has no room to fetch into, so it
            // sends no round of its own until one of them ends.
            await host.Producer.EnqueueAsync(new TestJob(-1));
            await host.Producer.EnqueueAsync(new TestJob(-2));
            await log.WaitUntilAsync(() => log.Runs.Count == 1, "the first long job running");
            await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount == 2, "the second long job fetched into the prefetch", TimeSpan.FromSeconds(15));

            // All scheduled first, then all cancelled: no enqueue comes after the endings to carry a trim.
            var ids = new List<string>();
            for (int n = 1; n <= 5; n++)
            {
                ids.Add(await host.Producer.ScheduleAsync(new TestJob(n), TimeSpan.FromHours(1)));
            }

            foreach (string id in ids)
            {
                Assert.True(await host.Producer.CancelScheduledAsync(id));
            }

            await Eventually.HoldsAsync(async () => await db.SortedSetLengthAsync(keys.Canceled) <= Cap, "the cancelled list trimmed to the cap while the long jobs run", TimeSpan.FromSeconds(15));
            Assert.Single(log.Runs);
        }
        finally
        {
            release.TrySetResult();
        }

        await log.WaitUntilAsync(() => log.Completed == 2, "both long jobs completed once released");
    }

    private static string Record(string state, long at) =>
        string.Join(US, state, string.Empty, at.ToString(CultureInfo.InvariantCulture), "1", (at - 10).ToString(CultureInfo.InvariantCulture), "old-consumer", (at - 5).ToString(CultureInfo.InvariantCulture), string.Empty);

    private static async Task<long> RedisNowAsync(ConnectionMultiplexer client) =>
        new DateTimeOffset(DateTime.SpecifyKind(await client.GetServer(client.GetEndPoints()[0]).TimeAsync(), DateTimeKind.Utc)).ToUnixTimeMilliseconds();

    private static async Task<Dictionary<string, long>> CommandCallsAsync(ConnectionMultiplexer client)
    {
        var info = await client.GetServer(client.GetEndPoints()[0]).InfoAsync("commandstats");
        var calls = new Dictionary<string, long>();
        foreach (var pair in info.SelectMany(g => g))
        {
            // cmdstat_hset: calls=1,usec=3,usec_per_call=3.00,...
            string name = pair.Key.Replace("cmdstat_", string.Empty, StringComparison.Ordinal);
            string first = pair.Value.Split(',')[0];
            calls[name] = long.Parse(first.AsSpan(first.IndexOf('=') + 1), CultureInfo.InvariantCulture);
        }

        return calls;
    }

    private static long Calls(Dictionary<string, long> calls, string command) => calls.TryGetValue(command, out long n) ? n : 0;

    /// <summary>A round that only acknowledges <paramref name="ids"/> (attempt 1, no cancel) and trims when asked.</summary>
    private static RedisValue[] RoundArgs(RedisStreamKeys keys, string consumer, long finishedMs, bool trim, params string[] ids)
    {
        var args = new RoundArguments(0, false, releases: 0, plainAcks: 0, acks: ids.Length, recordsKept: finishedMs > 0);
        args.SetSettings(RedisStreamKeys.Group, consumer, 1_000, keys.NudgeName, 0, 256, 0, finishedMs, 10_000, trim);
        foreach (string id in ids)
        {
            args.AddAck(id, id, 1, 0, 1_700_000_000_000, cancelRequested: false);
        }

        return args.Values;
    }

    private static RedisStreamStore FindStore(DurableTestHost host) =>
        host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
}
