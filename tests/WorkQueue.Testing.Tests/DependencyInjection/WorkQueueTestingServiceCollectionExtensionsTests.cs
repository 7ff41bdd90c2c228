using Microsoft.Extensions.DependencyInjection;
using WorkQueue.Testing.Tests.TestSupport;

namespace WorkQueue.Testing.Tests.DependencyInjection;

public sealed class WorkQueueTestingServiceCollectionExtensionsTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task AddWorkQueueTesting_BeforeOrAfterAddWorkQueue_EveryWayToAQueueGivesTheOneRecordingProducer(bool testingFirst)
    {
        var services = new ServiceCollection();
        services.AddSingleton<JobLog>();
        if (testingFirst)
        {
            services.AddWorkQueueTesting(o => o.Mode = WorkQueueTestMode.Record);
        }

        services.AddWorkQueue().AddQueue("second");
        if (!testingFirst)
        {
            services.AddWorkQueueTesting(o => o.Mode = WorkQueueTestMode.Record);
        }

        await using var provider = services.BuildServiceProvider();
        var queues = provider.GetRequiredService<IWorkQueueProvider>();

        Assert.Same(provider.GetRequiredService<IWorkQueue>(), provider.GetRequiredService<IInMemoryWorkQueue>());
        Assert.Same(provider.GetRequiredService<IWorkQueue>(), queues.GetQueue("DEFAULT"));
        Assert.Same(provider.GetRequiredKeyedService<IWorkQueue>("second"), queues.GetInMemoryQueue("second"));
        Assert.Equal(2, queues.Queues.Count);

        await provider.GetRequiredKeyedService<IWorkQueue>("Second").EnqueueAsync<LogHandler, string>("x");
        Assert.Equal("second", Assert.Single(provider.GetRequiredService<IWorkQueueTestHarness>().Enqueued).QueueName);
    }

    [Fact]
    public void AddWorkQueueTesting_IdleTimeoutNotPositive_Throws()
    {
        var services = new ServiceCollection();

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => services.AddWorkQueueTesting(o => o.IdleTimeout = TimeSpan.Zero));

        Assert.Contains("IdleTimeout", error.Message);
    }

    [Fact]
    public async Task GetQueue_UnknownQueue_TheEnginesOwnError()
    {
        await using var app = TestApp.Start();

        var error = Assert.Throws<ArgumentException>(() => app.Services.GetRequiredService<IWorkQueueProvider>().GetQueue("nope"));

        Assert.Contains("No WorkQueue queue is named 'nope'", error.Message);
    }
}
