using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

/// <summary>The admin routes for scheduled jobs (list, cancel) and recurring jobs (list, trigger, pause, resume, remove).</summary>
public sealed class ScheduledAdminEndpointsTests : IAsyncLifetime
{
    private const string Prefix = "/admin/workqueue";
    private TestApp _app = null!;

    private HttpClient Client => _app.Client;

    private IInMemoryWorkQueue Queue => _app.Services.GetRequiredService<IInMemoryWorkQueue>();

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b => b.Services.AddSingleton<Occurrences>().AddWorkQueue().AddRecurringJob<NightlyHandler>("close-day", "0 2 * * *", o => o.TimeZone = "Europe/Paris"),
            app => app.MapWorkQueueAdmin(Prefix));

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();

    [Fact]
    public async Task GetScheduled_ListsWaitingJobsSoonestFirst_AndTheQueueStateCountsThem()
    {
        string later = Queue.Schedule(_ => { }, TimeSpan.FromHours(2));
        string sooner = Queue.Schedule(_ => { }, TimeSpan.FromHours(1));

        using var list = await GetJsonAsync($"{Prefix}/default/scheduled");
        Assert.Equal([sooner.ToString(), later.ToString()], list.RootElement.EnumerateArray().Select(j => j.GetProperty("id").GetString()));
        Assert.True(list.RootElement[0].GetProperty("dueAt").GetDateTimeOffset() < list.RootElement[1].GetProperty("dueAt").GetDateTimeOffset());
        using var one = await GetJsonAsync($"{Prefix}/default/scheduled?limit=1");
        Assert.Equal(1, one.RootElement.GetArrayLength());
        using var state = await GetJsonAsync($"{Prefix}/default");
        Assert.Equal(2, state.RootElement.GetProperty("scheduled").GetInt32());
    }

    [Theory]
    [InlineData("0")]
    [InlineData("1001")]
    [InlineData("ten")]
    public async Task GetScheduled_BadLimit_Answers400NamingIt(string limit)
    {
        using var response = await Client.GetAsync($"{Prefix}/default/scheduled?limit={limit}");
        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty("limit", out _));
    }

    [Fact]
    public async Task CancelScheduled_WaitingJob_204ThenUnknown404AndMalformed400()
    {
        int runs = 0;
        string id = Queue.Schedule(_ => Interlocked.Increment(ref runs), TimeSpan.FromHours(1));

        using var cancelled = await SendAsync(HttpMethod.Delete, $"{Prefix}/default/scheduled/{id}");
        Assert.Equal(HttpStatusCode.NoContent, cancelled.StatusCode);
        using var again = await SendAsync(HttpMethod.Delete, $"{Prefix}/default/scheduled/{id}");
        Assert.Equal(HttpStatusCode.NotFound, again.StatusCode);
        using var garbage = await SendAsync(HttpMethod.Delete, $"{Prefix}/default/scheduled/not-an-id");
        Assert.Equal(HttpStatusCode.BadRequest, garbage.StatusCode);
        using var unknownQueue = await SendAsync(HttpMethod.Delete, $"{Prefix}/nowhere/scheduled/{id}");
        Assert.Equal(HttpStatusCode.NotFound, unknownQueue.StatusCode);

        var totals = _app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single().GetSnapshot().Totals;
        Assert.Equal((1L, 0), (totals.Canceled, runs));
    }

    [Fact]
    public async Task CancelScheduled_WithoutJsonContentType_415AndTheJobStays()
    {
        string id = Queue.Schedule(_ => { }, TimeSpan.FromHours(1));
        using var response = await Client.DeleteAsync($"{Prefix}/default/scheduled/{id}");
        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        Assert.True(Queue.CancelScheduled(id));
    }

    [Fact]
    public async Task Recurring_ListPauseResumeTriggerRemove()
    {
        using (var list = await GetJsonAsync($"{Prefix}/recurring"))
        {
            var job = Assert.Single(list.RootElement.EnumerateArray());
            Assert.Equal(("close-day", "0 2 * * *", "Europe/Paris", false), (job.GetProperty("id").GetString(), job.GetProperty("schedule").GetString(), job.GetProperty("timeZone").GetString(), job.GetProperty("paused").GetBoolean()));
            Assert.Equal(JsonValueKind.String, job.GetProperty("nextRunAt").ValueKind);
        }

        using (var paused = await SendAsync(HttpMethod.Post, $"{Prefix}/recurring/close-day/pause"))
        {
            Assert.Equal(HttpStatusCode.OK, paused.StatusCode);
            using var json = JsonDocument.Parse(await paused.Content.ReadAsStringAsync());
            Assert.True(json.RootElement.GetProperty("paused").GetBoolean());
            Assert.Equal(JsonValueKind.Null, json.RootElement.GetProperty("nextRunAt").ValueKind);
        }

        using (var triggered = await SendAsync(HttpMethod.Post, $"{Prefix}/recurring/CLOSE-DAY/trigger"))
        {
            Assert.Equal(HttpStatusCode.OK, triggered.StatusCode);
            var occurrences = _app.Services.GetRequiredService<Occurrences>();
            await Wait.UntilAsync(() => occurrences.Count == 1, "the triggered occurrence to run");
        }

        using (var resumed = await SendAsync(HttpMethod.Post, $"{Prefix}/recurring/close-day/resume"))
        {
            using var json = JsonDocument.Parse(await resumed.Content.ReadAsStringAsync());
            Assert.False(json.RootElement.GetProperty("paused").GetBoolean());
            var lastRun = json.RootElement.GetProperty("lastRun");
            Assert.Equal(JsonValueKind.String, lastRun.GetProperty("jobId").ValueKind);
            await Wait.UntilAsync(() => _app.Services.GetRequiredService<IRecurringJobs>().Find("close-day")!.LastRun!.Outcome == RecurringRunOutcome.Succeeded, "the triggered run's outcome");
        }

        using var removed = await SendAsync(HttpMethod.Delete, $"{Prefix}/recurring/close-day");
        Assert.Equal(HttpStatusCode.NoContent, removed.StatusCode);
        using var gone = await SendAsync(HttpMethod.Post, $"{Prefix}/recurring/close-day/trigger");
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
        using var empty = await GetJsonAsync($"{Prefix}/recurring");
        Assert.Equal(0, empty.RootElement.GetArrayLength());
    }

    [Fact]
    public async Task GetThreadPool_ReportsTheCanarysFigures()
    {
        await Wait.UntilAsync(() => _app.Services.GetRequiredService<IThreadPoolCanary>().GetHealth().MaxLag > TimeSpan.Zero, "the canary to run once");
        using var json = await GetJsonAsync($"{Prefix}/threadpool");
        var root = json.RootElement;
        Assert.True(root.GetProperty("enabled").GetBoolean());
        Assert.False(root.GetProperty("starving").GetBoolean());
        Assert.True(root.GetProperty("maxLagMs").GetDouble() > 0);
        Assert.True(root.GetProperty("threads").GetInt32() > 0);
    }

    private async Task<JsonDocument> GetJsonAsync(string path)
    {
        using var response = await Client.GetAsync(path);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return JsonDocument.Parse(await response.Content.ReadAsStringAsync());
    }

    private Task<HttpResponseMessage> SendAsync(HttpMethod method, string path) =>
        Client.SendAsync(new HttpRequestMessage(method, path) { Content = JsonContent.Create(new { }) });

    private sealed class Occurrences
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public void Add() => Interlocked.Increment(ref _count);
    }

    private sealed class NightlyHandler(Occurrences occurrences) : IJobHandler<RecurringOccurrence>
    {
        public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
        {
            occurrences.Add();
            return ValueTask.CompletedTask;
        }
    }
}
