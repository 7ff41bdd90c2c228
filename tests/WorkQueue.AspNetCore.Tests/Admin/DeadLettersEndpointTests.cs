using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Admin;

public sealed class DeadLettersEndpointTests
{
    [Fact]
    public async Task GetDeadLetters_FailedJob_ListsIdNameAttemptErrorAndTimeWithoutPayload()
    {
        await using var app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue(o => o.Retry.MaxAttempts = 1),
            web => web.MapWorkQueueAdmin());
        var queue = app.Services.GetRequiredService<IInMemoryWorkQueue>();
        var control = app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == queue.Name);
        Assert.True(queue.TryEnqueue(new FailingHandler(), new Secret("card-4111")));
        await Wait.UntilAsync(() => control.GetSnapshot().Totals.DeadLettered == 1, "the job is dead-lettered");

        using var response = await app.Client.GetAsync("/admin/workqueue/default/dead-letters");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        string body = await response.Content.ReadAsStringAsync();
        using var json = JsonDocument.Parse(body);
        var item = Assert.Single(json.RootElement.EnumerateArray().ToArray());
        Assert.Equal(control.GetDeadLetters()[0].Job.Id, item.GetProperty("id").GetString());
        Assert.Contains(nameof(FailingHandler), item.GetProperty("name").GetString());
        Assert.Equal(1, item.GetProperty("attempt").GetInt32());
        Assert.Equal(typeof(InvalidOperationException).FullName, item.GetProperty("error").GetProperty("type").GetString());
        Assert.Equal("the provider said no", item.GetProperty("error").GetProperty("message").GetString());
        Assert.True(item.GetProperty("deadLetteredAt").GetDateTimeOffset() > DateTimeOffset.UtcNow.AddMinutes(-5));
        Assert.DoesNotContain("card-4111", body);
    }

    [Fact]
    public async Task GetDeadLetters_UnknownQueue_Returns404()
    {
        await using var app = await TestApp.StartAsync(b => b.Services.AddWorkQueue(), web => web.MapWorkQueueAdmin());

        using var response = await app.Client.GetAsync("/admin/workqueue/nope/dead-letters");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Contains("'nope'", await response.Content.ReadAsStringAsync());
    }

    private sealed record Secret(string Value);

    private sealed class FailingHandler : IJobHandler<Secret>
    {
        public ValueTask ExecuteAsync(Secret payload, CancellationToken cancellationToken) =>
            throw new InvalidOperationException("the provider said no");
    }
}
