using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace WorkQueue.Benchmarks.Alternatives;

/// <summary>
/// The Microsoft docs' <c>QueuedHostedService</c>: one <see cref="BackgroundService"/> loop that dequeues and awaits
/// one work item at a time. A single consumer by design.
/// </summary>
/// <param name="taskQueue">The queue to drain.</param>
/// <param name="logger">The logger the sample reports failed work items to.</param>
public sealed class QueuedHostedService(IBackgroundTaskQueue taskQueue, ILogger<QueuedHostedService> logger) : BackgroundService
{
    /// <inheritdoc/>
    protected override Task ExecuteAsync(CancellationToken stoppingToken) => BackgroundProcessing(stoppingToken);

    private async Task BackgroundProcessing(CancellationToken stoppingToken)
    {
        while (!stoppingToken.IsCancellationRequested)
        {
            var workItem = await taskQueue.DequeueAsync(stoppingToken);
            try
            {
                await workItem(stoppingToken);
            }
            catch (Exception ex)
            {
                logger.LogError(ex, "Error occurred executing {WorkItem}.", nameof(workItem));
            }
        }
    }
}
