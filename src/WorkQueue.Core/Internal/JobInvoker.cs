namespace WorkQueue.Internal;

/// <summary>
/// Runs one kind of job. Implementations are stateless singletons, so a <see cref="WorkItem"/> only stores a reference.
/// </summary>
internal abstract class JobInvoker
{
    public abstract ValueTask InvokeAsync(object? target, object? state, IServiceProvider services, CancellationToken cancellationToken);

    public abstract string Describe(object? target);

    public virtual object? GetPayload(object? target, object? state) => state;

    protected static string DescribeDelegate(Delegate job)
    {
        var method = job.Method;
        return method.DeclaringType is { } type ? $"{type.FullName}.{method.Name}" : method.Name;
    }
}
