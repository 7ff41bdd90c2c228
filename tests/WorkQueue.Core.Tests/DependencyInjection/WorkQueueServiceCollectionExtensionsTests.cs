using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.DependencyInjection;

public sealed class WorkQueueServiceCollectionExtensionsTests
{
    [Fact]
    public void AddWorkQueue_CalledTwice_RegistersEachServiceOnce()
    {
        var services = new ServiceCollection();

        services.AddWorkQueue();
        services.AddWorkQueue();

        Assert.Single(services, d => d.ServiceType == typeof(IWorkQueueProvider));
        Assert.Single(services, d => d.ServiceType == typeof(IWorkQueue) && !d.IsKeyedService);
        Assert.Single(services, d => d.ServiceType == typeof(IInMemoryWorkQueue) && !d.IsKeyedService);
        Assert.Single(services, d => d.ServiceType == typeof(IInMemoryWorkQueue) && d.IsKeyedService && d.ServiceKey == KeyedService.AnyKey);
        Assert.Single(services, d => d.ServiceType == typeof(IHostedService));
        Assert.Equal(3, services.Count(d => d.ServiceType == typeof(IValidateOptions<WorkQueueOptions>)));
        Assert.All(
            services.Where(d => d.ServiceType == typeof(IWorkQueueProvider) || d.ServiceType == typeof(IWorkQueue) || d.ServiceType == typeof(IInMemoryWorkQueue)),
            d => Assert.Equal(ServiceLifetime.Singleton, d.Lifetime));
    }

    [Fact]
    public async Task AddQueue_NamedQueues_AreSeparateBulkheads()
    {
        await using var harness = QueueHarness.Start(
            o => { o.MinWorkers = 1; o.MaxWorkers = 1; },
            queues => queues.AddQueue("io", o => { o.MinWorkers = 1; o.MaxWorkers = 1; o.AutoScale.Enabled = false; }));
        using var gate = new Gate();
        var io = harness.Services.GetRequiredKeyedService<IInMemoryWorkQueue>("io");
        Assert.Same(io, harness.Provider.GetQueue("IO"));
        for (int i = 0; i < 5; i++)
        {
            Assert.True(io.TryEnqueue(gate.Block));
        }

        await Wait.ForAsync(gate.EnteredAsync(1), "the io queue to be jammed");
        var fastDone = new CountdownSignal(50);
        for (int i = 0; i < 50; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(_ => fastDone.Signal()));
        }

