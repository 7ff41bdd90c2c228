using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;
using WorkQueue.Tests.Support;

namespace WorkQueue.AspNetCore.Tests.Admin;

/// <summary>The admin routes for one job of an in-memory queue: <c>GET</c> and <c>DELETE {prefix}/{queue}/jobs/{id}</c>.</summary>
public sealed class JobAdminEndpointsTests : IAsyncLifetime
{
    private const string Prefix = "/admin/workqueue";
    private TestApp _app = null!;

    private HttpClient Client => _app.Client;

    private IInMemoryWorkQueue Queue => _app.Services.GetRequiredService<IInMemoryWorkQueue>();

    private IWorkQueueControl Control => _app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single();

    public async ValueTask InitializeAsync() =>
        _app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue(o => { o.MinWorkers = 1; o.MaxWorkers = 1; }),
            app => app.MapWorkQueueAdmin(Prefix));

    public async ValueTask DisposeAsync()
    {
        Control.Resume();
        await _app.DisposeAsync();
    }

    [Fact]
    public async Task GetJob_ScheduledJob_200WithItsState()
    {
        string id = Queue.Schedule(_ => { }, TimeSpan.FromHours(1));

        using var response = await Client.GetAsync($"{Prefix}/default/jobs/{id}");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        var root = json.RootElement;
        Assert.Equal(id, root.GetProperty("id").GetString());
        Assert.Equal("default", root.GetProperty("queue").GetString());
        Assert.Equal("scheduled", root.GetProperty("state").GetString());
        Assert.True(root.GetProperty("runAt").GetDateTimeOffset() > DateTimeOffset.UtcNow.AddMinutes(59));
        Assert.Equal(JsonValueKind.Null, root.GetProperty("startedAt").ValueKind);
        Assert.False(root.GetProperty("cancelRequested").GetBoolean());
    }

    [Fact]
    public async Task GetJob_Unknown_404ProblemAndUnknownQueue_404()
    {
        using var unknownJob = await Client.GetAsync($"{Prefix}/default/jobs/424242");
        using var unknownQueue = await Client.GetAsync($"{Prefix}/nowhere/jobs/1");

        Assert.Equal(HttpStatusCode.NotFound, unknownJob.StatusCode);
        Assert.Equal("application/problem+json", unknownJob.Content.Headers.ContentType?.MediaType);
        Assert.Contains("FinishedJobRetention", await unknownJob.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.NotFound, unknownQueue.StatusCode);
        Assert.Contains("nowhere", await unknownQueue.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("GET", "abc")]
    [InlineData("GET", "-1")]
    [InlineData("DELETE", "1.5")]
    [InlineData("DELETE", "99999999999999999999")]
    public async Task Job_NonNumericId_400NamingTheField(string method, string id)
    {
        using var response = await SendAsync(new HttpMethod(method), $"{Prefix}/default/jobs/{id}");

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.True(json.RootElement.GetProperty("errors").TryGetProperty("id", out _));
    }

    [Fact]
    public async Task CancelJob_QueuedJob_200CanceledThen409AlreadyEnded()
    {
        Control.Pause();
        int runs = 0;
        var result = await Queue.EnqueueAsync(new CountingHandler(() => Interlocked.Increment(ref runs)), "a", new JobOptions());

        using var cancelled = await SendAsync(HttpMethod.Delete, $"{Prefix}/default/jobs/{result.JobId}");
        Assert.Equal(HttpStatusCode.OK, cancelled.StatusCode);
        using (var json = JsonDocument.Parse(await cancelled.Content.ReadAsStringAsync()))
        {
            Assert.Equal("canceled", json.RootElement.GetProperty("outcome").GetString());
            Assert.Equal("canceled", json.RootElement.GetProperty("job").GetProperty("state").GetString());
        }

        using var again = await SendAsync(HttpMethod.Delete, $"{Prefix}/default/jobs/{result.JobId}");
        Assert.Equal(HttpStatusCode.Conflict, again.StatusCode);
        using (var problem = JsonDocument.Parse(await again.Content.ReadAsStringAsync()))
        {
            Assert.Equal("canceled", problem.RootElement.GetProperty("job").GetProperty("state").GetString());
        }

        Control.Resume();
        await Wait.UntilAsync(() => Control.GetSnapshot().Depth == 0, "the cancelled item to leave the channel");
        Assert.Equal((0, 1L), (runs, Control.GetSnapshot().Totals.Canceled));
    }

    [Fact]
    public async Task CancelJob_RunningJob_200CancelRequestedAndTheJobEndsCanceled()
    {
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var result = await Queue.EnqueueAsync(new WaitingHandler(started), "a", new JobOptions());
        await Wait.ForAsync(started.Task, "the job to start");

        using var response = await SendAsync(HttpMethod.Delete, $"{Prefix}/default/jobs/{result.JobId}");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal("cancelRequested", json.RootElement.GetProperty("outcome").GetString());
        Assert.True(json.RootElement.GetProperty("job").GetProperty("cancelRequested").GetBoolean());
        await Wait.UntilAsync(async () => (await Queue.GetJobAsync(result.JobId))?.State == JobState.Canceled, "the job to honour the cancel");
    }

    [Fact]
    public async Task CancelJob_UnknownJob_404_AndWithoutJsonContentType_415()
    {
        string id = Queue.Schedule(_ => { }, TimeSpan.FromHours(1));

        using var unknown = await SendAsync(HttpMethod.Delete, $"{Prefix}/default/jobs/424242");
        using var notJson = await Client.DeleteAsync($"{Prefix}/default/jobs/{id}");

        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        Assert.Equal(HttpStatusCode.UnsupportedMediaType, notJson.StatusCode);
        Assert.Equal(JobState.Scheduled, (await Queue.GetJobAsync(id))!.State);
    }

    private Task<HttpResponseMessage> SendAsync(HttpMethod method, string path) =>
        Client.SendAsync(new HttpRequestMessage(method, path) { Content = method == HttpMethod.Get ? null : JsonContent.Create(new { }) });

    private sealed class CountingHandler(Action run) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            run();
            return ValueTask.CompletedTask;
        }
    }

    private sealed class WaitingHandler(TaskCompletionSource started) : IJobHandler<string>
    {
        public async ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            started.TrySetResult();
            await Task.Delay(Timeout.Infinite, cancellationToken);
        }
    }
}
