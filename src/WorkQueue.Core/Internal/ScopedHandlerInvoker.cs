using Microsoft.Extensions.DependencyInjection;

namespace WorkQueue.Internal;

/// <summary>
/// Runs a job on a <typeparamref name="THandler"/> resolved from a fresh service scope, disposed when the job ends.
/// Nothing from the enqueuing request's scope is used: that scope is usually gone by the time the job runs.
/// </summary>
internal sealed class ScopedHandlerInvoker<THandler, TPayload> : JobInvoker
    where THandler : class, IJobHandler<TPayload>
{
    public static readonly ScopedHandlerInvoker<THandler, TPayload> Instance = new();

    private static readonly ObjectFactory<THandler> s_factory = ActivatorUtilities.CreateFactory<THandler>(Type.EmptyTypes);

    public override async ValueTask InvokeAsync(object? target, object? state, IServiceProvider services, CancellationToken cancellationToken)
    {
        // ConfigureAwait(true) on purpose: the worker's synchronization context brings the continuation (and the scope's
        // disposal, which may block) back to the worker thread instead of a thread-pool thread.
        var scope = services.GetRequiredService<IServiceScopeFactory>().CreateAsyncScope();
        await using (scope.ConfigureAwait(true))
        {
            var handler = scope.ServiceProvider.GetService<THandler>() ?? s_factory(scope.ServiceProvider, null);
            await handler.ExecuteAsync((TPayload)state!, cancellationToken).ConfigureAwait(true);
        }
    }

    public override string Describe(object? target) => typeof(THandler).FullName ?? typeof(THandler).Name;
}