        await Wait.ForAsync(fastDone.Task, "the default queue's jobs while io is jammed");
        Assert.Equal(4, harness.Provider.Find("io").Control.GetSnapshot().Depth);
        Assert.Equal(2, harness.Provider.Queues.Count);
        gate.Open();
    }

    [Fact]
    public async Task GetQueue_UnknownName_ThrowsArgumentExceptionNamingIt()
    {
        await using var harness = QueueHarness.Start();

        var ex = Assert.Throws<ArgumentException>(() => harness.Provider.GetQueue("nope"));

        Assert.Equal("name", ex.ParamName);
        Assert.Contains("'nope'", ex.Message);
        Assert.False(harness.Provider.TryGetControl("nope", out _));
    }

    [Theory]
    [InlineData(5, 2, "MinWorkers (5) must be less than or equal to MaxWorkers (2)")]
    [InlineData(0, 2, "MinWorkers")]
    public void Options_InvalidWorkerLimits_FailWithMessageNamingSetting(int min, int max, string expected)
    {
        var services = new ServiceCollection().AddLogging();
        services.AddWorkQueue(o => { o.MinWorkers = min; o.MaxWorkers = max; });
        using var provider = services.BuildServiceProvider();

        var ex = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IWorkQueue>());

        Assert.Contains(expected, ex.Message);
    }

    [Theory]
    [InlineData("JobTimeout")]
    [InlineData("EnqueueTimeout")]
    public void Options_TimeoutBeyondTheTimerLimit_FailsNamingTheSettingAndValue(string setting)
    {
        var services = new ServiceCollection().AddLogging();
        var fiftyDays = TimeSpan.FromDays(50);
        services.AddWorkQueue(o =>
        {
            if (setting == "JobTimeout")
            {
                o.JobTimeout = fiftyDays;
            }
            else
            {
                o.EnqueueTimeout = fiftyDays;
            }
        });
        using var provider = services.BuildServiceProvider();

        var ex = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IWorkQueueProvider>());

        Assert.Contains($"{setting} (50.00:00:00)", ex.Message);
    }

    [Theory]
    [InlineData("FinishedJobRetention")]
    [InlineData("MaxFinishedJobs")]
    public void Options_InvalidFinishedJobRetention_FailsNamingTheSetting(string setting)
    {
        var services = new ServiceCollection().AddLogging();
        services.AddWorkQueue(o =>
        {
            if (setting == "FinishedJobRetention")
            {
                o.FinishedJobRetention = TimeSpan.FromSeconds(-1);
            }
            else
            {
                o.MaxFinishedJobs = -1;
            }
        });
        using var provider = services.BuildServiceProvider();

        var ex = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IWorkQueueProvider>());

        Assert.Contains(setting, ex.Message);
    }

    [Fact]
    public void Options_ZeroCapacity_FailsNamingCapacity()
    {
        var services = new ServiceCollection().AddLogging();
        services.AddWorkQueue(o => o.Capacity = 0);
        using var provider = services.BuildServiceProvider();

        var ex = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IWorkQueueProvider>());

        Assert.Contains("Capacity", ex.Message);
    }

    [Fact]
    public async Task Host_InvalidOptions_FailsAtStartup()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddWorkQueue().AddQueue("bad", o => o.Retry.BaseDelay = TimeSpan.FromMinutes(2));
        using var host = builder.Build();

        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());

        Assert.Contains("Retry.BaseDelay (00:02:00) must be less than or equal to Retry.MaxDelay (00:01:00)", ex.Message);
    }

    [Fact]
    public async Task Host_ConfigurationSection_OverridesCodeAndDeclaresQueues()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["WorkQueue:Queues:default:MaxWorkers"] = "3",
            ["WorkQueue:Queues:default:FullMode"] = "Reject",
            ["WorkQueue:Queues:default:Retry:MaxAttempts"] = "4",
            ["WorkQueue:Queues:reports:Capacity"] = "7",
        });
        builder.Services.AddWorkQueue(o => { o.MaxWorkers = 10; o.Capacity = 50; });
        using var host = builder.Build();
        await host.StartAsync();

        var provider = host.Services.GetRequiredService<IWorkQueueProvider>();
        Assert.True(provider.TryGetControl("default", out var defaultQueue));
        var defaults = defaultQueue.GetSnapshot();
        Assert.Equal((3, 50, QueueFullMode.Reject), (defaults.MaxWorkers, defaults.Capacity, defaults.FullMode));
        Assert.Equal(4, host.Services.GetRequiredService<IOptionsMonitor<WorkQueueOptions>>().Get("default").Retry.MaxAttempts);
        Assert.True(provider.TryGetControl("reports", out var reports));
        Assert.Equal(7, reports.GetSnapshot().Capacity);
        await host.StopAsync();
    }

    [Fact]
    public async Task Host_InvalidConfigurationValue_FailsAtStartupNamingIt()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?> { ["WorkQueue:Queues:io:MinWorkers"] = "40", ["WorkQueue:Queues:io:MaxWorkers"] = "4" });
        builder.Services.AddWorkQueue();
        using var host = builder.Build();

        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());

        Assert.Contains("'io': MinWorkers (40) must be less than or equal to MaxWorkers (4)", ex.Message);
    }

    [Fact]
    public async Task Host_DurableSectionForAQueueWithoutAStore_FailsAtStartupNamingIt()
    {
        // Configuration tunes a durable queue's settings; it does not make a queue durable. An operator who writes a
        // Durable section for a queue the code keeps in memory must hear so at startup, not find the jobs lost later.
        var builder = Host.CreateApplicationBuilder();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?> { ["WorkQueue:Queues:sms:Durable:PollInterval"] = "00:00:02" });
        builder.Services.AddWorkQueue().AddQueue("sms");
        using var host = builder.Build();

        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());

        Assert.Contains("'sms'", ex.Message);
        Assert.Contains("WorkQueue:Queues:sms:Durable", ex.Message);
        Assert.Contains("AddDurableQueue", ex.Message);
    }

    [Fact]
    public async Task Host_StartAndStop_StartsWorkersAndDrainsQueue()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddWorkQueue(o => o.MinWorkers = 2);
        using var host = builder.Build();
        var queue = host.Services.GetRequiredService<IInMemoryWorkQueue>();
        int ran = 0;
        for (int i = 0; i < 100; i++)
        {
            Assert.True(queue.TryEnqueue(_ => Interlocked.Increment(ref ran)));
        }

        var control = host.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single();
        await host.StartAsync();
        Assert.Equal(2, control.GetSnapshot().Workers);
        await host.StopAsync();

        Assert.Equal(100, ran);
        Assert.False(control.GetSnapshot().IsAccepting);
    }

    [Fact]
    public async Task Host_ConfigurationWithOtherCase_AppliesToTheQueueDeclaredInCode()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["WorkQueue:Queues:Default:MaxWorkers"] = "3",
            ["WorkQueue:Queues:SMS:Capacity"] = "9",
        });
        builder.Services.AddWorkQueue(o => { o.MaxWorkers = 10; o.Capacity = 50; }).AddQueue("sms", o => o.MaxWorkers = 5);
        using var host = builder.Build();
        await host.StartAsync();

        var provider = host.Services.GetRequiredService<IWorkQueueProvider>();
        Assert.Equal(2, provider.Queues.Count);
        Assert.True(provider.TryGetControl("DEFAULT", out var defaults));
        Assert.Equal((3, 50), (defaults.GetSnapshot().MaxWorkers, defaults.GetSnapshot().Capacity));
        Assert.True(provider.TryGetControl("Sms", out var sms));
        Assert.Equal((5, 9), (sms.GetSnapshot().MaxWorkers, sms.GetSnapshot().Capacity));
        Assert.Equal(["default", "sms"], provider.Queues.Select(q => q.Name).Order());
        await host.StopAsync();
    }

    [Fact]
    public async Task KeyedQueue_OtherCase_ResolvesTheSameQueueWithItsDeclaredName()
    {
        await using var harness = QueueHarness.Start(queues => { }, queues => queues.AddQueue("Sms"));

        var upper = harness.Services.GetRequiredKeyedService<IWorkQueue>("SMS");
        var lower = harness.Services.GetRequiredKeyedService<IWorkQueue>("sms");

        Assert.Same(upper, lower);
        Assert.Equal("Sms", upper.Name);
        var ex = Assert.Throws<ArgumentException>(() => harness.Services.GetRequiredKeyedService<IWorkQueue>("nope"));
        Assert.Contains("'nope'", ex.Message);
    }

    [Fact]
    public async Task KeyedInMemoryQueue_OtherCase_ResolvesTheQueuesProducer()
    {
        await using var harness = QueueHarness.Start(queues => { }, queues => queues.AddQueue("Sms"));

        var keyed = harness.Services.GetRequiredKeyedService<IInMemoryWorkQueue>("SMS");

        Assert.Same(harness.Services.GetRequiredKeyedService<IWorkQueue>("sms"), keyed);
        Assert.Same(harness.Provider.GetInMemoryQueue("sms"), keyed);
        Assert.Equal("Sms", keyed.Name);
        Assert.Same(harness.Services.GetRequiredService<IWorkQueue>(), harness.Services.GetRequiredService<IInMemoryWorkQueue>());
        var ex = Assert.Throws<ArgumentException>(() => harness.Services.GetRequiredKeyedService<IInMemoryWorkQueue>("nope"));
        Assert.Contains("'nope'", ex.Message);
    }

    [Fact]
    public async Task GetInMemoryQueue_UnknownName_ThrowsArgumentExceptionNamingIt()
    {
        await using var harness = QueueHarness.Start();

        var ex = Assert.Throws<ArgumentException>(() => harness.Provider.GetInMemoryQueue("nope"));

        Assert.Equal("name", ex.ParamName);
        Assert.Contains("'nope'", ex.Message);
    }

    [Fact]
    public async Task TryEnqueue_ScopedHandler_ResolvesFreshScopePerJobAndDisposesIt()
    {
        var seen = new List<ScopedDependency>();
        var done = new CountdownSignal(2);
        await using var harness = QueueHarness.Start(
            o => { o.MinWorkers = 1; o.MaxWorkers = 1; },
            addServices: s => s.AddScoped<ScopedDependency>().AddScoped<RecordingScopedHandler>().AddSingleton(seen).AddSingleton(done));

        Assert.True(harness.Queue.TryEnqueue<RecordingScopedHandler, string>("a"));
        Assert.True(harness.Queue.TryEnqueue<RecordingScopedHandler, string>("b"));

        await Wait.ForAsync(done.Task, "two scoped jobs");
        await Wait.UntilAsync(() => seen.All(d => d.Disposed), "both scopes are disposed");
        Assert.Equal(2, seen.Count);
        Assert.NotSame(seen[0], seen[1]);
    }

    [Fact]
    public async Task TryEnqueue_UnregisteredHandlerType_IsCreatedWithItsDependencies()
    {
        var done = new CountdownSignal(1);
        await using var harness = QueueHarness.Start(addServices: s => s.AddSingleton(done));

        Assert.True(harness.Queue.TryEnqueue<UnregisteredHandler, int>(7));

        await Wait.ForAsync(done.Task, "the unregistered handler");
    }

    internal sealed class ScopedDependency : IDisposable
    {
        public bool Disposed { get; private set; }

        public void Dispose() => Disposed = true;
    }

    internal sealed class RecordingScopedHandler(ScopedDependency dependency, List<ScopedDependency> seen, CountdownSignal done) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            lock (seen)
            {
                seen.Add(dependency);
            }

            done.Signal();
            return default;
        }
    }

    internal sealed class UnregisteredHandler(CountdownSignal done) : IJobHandler<int>
    {
        public ValueTask ExecuteAsync(int payload, CancellationToken cancellationToken)
        {
            done.Signal();
            return default;
        }
    }
}
