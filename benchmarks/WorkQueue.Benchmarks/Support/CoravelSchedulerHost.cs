using System.Diagnostics;
using Coravel;
using Coravel.Scheduling.Schedule.Interfaces;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Coravel's scheduler set up the way its docs set it up: <c>services.AddScheduler()</c> in a generic host, whose start
/// starts the scheduler's hosted service. Coravel has no one-off delayed job; <see cref="ScheduleOnceAt"/> writes the
/// nearest thing its documented API offers.
/// </summary>
/// <remarks>
/// The scheduler's hosted service starts a <see cref="System.Threading.Timer"/> with a fixed 1 s period once the host
/// has started (not configurable); each tick runs every per-second schedule whose <c>When</c> constraint holds, on the
/// thread pool. A schedule added at runtime through <see cref="IScheduler"/> (the object <c>UseScheduler</c> hands out
/// at startup) is seen by the next tick.
/// </remarks>
public sealed class CoravelSchedulerHost : IDisposable
{
    /// <summary>The period of Coravel's scheduler tick: 1 second, fixed by Coravel.</summary>
    public static readonly TimeSpan TickPeriod = TimeSpan.FromSeconds(1);

    private readonly IHost _host;

    private CoravelSchedulerHost(IHost host)
    {
        _host = host;
        Scheduler = host.Services.GetRequiredService<IScheduler>();
    }

    /// <summary>Gets the scheduler.</summary>
    public IScheduler Scheduler { get; }

    /// <summary>Builds and starts the host (the scheduler's timer starts when the host reports it has started).</summary>
    /// <returns>The started host.</returns>
    public static CoravelSchedulerHost Start()
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddScheduler();
        var host = builder.Build();
        host.Start();
        return new CoravelSchedulerHost(host);
    }

    /// <summary>
    /// Schedules <paramref name="job"/> to run once, at the first tick at or after <paramref name="dueTimestamp"/>:
    /// <c>Schedule(job).EverySecond().When(() =&gt; now &gt;= due).Once()</c>. <c>Once</c> unschedules the job after
    /// its first run; a tick whose <c>When</c> fails does not count as a run.
    /// </summary>
    /// <param name="job">The job.</param>
    /// <param name="dueTimestamp">The due time, a <see cref="Stopwatch"/> timestamp.</param>
    public void ScheduleOnceAt(Action job, long dueTimestamp) =>
        Scheduler.Schedule(job)
            .EverySecond()
            .When(() => Task.FromResult(Stopwatch.GetTimestamp() >= dueTimestamp))
            .Once();

    /// <summary>Stops the host (the scheduler waits for running tasks) and disposes it.</summary>
    public void Dispose()
    {
        _host.StopAsync().GetAwaiter().GetResult();
        _host.Dispose();
    }
}
