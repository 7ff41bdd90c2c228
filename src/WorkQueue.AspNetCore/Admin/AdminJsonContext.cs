using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// The JSON contract of every admin response, generated at build time, so the admin endpoints answer in a trimmed or
/// native AOT app, where reflection-based JSON is off: the bodies of their results (<c>TypedResults.Ok</c>), the
/// problems they answer and the values those problems carry (<c>job</c>, <c>done</c>, <c>errors</c>).
/// </summary>
/// <remarks>
/// The results are written with the app's HTTP JSON options (<see cref="JsonOptions"/>), as any minimal API's are, so
/// <see cref="AddTo"/> appends this context to their resolvers when the routes are mapped.
/// </remarks>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(QueueState))]
[JsonSerializable(typeof(QueueState[]))]
[JsonSerializable(typeof(DepthState))]
[JsonSerializable(typeof(WorkersState))]
[JsonSerializable(typeof(PauseState))]
[JsonSerializable(typeof(DeadLetterState[]))]
[JsonSerializable(typeof(DurableDeadLetterState[]))]
[JsonSerializable(typeof(RequeuedState))]
[JsonSerializable(typeof(DeadLetterBatchState))]
[JsonSerializable(typeof(List<DeadLetterBatchItem>))]
[JsonSerializable(typeof(ScheduledJobState[]))]
[JsonSerializable(typeof(JobStatusState))]
[JsonSerializable(typeof(DurableJobStatusState))]
[JsonSerializable(typeof(JobPageState))]
[JsonSerializable(typeof(DurableJobPageState))]
[JsonSerializable(typeof(JobCancelState))]
[JsonSerializable(typeof(DurableJobCancelState))]
[JsonSerializable(typeof(ThreadPoolState))]
[JsonSerializable(typeof(RecurringJobState))]
[JsonSerializable(typeof(RecurringJobState[]))]
[JsonSerializable(typeof(TriggeredState))]
[JsonSerializable(typeof(HistoryState))]
[JsonSerializable(typeof(Microsoft.AspNetCore.Mvc.ProblemDetails))]
[JsonSerializable(typeof(HttpValidationProblemDetails))]
[JsonSerializable(typeof(Dictionary<string, string[]>))]
[JsonSerializable(typeof(string))]
internal sealed partial class AdminJsonContext : JsonSerializerContext
{
    /// <summary>
    /// Appends this context to the resolvers of the app's HTTP JSON options, once. Last, so it answers only for the
    /// admin's own types and the problem types when nothing before it does: with reflection on (a JIT app), the
    /// reflection resolver before it answers for everything, as it always has.
    /// </summary>
    /// <returns><see langword="false"/> when the options were already in use (read-only) without this context: then only reflection, where it is on, can write the admin's responses.</returns>
    public static bool AddTo(IServiceProvider services)
    {
        if (services.GetService<IOptions<JsonOptions>>()?.Value.SerializerOptions is not { } options
            || options.TypeInfoResolverChain.Contains(Default))
        {
            return true;
        }

        if (options.IsReadOnly)
        {
            return false;
        }

        options.TypeInfoResolverChain.Add(Default);
        return true;
    }
}
