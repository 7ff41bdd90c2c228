using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The store's one call a turn (<c>RedisStreamStore.Round.cs</c>): enqueues, acknowledgements and the fetch travel
/// together, and each still fails on its own. Redis refuses one kind of command at a time through an ACL on the user
/// the host connects as (scripts run with their caller's permissions), so a test can refuse exactly one part.
/// </summary>
public sealed class DurableRoundTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string User = "worker";

    [Fact]
    public async Task RefusedAcknowledgements_DoNotFailEnqueues_AndLandOnceAllowed()
    {
        await using var acl = await AclHost.StartAsync(redis.Server);
        await acl.Host.Producer.EnqueueAsync(new TestJob(0));
        await acl.Log.WaitUntilAsync(() => acl.Log.Completed == 1, "job 0");
        await Eventually.HoldsAsync(async () => await acl.Db.StreamLengthAsync(acl.Stream) == 0, "job 0 acknowledged");

        await acl.RefuseAsync("-xack");
        await acl.Host.Producer.EnqueueAsync(new TestJob(1));
        await acl.Log.WaitUntilAsync(() => acl.Log.Completed == 2, "job 1 to run while its acknowledgement is refused");
        await Eventually.HoldsAsync(() => Task.FromResult(acl.Host.Control.GetSnapshot().Durable!.LastError is not null), "the refusal reported");

        // Every round from now on carries job 1's acknowledgement, which Redis keeps refusing.
        await Task.WhenAll(Enumerable.Range(2, 10).Select(async n => await acl.Host.Producer.EnqueueAsync(new TestJob(n))));
        await acl.Log.WaitUntilAsync(() => acl.Log.Completed == 12, "jobs 2-11 to run");
        Assert.Equal(11, (await acl.Db.StreamPendingAsync(acl.Stream, "workers")).PendingMessageCount);

        await acl.RefuseAsync("+xack");
        await Eventually.HoldsAsync(async () => await acl.Db.StreamLengthAsync(acl.Stream) == 0, "the acknowledgements to land and the stream to empty");
        Assert.Equal(0, (await acl.Db.StreamPendingAsync(acl.Stream, "workers")).PendingMessageCount);
        Assert.All(Enumerable.Range(0, 12), n => Assert.Equal(1, acl.Log.CallsOf(n)));
    }

    [Fact]
    public async Task RefusedEnqueues_FailExactlyTheirCallers_AndDoNotHoldBackAcknowledgements()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var acl = await AclHost.StartAsync(redis.Server, log => log.Behavior = async (_, _, _) => await gate.Task);
        for (int n = 0; n < 5; n++)
        {
            await acl.Host.Producer.EnqueueAsync(new TestJob(n));
        }

        await acl.Log.WaitUntilAsync(() => acl.Log.Runs.Count == 5, "jobs 0-4 to start");
        await acl.RefuseAsync("-xadd");

        // Producers keep an enqueue in every round, so the acknowledgements of jobs 0-4 can only land beside refused enqueues.
        using var stop = new CancellationTokenSource();
        var refusals = new List<JobRejectedException>();
        var producers = Enumerable.Range(0, 4).Select(p => Task.Run(async () =>
        {
            int stored = 0;
            for (int n = 100 + (p * 1_000); !stop.IsCancellationRequested; n++)
            {
                try
                {
                    await acl.Host.Producer.EnqueueAsync(new TestJob(n));
                    stored++;
                }
                catch (JobRejectedException ex)
                {
                    lock (refusals)
                    {
                        refusals.Add(ex);
                    }
                }
            }

            return stored;
        })).ToArray();
        await Eventually.HoldsAsync(() => Task.FromResult(Count(refusals) >= 4), "enqueues refused");
        gate.SetResult();
        await acl.Log.WaitUntilAsync(() => acl.Log.Completed == 5, "jobs 0-4 to complete");
        await Eventually.HoldsAsync(async () => await acl.Db.StreamLengthAsync(acl.Stream) == 0, "jobs 0-4 acknowledged while enqueues are refused");
        stop.Cancel();
        int[] stored = await Task.WhenAll(producers);

        Assert.All(stored, s => Assert.Equal(0, s));
        Assert.All(refusals, ex =>
        {
            Assert.Equal(RejectionReason.StoreUnavailable, ex.Reason);
            Assert.Contains("did not take the job", ex.Message, StringComparison.Ordinal);
        });
        await acl.RefuseAsync("+xadd");
        await acl.Host.Producer.EnqueueAsync(new TestJob(6));
        await acl.Log.WaitUntilAsync(() => acl.Log.CallsOf(6) == 1, "job 6 once Redis takes enqueues again");
    }

    [Fact]
    public async Task RefusedFetch_DoesNotFailEnqueues_AndTheJobsRunOnceAllowed()
    {
        await using var acl = await AclHost.StartAsync(redis.Server);
        await acl.RefuseAsync("-xreadgroup");

        // Each round that stores them also tries to read them back, and is refused.
        await Task.WhenAll(Enumerable.Range(0, 10).Select(async n => await acl.Host.Producer.EnqueueAsync(new TestJob(n))));
        Assert.Equal(10, await acl.Db.StreamLengthAsync(acl.Stream));
        await Eventually.HoldsAsync(() => Task.FromResult(acl.Host.Control.GetSnapshot().Durable!.LastError is not null), "the refusal reported");

        await acl.RefuseAsync("+xreadgroup");
        await acl.Log.WaitUntilAsync(() => acl.Log.Completed == 10, "jobs 0-9 once Redis lets them be read");
        Assert.All(Enumerable.Range(0, 10), n => Assert.Equal(1, acl.Log.CallsOf(n)));
    }

    [Fact]
    public async Task ScriptCacheFlushed_TheRoundIsSentAgain_NoEnqueueFailsAndEveryJobRunsOnce()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var admin = await DurableTestHost.ConnectAsync(redis.Server);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix);
        await Task.WhenAll(Enumerable.Range(0, 10).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));
        await log.WaitUntilAsync(() => log.Completed == 10, "jobs 0-9");

        // What a restarted Redis has: no scripts. The next round with a fetch (its script and its read in one
        // MULTI/EXEC) is answered NOSCRIPT for the script while the read runs.
        await admin.GetServer(admin.GetEndPoints()[0]).ScriptFlushAsync();
        await Task.WhenAll(Enumerable.Range(10, 10).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));

        await log.WaitUntilAsync(() => log.Completed == 20, "jobs 10-19");
        Assert.All(Enumerable.Range(0, 20), n => Assert.Equal(1, log.CallsOf(n)));
        await Eventually.HoldsAsync(async () => await admin.GetDatabase().StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "the stream to be empty");
    }

    [Fact]
    public async Task WholeRoundRefused_FailsTheBatch_AndPutsItsAcknowledgementsBack()
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var acl = await AclHost.StartAsync(redis.Server, log => log.Behavior = async (_, _, _) => await gate.Task);
        await acl.Host.Producer.EnqueueAsync(new TestJob(0));
        await acl.Log.WaitUntilAsync(() => acl.Log.Runs.Count == 1, "job 0 to start");

        // No script at all: the round is refused before any of it runs.
        await acl.RefuseAsync("-@scripting");
        var rejected = await Assert.ThrowsAsync<JobRejectedException>(async () => await acl.Host.Producer.EnqueueAsync(new TestJob(1)));
        Assert.Equal(RejectionReason.StoreUnavailable, rejected.Reason);
        gate.SetResult();
        await acl.Log.WaitUntilAsync(() => acl.Log.Completed == 1, "job 0 to complete");
        await Eventually.HoldsAsync(() => Task.FromResult(acl.Host.Control.GetSnapshot().Durable!.LastError is not null), "the refusal reported");
        Assert.Equal(1, (await acl.Db.StreamPendingAsync(acl.Stream, "workers")).PendingMessageCount);

        await acl.RefuseAsync("+@scripting");
        await Eventually.HoldsAsync(async () => await acl.Db.StreamLengthAsync(acl.Stream) == 0, "job 0's acknowledgement to land");
        Assert.Equal(0, acl.Log.CallsOf(1));
    }

    [Fact]
    public async Task GroupDeleted_EnqueuesOfTheRoundThatFindsItGoneAreStored_AndTheGroupIsMadeAgain()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();

        // No poll while the group is gone: the round that stores jobs 1-10 is the one that finds it missing.
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configureDurable: d => d.PollInterval = TimeSpan.FromMinutes(1));
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string stream = DurableTestHost.StreamKey(prefix);
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Completed == 1, "job 0");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(stream) == 0, "job 0 acknowledged");

        Assert.True(await db.StreamDeleteConsumerGroupAsync(stream, "workers"));
        await Task.WhenAll(Enumerable.Range(1, 10).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n))));

        await log.WaitUntilAsync(() => log.Completed == 11, "jobs 1-10 once the group is made again");
        Assert.All(Enumerable.Range(0, 11), n => Assert.Equal(1, log.CallsOf(n)));
        Assert.Single(await db.StreamGroupInfoAsync(stream));
    }

    [Fact]
    public async Task RoundWhoseReplyIsLost_WhatItFetchedIsTakenBackAtOnce_NotAfterTheClaimTimeout()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(
            redis.Server,
            log,
            prefix,
            configureDurable: d =>
            {
                d.ClaimTimeout = TimeSpan.FromMinutes(5);

                // Job 1 must not wait for this 5-minute reclaim. Whether the round that carried it also read it (then only
                // the take-back can run it) or not (then the next fetch does: the round's own nudge, which a pub/sub
                // connection timed out by the pause can miss, or the poll), it must run within seconds. A 1-minute poll
                // made the second case wait past the test's 30 s (seen once in CI).
                d.PollInterval = TimeSpan.FromSeconds(5);
            },
            connection: $"{redis.Server.Configuration},syncTimeout=1000");
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        await host.Producer.EnqueueAsync(new TestJob(0));
        await log.WaitUntilAsync(() => log.Completed == 1, "job 0");
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "job 0 acknowledged");

        // Redis holds every command for 2.5 s: the store stops waiting for the round carrying job 1 after 1 s, then Redis
        // runs it, storing job 1 and reading it for this consumer with nobody left to hear the reply. The pause must stay
        // well inside StackExchange.Redis's dead-socket rule (a connection that timed out a command and has read nothing for
        // more than 4 sync timeouts is dropped, and Redis then discards the paused round unrun: job 1 is simply not stored,
        // as its caller is told it may not be). A 3 s pause with a 0.5 s timeout crossed it under CI load. The host's
        // connection reads a reply just before the pause, so at most 2.5 s pass without one (the rule needs 5).
        await host.Services.GetRequiredService<IConnectionMultiplexer>().GetDatabase().PingAsync();
        await redisClient.GetServer(redisClient.GetEndPoints()[0]).ExecuteAsync("CLIENT", "PAUSE", "2500", "ALL");
        var unknown = await Assert.ThrowsAsync<EnqueueOutcomeUnknownException>(async () => await host.Producer.EnqueueAsync(new TestJob(1)));
        Assert.Contains("may or may not have been stored", unknown.Message, StringComparison.Ordinal);

        await log.WaitUntilAsync(() => log.Completed == 2, "job 1, taken back without waiting 5 minutes for a reclaim");
        Assert.Equal(1, log.CallsOf(1));
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "the stream to be empty");
    }

    [Fact]
    public async Task Round_AtItsLimits_StoresAcknowledgesAndFetchesInOneCall()
    {
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "limits");
        int batch = RedisStreamStore.BatchSize;
        const int Prefetch = 64;
        string payload = new('x', 16 * 1024);
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);
        for (int i = 0; i < batch; i++)
        {
            await db.StreamAddAsync(keys.Stream, [new("p", "done"), new("a", "1"), new("t", "0")]);
        }

        var done = await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, "c", StreamPosition.NewMessages, batch);
        Assert.Equal(batch, done.Length);

        // A full batch of 16 KiB payloads (4 MiB) and a full batch of acknowledgements, with the default prefetch's fetch.
        // Each success recorded (finished-job retention 1 minute) and the ended-job lists trimmed in the same call.
        var args = new RoundArguments(batch, plainEnqueues: false, releases: 0, plainAcks: 0, acks: batch, recordsKept: true);
        args.SetSettings(RedisStreamKeys.Group, "c", 1_000_000, keys.NudgeName, Prefetch, 256, 0, 60_000, 10_000, trim: true);
        args.NudgeTag = "c|1";
        for (int i = 0; i < batch; i++)
        {
            args.AddEnqueue(payload, string.Empty, string.Empty);
        }

        foreach (var e in done)
        {
            args.AddAck(e.Id!, e.Id!, 1, 0, 1_700_000_000_000, cancelRequested: false);
        }

        // As the store sends it: the script, then the read, in one MULTI/EXEC.
        var transaction = db.CreateTransaction();
        var round = transaction.ScriptEvaluateAsync(DurableScripts.Round, [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch], args.Values);
        var read = transaction.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, "c", StreamPosition.NewMessages, Prefetch);
        Assert.True(await transaction.ExecuteAsync());
        var result = new RoundReply((RedisResult[])(await round)!);

        Assert.Equal(batch, result.EnqueueAnswers.Length);
        Assert.True(result.EnqueueError is null && result.AckError is null && result.FetchError is null && result.AcksApplied, $"A part failed: {result.EnqueueError} / {result.AckError} / {result.FetchError}.");
        Assert.Equal(-1, (long)result.NextDue);
        var fetched = await read;
        Assert.Equal(Prefetch, fetched.Length);
        Assert.Equal((string?)result.EnqueueAnswers[0], (string?)fetched[0].Id);
        Assert.Equal(batch, await db.StreamLengthAsync(keys.Stream));
        Assert.Equal(Prefetch, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
        Assert.Equal(batch, await db.SortedSetLengthAsync(keys.Succeeded));
        Assert.True(await db.HashExistsAsync(keys.EndedRecords, (string)done[^1].Id!));

        // The group was made without an epoch: the fetch writes one, and the entries it read carry it.
        Assert.Equal(result.Epoch, (string?)await db.StringGetAsync(keys.Epoch));
        Assert.False(string.IsNullOrEmpty(result.Epoch));
    }

    [Fact]
    public async Task Round_PlainPayloadsAndAcknowledgements_StoreAndRecordAsTheFullFormDoes()
    {
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        var keys = new RedisStreamKeys(DurableTestHost.NewPrefix(), "plain");
        RedisKey[] roundKeys = [keys.Stream, keys.Delayed, keys.Scheduled, keys.Recurring, keys.Ids, keys.Epoch];
        await db.StreamCreateConsumerGroupAsync(keys.Stream, RedisStreamKeys.Group, StreamPosition.Beginning, createStream: true);

        // Three payloads alone (no specs, no keys), then three in the full form with empty specs and keys.
        RedisValue[] Enqueues(bool plain, params string[] payloads)
        {
            var args = new RoundArguments(payloads.Length, plain, 0, 0, 0, recordsKept: true);
            args.SetSettings(RedisStreamKeys.Group, "c", 1_000, keys.NudgeName, 0, 256, 0, 600_000, 10_000, trim: false);
            args.NudgeTag = "c|1";
            foreach (string p in payloads)
            {
                args.AddEnqueue(p, string.Empty, string.Empty);
            }

            return args.Values;
        }

        var plain = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, roundKeys, Enqueues(true, "p0", "p1", "p2")))!);
        var full = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, roundKeys, Enqueues(false, "p3", "p4", "p5")))!);
        Assert.True(plain.EnqueueError is null && full.EnqueueError is null, $"An enqueue part failed: {plain.EnqueueError} / {full.EnqueueError}.");
        Assert.Equal(3, plain.EnqueueAnswers.Length);
        var entries = await db.StreamRangeAsync(keys.Stream);
        Assert.Equal(new string?[] { "p0", "p1", "p2", "p3", "p4", "p5" }, entries.Select(e => (string?)e["p"]).ToArray());
        static string Shape(StreamEntry e) => string.Join(",", e.Values.Where(v => v.Name != "p" && v.Name != "t").Select(v => $"{v.Name}={v.Value}"));
        Assert.All(entries, e => Assert.Equal(Shape(entries[^1]), Shape(e)));
        Assert.All(entries, e => Assert.False(e["t"].IsNullOrEmpty));

        var read = await db.StreamReadGroupAsync(keys.Stream, RedisStreamKeys.Group, "c", StreamPosition.NewMessages, 6);
        Assert.Equal(6, read.Length);

        // Three plain acknowledgements ("1|3": stream id, enqueued at, started at), then the fourth in the full form
        // with the same values, and two that are not plain: a retried job's (its own job id, attempt 2) and one a
        // cancel reached, which holds a key (its release, one triple, goes before the acknowledgements).
        string[] ids = [.. read.Select(e => (string)e.Id!)];
        await db.StringSetAsync(keys.IdempotencyKey("held"), $"{ids[5]}|{ids[5]}");

        // A plain acknowledgement's fields are not a key release: a key named like its stream id and holding its
        // times as job and place stays.
        await db.StringSetAsync(keys.IdempotencyKey(ids[0]), "1700000000000|1700000000100");
        var acks = new RoundArguments(0, false, releases: 1, plainAcks: 3, acks: 3, recordsKept: true);
        acks.SetSettings(RedisStreamKeys.Group, "c", 1_000, keys.NudgeName, 0, 256, 0, 600_000, 10_000, trim: false);
        acks.AddRelease("held", ids[5], ids[5]);
        for (int i = 0; i < 3; i++)
        {
            acks.AddPlainAck(ids[i], 1_700_000_000_000, 1_700_000_000_100);
        }

        acks.AddAck(ids[3], ids[3], 1, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: false);
        acks.AddAck(ids[4], "1690000000000-0", 2, 1_690_000_000_000, 1_700_000_000_100, cancelRequested: false);
        acks.AddAck(ids[5], ids[5], 1, 1_700_000_000_000, 1_700_000_000_100, cancelRequested: true);
        var result = new RoundReply((RedisResult[])(await db.ScriptEvaluateAsync(DurableScripts.Round, roundKeys, acks.Values))!);

        Assert.True(result.AckError is null, $"The acknowledgement part failed: {result.AckError}.");
        Assert.Equal(0, (await db.StreamPendingAsync(keys.Stream, RedisStreamKeys.Group)).PendingMessageCount);
        string Record(string job) => (string)db.HashGet(keys.EndedRecords, job)!;
        string plainRecord = Record(ids[3]);
        Assert.StartsWith("S\u001f\u001f", plainRecord, StringComparison.Ordinal);
        Assert.All(ids[..3], id => Assert.Equal(plainRecord, Record(id)));
        string[] retried = Record("1690000000000-0").Split('\u001f');
        Assert.Equal(new[] { "S", string.Empty, "2", "1690000000000" }, new[] { retried[0], retried[1], retried[3], retried[4] });
        Assert.Equal("1", Record(ids[5]).Split('\u001f')[1]);
        Assert.Equal(6, await db.SortedSetLengthAsync(keys.Succeeded));
        Assert.False(await db.KeyExistsAsync(keys.IdempotencyKey("held")));
        Assert.Equal("1700000000000|1700000000100", (string?)await db.StringGetAsync(keys.IdempotencyKey(ids[0])));
    }

    [Fact]
    public async Task ManyJobsWithLargePayloads_FullRoundsBothWays_EachRunsOnceAndNothingIsLeft()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configure: o => o.MaxConcurrency = 8, configureDurable: d => d.Prefetch = 64);
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();
        string tag = new('x', 4 * 1024);

        await Task.WhenAll(Enumerable.Range(0, 3_000).Select(async n => await host.Producer.EnqueueAsync(new TestJob(n, tag))));

        await log.WaitUntilAsync(() => log.Completed == 3_000, "3,000 jobs", TimeSpan.FromSeconds(60));
        Assert.All(Enumerable.Range(0, 3_000), n => Assert.Equal(1, log.CallsOf(n)));
        await Eventually.HoldsAsync(async () => await db.StreamLengthAsync(DurableTestHost.StreamKey(prefix)) == 0, "the stream to be empty");
        Assert.Equal(0, (await db.StreamPendingAsync(DurableTestHost.StreamKey(prefix), "workers")).PendingMessageCount);
    }

    [Theory]
    [InlineData("dX")]
    [InlineData("a12x")]
    [InlineData("r1|bad")]
    [InlineData("q")]
    public async Task ElementTheScriptCannotRead_InTheMiddleOfABatch_FailsAlone_AndEveryOtherProducerIsToldWhatRedisHas(string badSpec)
    {
        await using var batch = await BatchHost.StartAsync(redis.Server);

        // 200 enqueues queued at once travel in a few rounds; the bad one, 101st, rides in one with others before it.
        var outcomes = await batch.EnqueueAsync(200, n => n == 100 ? badSpec : string.Empty);

        await batch.AssertToldWhatRedisHasAsync(outcomes);
        Assert.IsType<JobRejectedException>(outcomes[100].Error);
        Assert.All(outcomes.Where((_, n) => n != 100), o => Assert.NotNull(o.Id));
    }

    [Fact]
    public async Task RecurringHashOfAnotherType_FailsOnlyTheRecurringOffers_AndEveryOtherProducerIsToldWhatRedisHas()
    {
        await using var batch = await BatchHost.StartAsync(redis.Server);
        await batch.Db.StringSetAsync(batch.Keys.Recurring, "not a hash");
        long fire = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

        var outcomes = await batch.EnqueueAsync(200, n => n % 50 == 25 ? $"r{fire}|* * * * *|job{n}" : string.Empty);

        await batch.AssertToldWhatRedisHasAsync(outcomes);
        Assert.All(outcomes.Where((_, n) => n % 50 == 25), o => Assert.Contains("WRONGTYPE", Assert.IsType<JobRejectedException>(o.Error).Message, StringComparison.Ordinal));
        Assert.All(outcomes.Where((_, n) => n % 50 != 25), o => Assert.NotNull(o.Id));
    }

    [Fact]
    public async Task ScheduledHashOfAnotherType_FailsOnlyTheDelayedEnqueues_NoJobIsStoredWhereItCannotBeListed()
    {
        await using var batch = await BatchHost.StartAsync(redis.Server);
        await batch.Db.StringSetAsync(batch.Keys.Scheduled, "not a hash");

        var outcomes = await batch.EnqueueAsync(200, n => n % 50 == 25 ? "d600000" : string.Empty);

        await batch.AssertToldWhatRedisHasAsync(outcomes);
        Assert.All(outcomes.Where((_, n) => n % 50 == 25), o => Assert.IsType<JobRejectedException>(o.Error));
        Assert.All(outcomes.Where((_, n) => n % 50 != 25), o => Assert.NotNull(o.Id));
        Assert.Equal(0, await batch.Db.SortedSetLengthAsync(batch.Keys.Delayed));
    }

    [Fact]
    public async Task MalformedDueRetry_FailsNeitherTheEnqueuesNorTheAcknowledgementsOfTheRoundsThatPromote()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        await using var redisClient = await DurableTestHost.ConnectAsync(redis.Server);
        var db = redisClient.GetDatabase();

        // A due member no script wrote (by hand, or an older version's): every round that fetches promotes due retries.
        await db.SortedSetAddAsync(DurableTestHost.DelayedKey(prefix), "garbage", 0);
        await using var host = await DurableTestHost.StartAsync(redis.Server, log, prefix, configureDurable: d => d.PollInterval = TimeSpan.FromMilliseconds(50));

        var told = await Task.WhenAll(Enumerable.Range(0, 100).Select(async n =>
        {
            try
            {
                await host.Producer.EnqueueAsync(new TestJob(n));
                return true;
            }
            catch (JobRejectedException)
            {
                return false;
            }
        }));

        // Every job a producer was told is stored runs once; none it was told is not stored runs at all.
        await log.WaitUntilAsync(() => log.Completed >= told.Count(t => t), "the jobs told stored");
        await Eventually.HoldsAsync(async () => (await db.StreamPendingAsync(DurableTestHost.StreamKey(prefix), "workers")).PendingMessageCount == 0, "every acknowledgement to land");
        Assert.All(Enumerable.Range(0, 100), n => Assert.Equal(told[n] ? 1 : 0, log.CallsOf(n)));
        Assert.All(told, Assert.True);
        Assert.Equal(0, await db.SortedSetLengthAsync(DurableTestHost.DelayedKey(prefix)));
        Assert.Equal("garbage", (string?)(await db.StreamRangeAsync(DurableTestHost.DeadKey(prefix))).Single()["p"]);
    }

    private static int Count(List<JobRejectedException> refusals)
    {
        lock (refusals)
        {
            return refusals.Count;
        }
    }

    /// <summary>
    /// A producing (not consuming) host whose store the test drives with specs of its choice, so that every stored job
    /// stays in the stream (or the delayed set) for the test to compare with what each producer was told.
    /// </summary>
    private sealed class BatchHost : IAsyncDisposable
    {
        private readonly ConnectionMultiplexer _admin;

        private BatchHost(DurableTestHost host, ConnectionMultiplexer admin)
        {
            Host = host;
            _admin = admin;
            Store = host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Store;
        }

        public DurableTestHost Host { get; }

        public RedisStreamStore Store { get; }

        public RedisStreamKeys Keys => Store.Keys;

        public IDatabase Db => _admin.GetDatabase();

        public static async Task<BatchHost> StartAsync(RedisServer redis)
        {
            var admin = await DurableTestHost.ConnectAsync(redis);
            var host = await DurableTestHost.StartAsync(redis, new JobLog(), DurableTestHost.NewPrefix(), configureDurable: d => d.Consume = false);
            return new BatchHost(host, admin);
        }

        /// <summary>Queues <paramref name="count"/> enqueues at once (payload <c>{"n":i}</c>), then waits for each one's outcome.</summary>
        public async Task<EnqueueOutcome[]> EnqueueAsync(int count, Func<int, string> spec)
        {
            var pending = Enumerable.Range(0, count).Select(n => Store.EnqueueAsync(Payload(n), spec(n), CancellationToken.None).AsTask()).ToArray();
            var outcomes = new EnqueueOutcome[count];
            for (int n = 0; n < count; n++)
            {
                try
                {
                    outcomes[n] = new EnqueueOutcome(await pending[n].WaitAsync(TimeSpan.FromSeconds(30)), null);
                }
                catch (Exception ex) when (ex is not TimeoutException)
                {
                    outcomes[n] = new EnqueueOutcome(null, ex);
                }
            }

            return outcomes;
        }

        /// <summary>Each producer told its job is stored has it in Redis (stream or delayed set); each told otherwise has not.</summary>
        public async Task AssertToldWhatRedisHasAsync(EnqueueOutcome[] outcomes)
        {
            var stored = (await Db.StreamRangeAsync(Keys.Stream)).Select(e => (string)e["p"]!).ToList();
            stored.AddRange((await Db.SortedSetRangeByRankAsync(Keys.Delayed)).Select(m => ((string)m!)[(((string)m!).IndexOf("|{", StringComparison.Ordinal) + 1)..]));
            var wrong = Enumerable.Range(0, outcomes.Length)
                .Where(n => (outcomes[n].Id is not null) != stored.Contains(Payload(n)))
                .Select(n => $"{n}: told {(outcomes[n].Id is null ? "not stored (" + outcomes[n].Error!.Message + ")" : "stored")}, Redis {(stored.Contains(Payload(n)) ? "has it" : "has not")}")
                .ToList();
            Assert.True(wrong.Count == 0, $"{wrong.Count} producers were told otherwise than Redis has: {string.Join("; ", wrong.Take(5))}");
        }

        public async ValueTask DisposeAsync()
        {
            await Host.DisposeAsync();
            await _admin.DisposeAsync();
        }

        private static string Payload(int n) => $"{{\"n\":{n}}}";
    }

    /// <summary>What one producer was told: the job's id, or the error.</summary>
    private sealed record EnqueueOutcome(string? Id, Exception? Error);

    /// <summary>A host connected as a user whose permissions the test changes while it runs; its own key prefix.</summary>
    private sealed class AclHost : IAsyncDisposable
    {
        private readonly ConnectionMultiplexer _admin;
        private readonly string _user;

        private AclHost(DurableTestHost host, JobLog log, ConnectionMultiplexer admin, string user, string prefix)
        {
            Host = host;
            Log = log;
            _admin = admin;
            _user = user;
            Stream = DurableTestHost.StreamKey(prefix);
        }

        public DurableTestHost Host { get; }

        public JobLog Log { get; }

        public IDatabase Db => _admin.GetDatabase();

        public string Stream { get; }

        public static async Task<AclHost> StartAsync(RedisServer redis, Action<JobLog>? configure = null)
        {
            var admin = await DurableTestHost.ConnectAsync(redis);
            string user = User + Guid.NewGuid().ToString("N")[..6];
            await admin.GetServer(admin.GetEndPoints()[0]).ExecuteAsync("ACL", "SETUSER", user, "on", ">secret", "~*", "&*", "+@all");
            var log = new JobLog();
            configure?.Invoke(log);
            string prefix = DurableTestHost.NewPrefix();
            var host = await DurableTestHost.StartAsync(
                redis,
                log,
                prefix,
                configure: o => o.MaxConcurrency = 8,
                configureDurable: d => d.PollInterval = TimeSpan.FromMilliseconds(100),
                connection: $"{redis.Configuration},user={user},password=secret");
            return new AclHost(host, log, admin, user, prefix);
        }

        /// <summary>Changes what the host's user may run (<c>-xack</c>, <c>+xack</c>, ...); its connection is affected at once.</summary>
        public Task RefuseAsync(string rule) => _admin.GetServer(_admin.GetEndPoints()[0]).ExecuteAsync("ACL", "SETUSER", _user, rule);

        public async ValueTask DisposeAsync()
        {
            await Host.DisposeAsync();
            await _admin.DisposeAsync();
        }
    }
}
