using Microsoft.Extensions.Options;

namespace PayCallbackApi.Diagnostics;

/// <summary>
/// Logs CLR thread-pool statistics at a fixed interval from its own dedicated thread (a pool-based timer would itself
/// starve when the pool does). The load-comparison script reads the peak thread count from these lines.
/// </summary>
internal sealed partial class ThreadPoolSampler(IOptions<PayCallbackOptions> options, ILogger<ThreadPoolSampler> logger) : IHostedService
{
    private readonly ManualResetEventSlim _stop = new();
    private Thread? _thread;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        int interval = options.Value.DiagnosticsIntervalMs;
        if (interval > 0)
        {
            _thread = new Thread(() =>
            {
                while (!_stop.Wait(interval))
                {
                    Log.Sample(logger, ThreadPool.ThreadCount, ThreadPool.PendingWorkItemCount, ThreadPool.CompletedWorkItemCount);
                }
            })
            { IsBackground = true, Name = "threadpool-sampler" };
            _thread.Start();
        }

        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken)
    {
        _stop.Set();
        return Task.CompletedTask;
    }

    private static partial class Log
    {
        [LoggerMessage(20, LogLevel.Information, "threadpool threads={Threads} pending={Pending} completed={Completed}")]
        public static partial void Sample(ILogger logger, int threads, long pending, long completed);
    }
}
