using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Admin;

/// <summary>
/// The admin job search, <c>GET {prefix}/{queue}/jobs</c>: an in-memory queue's and the payload opt-in, and a durable
/// queue's cursor checks, payloads and concurrency limit (against a real redis-server).
/// </summary>
public sealed class JobSearchAdminEndpointsTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
{
    private const string Prefix = "/admin/workqueue";

    [Fact]
    public async Task FindJobs_ByStateTypeAndError_200WithTheMatchingJobs()
    {
        await using var app = await StartAsync();
        var (failed, succeeded) = await RunTwoJobsAsync(app);

        using var dead = await GetJsonAsync(app, $"{Prefix}/default/jobs?state=deadLettered");
        using var byError = await GetJsonAsync(app, $"{Prefix}/default/jobs?error=CARD%20DECLINED");
        using var byType = await GetJsonAsync(app, $"{Prefix}/default/jobs?type=orderhandler&state=succeeded,deadLettered");
        using var none = await GetJsonAsync(app, $"{Prefix}/default/jobs?type=nothing-like-it");

        Assert.Equal([failed], Ids(dead));
        Assert.Equal([failed], Ids(byError));
        Assert.Equal("card declined", byError.RootElement.GetProperty("jobs")[0].GetProperty("lastError").GetString());
        Assert.Equal([succeeded, failed], Ids(byType));
        Assert.Empty(Ids(none));
        Assert.Equal(JsonValueKind.Null, none.RootElement.GetProperty("next").ValueKind);
        Assert.InRange(none.RootElement.GetProperty("scanned").GetInt32(), 2, 4);
    }

    [Fact]
    public async Task FindJobs_MoreThanOnePage_NextCursorListsTheRest()
    {
        await using var app = await StartAsync();
        var queue = app.Services.GetRequiredService<IInMemoryWorkQueue>();
        var ids = new List<string>();
        for (int i = 0; i < 5; i++)
        {
            ids.Add(queue.Schedule(_ => { }, TimeSpan.FromHours(1)));
        }

        using var first = await GetJsonAsync(app, $"{Prefix}/default/jobs?state=scheduled&limit=3");
        string next = first.RootElement.GetProperty("next").GetString()!;
        using var second = await GetJsonAsync(app, $"{Prefix}/default/jobs?state=scheduled&limit=3&cursor={Uri.EscapeDataString(next)}");

        Assert.Equal(ids.AsEnumerable().Reverse().Take(3), Ids(first));
        Assert.Equal(ids.Take(2).Reverse(), Ids(second));
        Assert.Equal(JsonValueKind.Null, second.RootElement.GetProperty("next").ValueKind);
    }

