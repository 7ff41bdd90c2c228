namespace WorkQueue.Internal;

/// <summary>Runs a <see cref="Func{CancellationToken, ValueTask}"/> job on the worker thread.</summary>
internal sealed class AsyncDelegateInvoker : JobInvoker
{
    public static readonly AsyncDelegateInvoker Instance = new();

    public override ValueTask InvokeAsync(object? target, object? state, IServiceProvider services, CancellationToken cancellationToken) =>
        ((Func<CancellationToken, ValueTask>)target!)(cancellationToken);

    public override string Describe(object? target) => DescribeDelegate((Delegate)target!);

    public override object? GetPayload(object? target, object? state) => target;
}
