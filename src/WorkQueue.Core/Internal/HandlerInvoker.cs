namespace WorkQueue.Internal;

/// <summary>Runs a job on a handler instance the caller supplied.</summary>
internal sealed class HandlerInvoker<TPayload> : JobInvoker
{
    public static readonly HandlerInvoker<TPayload> Instance = new();

    public override ValueTask InvokeAsync(object? target, object? state, IServiceProvider services, CancellationToken cancellationToken) =>
        ((IJobHandler<TPayload>)target!).ExecuteAsync((TPayload)state!, cancellationToken);

    public override string Describe(object? target) => target!.GetType().FullName ?? target.GetType().Name;
}