    [Theory]
    [InlineData("state=finished", "state")]
    [InlineData("state=queued,nope", "state")]
    [InlineData("limit=0", "limit")]
    [InlineData("limit=501", "limit")]
    [InlineData("limit=ten", "limit")]
    [InlineData("cursor=zzz", "cursor")]
    [InlineData("cursor=l-5", "cursor")]
    public async Task FindJobs_BadField_400NamingIt(string query, string field)
    {
        await using var app = await StartAsync();

        using var response = await app.Client.GetAsync($"{Prefix}/default/jobs?{query}");

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty(field, out _), $"errors name '{field}'");
    }

    [Fact]
    public async Task FindJobs_UnknownQueue_404()
    {
        await using var app = await StartAsync();

        using var response = await app.Client.GetAsync($"{Prefix}/nowhere/jobs");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
    }

    [Fact]
    public async Task Payload_ByDefault_IsLeftOutOfTheListAndTheJob()
    {
        await using var app = await StartAsync();
        string id = await EnqueueWaitingAsync(app);

        using var page = await GetJsonAsync(app, $"{Prefix}/default/jobs");
        using var job = await GetJsonAsync(app, $"{Prefix}/default/jobs/{id}");

        Assert.False(page.RootElement.GetProperty("payloadsShown").GetBoolean());
        Assert.Equal(JsonValueKind.Null, page.RootElement.GetProperty("jobs")[0].GetProperty("payload").ValueKind);
        Assert.Equal(JsonValueKind.Null, job.RootElement.GetProperty("payload").ValueKind);
        Assert.False(job.RootElement.GetProperty("payloadsShown").GetBoolean());
        Assert.DoesNotContain("Ada", page.RootElement.GetRawText());
    }

    [Fact]
    public async Task Payload_WhenShown_IsTheJsonCutToTheMaximum()
    {
        await using var app = await StartAsync(o => { o.ShowPayloads = true; o.MaxPayloadLength = 20; });
        string id = await EnqueueWaitingAsync(app);

        using var page = await GetJsonAsync(app, $"{Prefix}/default/jobs");
        using var job = await GetJsonAsync(app, $"{Prefix}/default/jobs/{id}");

        Assert.True(page.RootElement.GetProperty("payloadsShown").GetBoolean());
        Assert.Equal("{\"customer\":\"Ada Lov…", page.RootElement.GetProperty("jobs")[0].GetProperty("payload").GetString());
        Assert.Equal("{\"customer\":\"Ada Lov…", job.RootElement.GetProperty("payload").GetString());
    }

    [Fact]
    public async Task Payload_WhoseGetterThrows_IsDescribedAndThePageStillAnswers()
    {
        await using var app = await StartAsync(o => o.ShowPayloads = true);
        var queue = app.Services.GetRequiredService<IInMemoryWorkQueue>();
        var result = await queue.EnqueueAsync(new ThrowingPayloadHandler(), new ThrowingPayload(), new JobOptions { Delay = TimeSpan.FromHours(1) });

        using var page = await GetJsonAsync(app, $"{Prefix}/default/jobs");

        var job = page.RootElement.GetProperty("jobs").EnumerateArray().Single(j => j.GetProperty("id").GetString() == result.JobId);
        Assert.Contains("could not be written", job.GetProperty("payload").GetString());
    }

    [Theory]
    [InlineData(0)]
    [InlineData(WorkQueueAdminOptions.MaxPayloadLengthLimit + 1)]
    public void MapWorkQueueAdmin_MaxPayloadLengthOutOfRange_ThrowsNamingIt(int length)
    {
        var app = TestApp.Build(b => b.Services.AddWorkQueue(), _ => { });

        var ex = Assert.Throws<ArgumentException>(() => app.MapWorkQueueAdmin(Prefix, o => o.MaxPayloadLength = length));

        Assert.Contains($"WorkQueueAdminOptions.MaxPayloadLength must be from 1 to {WorkQueueAdminOptions.MaxPayloadLengthLimit}; it was {length}", ex.Message);
    }

    [Theory]
    [InlineData("L:e:0")]
    [InlineData("Z:e:0")]
    [InlineData("Z:0:99999999999999999")]
    [InlineData("L:18446744073709551616-0")]
    [InlineData("D:-1:1-0")]
    // Ids with leading zeros: Redis would read 01-0 as 1-0, but no page writes one (ids as Redis writes them, StreamIdGrammar).
    [InlineData("Z:0:01-0")]
    [InlineData("S:5:s1-00")]
    [InlineData("L:01-0")]
    public async Task FindJobs_DurableQueueMalformedCursor_400NamingCursorWithoutRedisText(string cursor)
    {
        await using var app = await StartDurableAsync();

        using var response = await app.Client.GetAsync($"{Prefix}/{DurableTestHost.Queue}/jobs?cursor={Uri.EscapeDataString(cursor)}");

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        string body = await response.Content.ReadAsStringAsync();
        using var problem = JsonDocument.Parse(body);
        Assert.True(problem.RootElement.GetProperty("errors").TryGetProperty("cursor", out _), body);
        Assert.DoesNotContain("ERR", body, StringComparison.Ordinal);
    }

    [Fact]
    public async Task FindJobs_DurableQueuedJobsWithLargePayloads_ListedWithoutTheirPayloads()
    {
        await using var app = await StartDurableAsync();
        Assert.True(app.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(DurableTestHost.Queue, out var control));
        control.Pause();
        var producer = new TestJobQueue(app.Services.GetRequiredKeyedService<IWorkQueue>(DurableTestHost.Queue));
        string tag = new('T', 200_000);
        var ids = new List<string>();
        for (int n = 0; n < 3; n++)
        {
            ids.Add(await producer.EnqueueAsync(new TestJob(n, tag)));
        }

        using var page = await GetJsonAsync(app, $"{Prefix}/{DurableTestHost.Queue}/jobs?state=queued");

        Assert.Equal(ids.AsEnumerable().Reverse(), page.RootElement.GetProperty("jobs").EnumerateArray().Select(j => j.GetProperty("id").GetString()!));
        Assert.False(page.RootElement.GetProperty("payloadsShown").GetBoolean());
        Assert.DoesNotContain("TTTT", page.RootElement.GetRawText(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task FindJobs_DurableQueueTwoSearchesRunning_503WithRetryAfterUntilOneEnds()
    {
        await using var app = await StartDurableAsync();
        var jobs = app.Services.GetRequiredService<DurableQueueRegistry>().Queues.Single().Jobs;
        Assert.True(jobs.TryEnterSearch());
        Assert.True(jobs.TryEnterSearch());
        try
        {
            using var busy = await app.Client.GetAsync($"{Prefix}/{DurableTestHost.Queue}/jobs");

            Assert.Equal(HttpStatusCode.ServiceUnavailable, busy.StatusCode);
            Assert.Equal("application/problem+json", busy.Content.Headers.ContentType?.MediaType);
            Assert.Equal(TimeSpan.FromSeconds(1), busy.Headers.RetryAfter?.Delta);
        }
        finally
        {
            jobs.ExitSearch();
        }

        using var page = await GetJsonAsync(app, $"{Prefix}/{DurableTestHost.Queue}/jobs");
        jobs.ExitSearch();
        Assert.Empty(page.RootElement.GetProperty("jobs").EnumerateArray());
    }

    private Task<TestApp> StartDurableAsync() =>
        TestApp.StartAsync(
            b =>
            {
                b.Services.AddSingleton(new JobLog());
                b.Services.AddSingleton(new InstanceName("a"));
                b.Services.AddRedisWarmup(o => o.Configuration = redis.Server.Configuration);
                b.Services.AddWorkQueue().AddDurableQueue<TestJobHandler, TestJob>(
                    DurableTestHost.Queue,
                    configureDurable: d =>
                    {
                        d.KeyPrefix = DurableTestHost.NewPrefix();
                        d.PollInterval = TimeSpan.FromMilliseconds(200);
                    });
            },
            web => web.MapWorkQueueAdmin(Prefix));

    private static Task<TestApp> StartAsync(Action<WorkQueueAdminOptions>? configure = null) =>
        TestApp.StartAsync(
            b => b.Services.AddWorkQueue(o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.Retry.MaxAttempts = 1; }),
            app => app.MapWorkQueueAdmin(Prefix, configure));

    private static async Task<(string Failed, string Succeeded)> RunTwoJobsAsync(TestApp app)
    {
        var queue = app.Services.GetRequiredService<IInMemoryWorkQueue>();
        var failed = await queue.EnqueueAsync(new OrderHandler(), new Order("decline"), new JobOptions());
        var succeeded = await queue.EnqueueAsync(new OrderHandler(), new Order("Ada"), new JobOptions());
        await Wait.UntilAsync(async () => (await queue.GetJobAsync(succeeded.JobId))?.State == JobState.Succeeded && (await queue.GetJobAsync(failed.JobId))?.State == JobState.DeadLettered, "both jobs to end");
        return (failed.JobId, succeeded.JobId);
    }

    private static async Task<string> EnqueueWaitingAsync(TestApp app)
    {
        var queue = app.Services.GetRequiredService<IInMemoryWorkQueue>();
        var result = await queue.EnqueueAsync(new OrderHandler(), new Order("Ada Lovelace"), new JobOptions { Delay = TimeSpan.FromHours(1) });
        return result.JobId;
    }

    private static async Task<JsonDocument> GetJsonAsync(TestApp app, string path)
    {
        using var response = await app.Client.GetAsync(path);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return JsonDocument.Parse(await response.Content.ReadAsStringAsync());
    }

    private static IEnumerable<string?> Ids(JsonDocument page) =>
        page.RootElement.GetProperty("jobs").EnumerateArray().Select(j => j.GetProperty("id").GetString()).ToArray();

    private sealed record Order(string Customer);

    private sealed class ThrowingPayload
    {
        public string Secret => throw new InvalidOperationException("no");

        public override string ToString() => throw new InvalidOperationException("no");
    }

    private sealed class ThrowingPayloadHandler : IJobHandler<ThrowingPayload>
    {
        public ValueTask ExecuteAsync(ThrowingPayload payload, CancellationToken cancellationToken) => ValueTask.CompletedTask;
    }

    private sealed class OrderHandler : IJobHandler<Order>
    {
        public ValueTask ExecuteAsync(Order payload, CancellationToken cancellationToken) =>
            payload.Customer == "decline" ? throw new InvalidOperationException("card declined") : ValueTask.CompletedTask;
    }
}
