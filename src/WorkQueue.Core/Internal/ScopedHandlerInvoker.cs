using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using WorkQueue.Telemetry;

namespace WorkQueue.Internal;

/// <summary>
/// Runs a job on a <typeparamref name="THandler"/> resolved from a fresh service scope, disposed when the job ends.
/// Nothing from the enqueuing request's scope is used: that scope is usually gone by the time the job runs.
/// </summary>
/// <remarks>
/// The job's outcome is the handler's: a scoped service that throws while the scope is disposed after the handler
/// succeeded does not fail the job (a retry would run its effects again); the error is logged and counted. When the
/// handler threw, its exception stays the outcome and a disposal error is logged as well.
/// </remarks>
internal sealed partial class ScopedHandlerInvoker<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler, TPayload> : JobInvoker
    where THandler : class, IJobHandler<TPayload>
{
    public static readonly ScopedHandlerInvoker<THandler, TPayload> Instance = new();

    private static readonly ObjectFactory<THandler> s_factory = ActivatorUtilities.CreateFactory<THandler>(Type.EmptyTypes);

    public override async ValueTask InvokeAsync(object? target, object? state, IServiceProvider services, CancellationToken cancellationToken)
    {
        // ConfigureAwait(true) on purpose: the worker's synchronization context brings the continuation (and the scope's
        // disposal, which may block) back to the worker thread instead of a thread-pool thread.
        var scope = services.GetRequiredService<IServiceScopeFactory>().CreateAsyncScope();
        try
        {
            var handler = scope.ServiceProvider.GetService<THandler>() ?? s_factory(scope.ServiceProvider, null);
            await handler.ExecuteAsync((TPayload)state!, cancellationToken).ConfigureAwait(true);
        }
        catch
        {
            await DisposeAsync(scope, services).ConfigureAwait(true);
            throw;
        }

        await DisposeAsync(scope, services).ConfigureAwait(true);
    }

    public override string Describe(object? target) => typeof(THandler).FullName ?? typeof(THandler).Name;

    private static async ValueTask DisposeAsync(AsyncServiceScope scope, IServiceProvider services)
    {
        try
        {
            await scope.DisposeAsync().ConfigureAwait(true);
        }
        catch (Exception ex)
        {
            string handler = typeof(THandler).FullName ?? typeof(THandler).Name;
            var logger = ((ILoggerFactory?)services.GetService(typeof(ILoggerFactory)))?.CreateLogger("WorkQueue");
            logger?.TryLog(static (l, s) => Log.ScopeDisposalFailed(l, s.ex, s.handler), (ex, handler));
            try
            {
                ((WorkQueueMetrics?)services.GetService(typeof(WorkQueueMetrics)))?.ScopeDisposalFailed(handler);
            }
            catch (Exception)
            {
                // A throwing metrics listener must not turn a finished job into a failed one.
            }
        }
    }

    private static partial class Log
    {
        [LoggerMessage(112, LogLevel.Error, "A scoped service of job handler {Handler} threw while its scope was disposed; the job's outcome is the handler's (a success is not retried).", EventName = "ScopeDisposalFailed")]
        public static partial void ScopeDisposalFailed(ILogger logger, Exception exception, string handler);
    }
}
