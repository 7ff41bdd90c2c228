using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace WorkQueue.AspNetCore.Dashboard;

/// <summary>Takes a snapshot of every queue once a second into <see cref="DashboardHistory"/>.</summary>
internal sealed partial class DashboardSampler(
    IWorkQueueProvider queues,
    DashboardHistory history,
    TimeProvider time,
    ILogger<DashboardSampler> logger) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(DashboardHistory.Interval, time);
        do
        {
            SampleAll();
        }
        while (await WaitForNextTickAsync(timer, stoppingToken).ConfigureAwait(false));
    }

    /// <summary>Records one snapshot of every queue.</summary>
    internal void SampleAll()
    {
        var now = time.GetUtcNow();
        foreach (var queue in queues.Queues)
        {
            try
            {
                history.Record(now, queue.GetSnapshot());
            }
            catch (Exception ex)
            {
                // One failing snapshot must not end the sampling of every queue.
                Log.SampleFailed(logger, queue.Name, ex);
            }
        }
    }

    private static async ValueTask<bool> WaitForNextTickAsync(PeriodicTimer timer, CancellationToken stoppingToken)
    {
        try
        {
            return await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            return false;
        }
    }

    private static partial class Log
    {
        [LoggerMessage(410, LogLevel.Warning, "The dashboard could not take a snapshot of queue {Queue}.", EventName = "DashboardSampleFailed")]
        public static partial void SampleFailed(ILogger logger, string queue, Exception exception);
    }
}
