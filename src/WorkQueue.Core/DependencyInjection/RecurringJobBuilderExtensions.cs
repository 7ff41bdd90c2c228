using System.Diagnostics.CodeAnalysis;
using Microsoft.Extensions.DependencyInjection.Extensions;
using WorkQueue;
using WorkQueue.Queueing;
using WorkQueue.Recurring;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>
/// Adds recurring jobs (cron or fixed interval) to in-memory or durable queues.
/// </summary>
public static class RecurringJobBuilderExtensions
{
    // RS0026: the overloads differ by the schedule's type (a cron string or a TimeSpan interval) before the optional
    // configure callback, so no call can bind to both.
#pragma warning disable RS0026
    /// <summary>
    /// Adds a recurring job on a cron schedule: each occurrence enqueues a job for a scoped
    /// <typeparamref name="THandler"/> with a <see cref="RecurringOccurrence"/> payload, on the queue named by
    /// <see cref="RecurringJobOptions.Queue"/>. On an in-memory queue it runs per process; on a durable queue each
    /// occurrence is enqueued once across the instances, and the schedule registered here is shared through Redis at each
    /// start (a deploy with another schedule wins over the old one; a runtime removal or change of this very schedule
    /// holds). Change jobs at runtime through <see cref="IRecurringJobs"/>.
    /// </summary>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each occurrence.</typeparam>
    /// <param name="builder">The builder from <c>AddWorkQueue</c>.</param>
    /// <param name="id">The job's id, unique among recurring jobs (case-insensitive); it cannot start with <c>@</c> or <c>~</c> (reserved: a durable queue stores the job's shared schedule and pause under those prefixes).</param>
    /// <param name="cronExpression">A cron expression of five fields (<c>0 2 * * *</c>: 02:00 every day), or six with seconds first.</param>
    /// <param name="configure">Configures the job's options (queue, time zone).</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentException">
    /// <paramref name="id"/> is empty, starts with <c>@</c> or <c>~</c>, or is already registered, or the cron expression or time zone is not valid; the message names it.
    /// (An unknown queue fails when the app starts.)
    /// </exception>
    public static IWorkQueueBuilder AddRecurringJob<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(this IWorkQueueBuilder builder, string id, string cronExpression, Action<RecurringJobOptions>? configure = null)
        where THandler : class, IJobHandler<RecurringOccurrence>
    {
        ArgumentNullException.ThrowIfNull(builder);
        var definition = RecurringJobDefinition.Create<THandler>(id, zone => RecurringSchedule.Cron(cronExpression, zone, nameof(cronExpression)), configure);
        return Add(builder, definition);
    }

    /// <summary>
    /// Adds a recurring job that runs every <paramref name="interval"/>, on multiples of it since the Unix epoch (UTC), so
    /// occurrences do not drift across restarts. See <see cref="AddRecurringJob{THandler}(IWorkQueueBuilder, string, string, Action{RecurringJobOptions}?)"/>.
    /// </summary>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each occurrence.</typeparam>
    /// <param name="builder">The builder from <c>AddWorkQueue</c>.</param>
    /// <param name="id">The job's id, unique among recurring jobs (case-insensitive); it cannot start with <c>@</c> or <c>~</c> (reserved: a durable queue stores the job's shared schedule and pause under those prefixes).</param>
    /// <param name="interval">The interval, from one second to 366 days.</param>
    /// <param name="configure">Configures the job's options (queue).</param>
    /// <returns>The builder.</returns>
    /// <exception cref="ArgumentException"><paramref name="id"/> is empty, starts with <c>@</c> or <c>~</c>, or is already registered.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="interval"/> is out of range.</exception>
    public static IWorkQueueBuilder AddRecurringJob<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(this IWorkQueueBuilder builder, string id, TimeSpan interval, Action<RecurringJobOptions>? configure = null)
        where THandler : class, IJobHandler<RecurringOccurrence>
    {
        ArgumentNullException.ThrowIfNull(builder);
        var definition = RecurringJobDefinition.Create<THandler>(id, _ => RecurringSchedule.Every(interval, nameof(interval)), configure);
        return Add(builder, definition);
    }

#pragma warning restore RS0026

    private static IWorkQueueBuilder Add(IWorkQueueBuilder builder, RecurringJobDefinition definition)
    {
        var services = builder.Services;
        var registry = services.FirstOrDefault(d => d.ServiceType == typeof(RecurringJobRegistry))?.ImplementationInstance as RecurringJobRegistry;
        if (registry is null)
        {
            registry = new RecurringJobRegistry();
            services.AddSingleton(registry);
        }

        registry.Add(definition);
        services.TryAddSingleton<IRecurringJobs>(static sp => sp.GetRequiredService<WorkQueueProvider>().Recurring!);
        return builder;
    }
}
