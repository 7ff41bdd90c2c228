using Microsoft.Extensions.Hosting;
using WorkQueue.Queueing;

namespace WorkQueue.Hosting;

/// <summary>
/// Takes the provider in its constructor, so the queues exist (and have started) before any hosted service's
/// <c>StartAsync</c>, that is before the web server takes traffic; stops them together after every hosted service has
/// stopped (so after the server stopped taking requests): work already accepted flows through queues that feed each
/// other until none is left, or until the host's shutdown timeout.
/// </summary>
internal sealed class WorkQueueHostedService : IHostedLifecycleService
{
    private readonly WorkQueueProvider _provider;

    public WorkQueueHostedService(WorkQueueProvider provider)
    {
        _provider = provider;
    }

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) =>
        _provider.StopAsync(Timeout.InfiniteTimeSpan, cancellationToken);
}
