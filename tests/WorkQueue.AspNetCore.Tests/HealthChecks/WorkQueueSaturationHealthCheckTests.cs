using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.HealthChecks;

public sealed class WorkQueueSaturationHealthCheckTests
{
    [Fact]
    public async Task Readiness_QueueFilledPastThreshold_UnhealthyUntilItDrains()
    {
        await using var app = await TestApp.StartAsync(
            b =>
            {
                b.Services.AddWorkQueue(o => o.Capacity = 10);
                b.Services.AddHealthChecks().AddWorkQueueSaturation(threshold: 0.8);
            },
            web =>
            {
                web.MapHealthChecks("/health/ready", new HealthCheckOptions { Predicate = c => c.Tags.Contains(WorkQueueHealthCheckTags.Ready) });
                web.MapHealthChecks("/health/live", new HealthCheckOptions { Predicate = _ => false });
            });
        var queue = app.Services.GetRequiredService<IInMemoryWorkQueue>();
        var control = app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == queue.Name);
        control.Pause();
        for (int i = 0; i < 8; i++)
        {
            Assert.True(queue.TryEnqueue(_ => { }));
        }

        using (var saturated = await app.Client.GetAsync("/health/ready"))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, saturated.StatusCode);
        }

        using (var live = await app.Client.GetAsync("/health/live"))
        {
            Assert.Equal(HttpStatusCode.OK, live.StatusCode);
        }

        control.Resume();
        await Wait.UntilAsync(() => control.GetSnapshot().Depth == 0, "the queue drains");
        using var ready = await app.Client.GetAsync("/health/ready");
        Assert.Equal(HttpStatusCode.OK, ready.StatusCode);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-0.5)]
    [InlineData(1.5)]
    public void AddWorkQueueSaturation_ThresholdOutOfRange_ThrowsNamingThreshold(double threshold)
    {
        var builder = new ServiceCollection().AddHealthChecks();

        var ex = Assert.Throws<ArgumentOutOfRangeException>(() => builder.AddWorkQueueSaturation(threshold));

        Assert.Equal("threshold", ex.ParamName);
    }
}
