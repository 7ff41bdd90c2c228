using Microsoft.Extensions.DependencyInjection.Extensions;
using WorkQueue;
using WorkQueue.Internal;
using WorkQueue.Queueing;
using WorkQueue.Testing;
using WorkQueue.Testing.Internal;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Puts WorkQueue's test harness into an application's services, for the application's own tests.
/// </summary>
public static class WorkQueueTestingServiceCollectionExtensions
{
    /// <summary>
    /// Adds the test harness (<see cref="IWorkQueueTestHarness"/>): every queue's <see cref="IWorkQueue"/> and
    /// <see cref="IInMemoryWorkQueue"/> (default, keyed and through <see cref="IWorkQueueProvider"/>) record what is
    /// enqueued and run it, hold it or run it inline as <see cref="WorkQueueTestingOptions.Mode"/> says, and the engine
    /// runs on <see cref="WorkQueueTestingOptions.FakeTime"/> when one is given. Call it before or after
    /// <c>AddWorkQueue</c> (in a <c>WebApplicationFactory</c>, from <c>ConfigureTestServices</c>), once per container
    /// (a second call replaces the harness and its modes, but a fake clock given to the first stays the engine's).
    /// </summary>
    /// <param name="services">The application's services.</param>
    /// <param name="configure">Configures the modes, the clock and the default wait.</param>
    /// <returns>The services.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="services"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><see cref="WorkQueueTestingOptions.IdleTimeout"/> is not positive.</exception>
    public static IServiceCollection AddWorkQueueTesting(this IServiceCollection services, Action<WorkQueueTestingOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        var options = new WorkQueueTestingOptions();
        configure?.Invoke(options);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(options.IdleTimeout, TimeSpan.Zero, "options.IdleTimeout");

        services.RemoveAll<WorkQueueTestHarness>();
        services.RemoveAll<IWorkQueueTestHarness>();
        services.AddSingleton(sp => new WorkQueueTestHarness(options, sp));
        services.AddSingleton<IWorkQueueTestHarness>(static sp => sp.GetRequiredService<WorkQueueTestHarness>());

        // The one place every producer comes from: the default and keyed IWorkQueue and IInMemoryWorkQueue registrations
        // of AddWorkQueue all ask IWorkQueueProvider, so wrapping it wraps them all. Replaced rather than tried, so the
        // order of AddWorkQueue and this call does not matter (AddWorkQueue only tries to add its own).
        services.RemoveAll<IWorkQueueProvider>();
        services.AddSingleton<IWorkQueueProvider>(static sp => sp.GetRequiredService<WorkQueueTestHarness>().Provider);

        if (options.FakeTime is { } fake)
        {
            // The engine takes its time from WorkQueueEnvironment, not from the container's TimeProvider (whose
            // default, the system clock, runs timers on the thread pool the engine stays off). A fixed jitter makes a
            // retry's delay known.
            services.RemoveAll<WorkQueueEnvironment>();
            services.AddSingleton(new WorkQueueEnvironment(fake, static () => 0.5));
        }

        return services;
    }
}
