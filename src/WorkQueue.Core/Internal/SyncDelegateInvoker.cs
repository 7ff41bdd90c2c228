namespace WorkQueue.Internal;

/// <summary>Runs an <see cref="Action{CancellationToken}"/> job inline on the worker thread.</summary>
internal sealed class SyncDelegateInvoker : JobInvoker
{
    public static readonly SyncDelegateInvoker Instance = new();

    public override ValueTask InvokeAsync(object? target, object? state, IServiceProvider services, CancellationToken cancellationToken)
    {
        ((Action<CancellationToken>)target!)(cancellationToken);
        return default;
    }

    public override string Describe(object? target) => DescribeDelegate((Delegate)target!);

    public override object? GetPayload(object? target, object? state) => target;
}
