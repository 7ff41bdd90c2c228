using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Durable;

/// <summary>
/// The durable job search (<see cref="IWorkQueue.FindJobsAsync"/>, <c>RedisJobBrowser.Search.cs</c>):
/// its cursor is a seek, checked before Redis sees it, and searches of one queue run two at a time per process.
/// </summary>
public sealed class DurableSearchTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    [Fact]
    public async Task FindJobsAsync_EarlierJobsWithTheSameDueTimeCancelledBetweenPages_NextPageIsExactlyTheNextJobs()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix());
        var runAt = DateTimeOffset.UtcNow.AddHours(1);
        for (int n = 0; n < 9; n++)
        {
            await host.Producer.ScheduleAsync(new TestJob(n), runAt);
        }

        var all = (await host.Producer.FindJobsAsync(new JobQuery { States = [JobState.Scheduled] })).Jobs.Select(j => j.Id).ToArray();
        Assert.Equal(9, all.Length);

        var first = await host.Producer.FindJobsAsync(new JobQuery { States = [JobState.Scheduled], Limit = 3 });
        Assert.Equal(all[..3], first.Jobs.Select(j => j.Id));

        // Two jobs of the first page leave the set (cancelled; they could as well have come due): the cursor is a
        // position (due time and job), not a count of members passed, so the next page neither skips nor repeats.
        Assert.Equal(JobCancelOutcome.Canceled, (await host.Producer.CancelAsync(all[0])).Outcome);
        Assert.Equal(JobCancelOutcome.Canceled, (await host.Producer.CancelAsync(all[2])).Outcome);
        var second = await host.Producer.FindJobsAsync(new JobQuery { States = [JobState.Scheduled], Limit = 3, Cursor = first.Next });
        Assert.Equal(all[3..6], second.Jobs.Select(j => j.Id));
        var third = await host.Producer.FindJobsAsync(new JobQuery { States = [JobState.Scheduled], Limit = 3, Cursor = second.Next });
        Assert.Equal(all[6..], third.Jobs.Select(j => j.Id));
    }

    [Theory]
    [InlineData("L:e:0")]
    [InlineData("Z:e:0")]
    [InlineData("Z:0:99999999999999999")]
    [InlineData("L:18446744073709551616-0")]
    [InlineData("S:1e3:1-0")]
    [InlineData("Z:9007199254740993:s1-0")]
    // Ids with leading zeros: Redis would read 01-0 as 1-0, but no page writes one (ids as Redis writes them, StreamIdGrammar).
    [InlineData("Z:0:01-0")]
    [InlineData("S:5:s1-00")]
    [InlineData("L:01-0")]
    public async Task FindJobsAsync_MalformedCursor_ArgumentExceptionNamingTheQueryBeforeRedisSeesIt(string cursor)
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix());

        var ex = await Assert.ThrowsAsync<ArgumentException>(async () => await host.Producer.FindJobsAsync(new JobQuery { Cursor = cursor }));

        Assert.Equal("query", ex.ParamName);
        Assert.Contains("Cursor", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task FindJobsAsync_TwoSearchesOfTheQueueRunning_AThirdWaitsForOneToEnd()
    {
        await using var host = await DurableTestHost.StartAsync(redis.Server, new JobLog(), DurableTestHost.NewPrefix());
        var jobs = host.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Jobs;
        Assert.True(jobs.TryEnterSearch());
        Assert.True(jobs.TryEnterSearch());
        Assert.False(jobs.TryEnterSearch());

        var third = host.Producer.FindJobsAsync(new JobQuery()).AsTask();
        var first = await Task.WhenAny(third, Task.Delay(TimeSpan.FromMilliseconds(500)));
        Assert.NotSame(third, first);

        jobs.ExitSearch();
        var page = await third.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Empty(page.Jobs);

        // The third search gave its turn back: with one still held here, exactly one is free.
        Assert.True(jobs.TryEnterSearch());
        Assert.False(jobs.TryEnterSearch());
        jobs.ExitSearch();
        jobs.ExitSearch();
    }
}
