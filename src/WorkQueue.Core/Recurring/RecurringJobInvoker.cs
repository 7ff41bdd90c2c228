using System.Diagnostics.CodeAnalysis;
using WorkQueue.Internal;

namespace WorkQueue.Recurring;

/// <summary>
/// Runs one occurrence of a recurring job on a scoped <typeparamref name="THandler"/>, as any scoped handler job runs,
/// and tells the job's state how the attempt went (its latest run, as the admin endpoints show it).
/// </summary>
internal sealed class RecurringJobInvoker<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler> : JobInvoker
    where THandler : class, IJobHandler<RecurringOccurrence>
{
    public static readonly RecurringJobInvoker<THandler> Instance = new();

    public override async ValueTask InvokeAsync(object? target, object? state, IServiceProvider services, CancellationToken cancellationToken)
    {
        var job = (RecurringJobState)target!;
        var occurrence = (RecurringOccurrence)state!;
        job.OnAttemptStarted(occurrence);
        try
        {
            // ConfigureAwait(true), as the scoped invoker: the continuation stays on the queue's threads.
            await ScopedHandlerInvoker<THandler, RecurringOccurrence>.Instance.InvokeAsync(null, occurrence, services, cancellationToken).ConfigureAwait(true);
        }
        catch (Exception ex)
        {
            job.OnAttemptEnded(occurrence, ex);
            throw;
        }

        job.OnAttemptEnded(occurrence, null);
    }

    public override string Describe(object? target) => typeof(THandler).FullName ?? typeof(THandler).Name;
}
