using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using WorkQueue.Testing;

namespace WorkQueue.Testing.Tests.TestSupport;

/// <summary>An application's services with WorkQueue and the harness (no host: the queues start when first resolved).</summary>
internal sealed class TestApp : IAsyncDisposable
{
    private readonly ServiceProvider _services;

    private TestApp(ServiceProvider services)
    {
        _services = services;
    }

    public IServiceProvider Services => _services;

    public IWorkQueueTestHarness Harness => _services.GetRequiredService<IWorkQueueTestHarness>();

    public JobLog Log => _services.GetRequiredService<JobLog>();

    public IWorkQueue Queue(string? name = null) => name is null ? _services.GetRequiredService<IWorkQueue>() : _services.GetRequiredKeyedService<IWorkQueue>(name);

    public IInMemoryWorkQueue InMemory(string? name = null) => name is null ? _services.GetRequiredService<IInMemoryWorkQueue>() : _services.GetRequiredKeyedService<IInMemoryWorkQueue>(name);

    /// <summary>Builds the app: a default queue and a <c>second</c> one (one attempt unless <paramref name="retries"/>), and the harness.</summary>
    public static TestApp Start(
        Action<WorkQueueTestingOptions>? testing = null,
        Action<IWorkQueueBuilder>? queues = null,
        Action<IServiceCollection>? services = null,
        FakeTimeProvider? clock = null,
        bool retries = false)
    {
        var collection = new ServiceCollection();
        collection.AddSingleton<JobLog>();
        collection.AddScoped<ScopedProbe>();
        var builder = collection.AddWorkQueue(o => Configure(o, retries));
        builder.AddQueue("second", o => Configure(o, retries));
        queues?.Invoke(builder);
        services?.Invoke(collection);
        collection.AddWorkQueueTesting(o =>
        {
            o.FakeTime = clock;
            testing?.Invoke(o);
        });
        return new TestApp(collection.BuildServiceProvider(new ServiceProviderOptions { ValidateScopes = true }));
    }

    public async ValueTask DisposeAsync() => await _services.DisposeAsync();

    private static void Configure(WorkQueueOptions o, bool retries)
    {
        o.MinWorkers = 1;
        o.MaxWorkers = 2;
        o.Retry.MaxAttempts = retries ? 2 : 1;
        o.Retry.BaseDelay = TimeSpan.FromSeconds(10);
    }
}

internal static class ServiceProviderExtensions
{
    public static WorkQueueSnapshot GetQueueSnapshot(this IServiceProvider services, string name) =>
        services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => string.Equals(q.Name, name, StringComparison.OrdinalIgnoreCase)).GetSnapshot();
}
