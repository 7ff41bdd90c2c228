using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using WorkQueue.Internal;

namespace WorkQueue.Validation;

/// <summary>
/// Refuses a <c>WorkQueue:Queues:{name}:Durable</c> section for a queue without a store. Configuration tunes a durable
/// queue's settings (WorkQueue.AspNetCore binds that section); which store a queue has is its declaration in code, which
/// also names its Redis connection and job types. Without this check the section would be ignored and the queue would
/// keep its jobs in memory, where a restart loses them, while its operator believed them in Redis.
/// </summary>
internal sealed class WorkQueueStoreConfigurationValidator : IValidateOptions<WorkQueueOptions>
{
    private const string DurableSection = "Durable";

    private readonly IConfiguration? _configuration;
    private readonly IOptions<WorkQueueRegistry> _registry;

    public WorkQueueStoreConfigurationValidator(IServiceProvider services, IOptions<WorkQueueRegistry> registry)
    {
        _configuration = services.GetService<IConfiguration>();
        _registry = registry;
    }

    public ValidateOptionsResult Validate(string? name, WorkQueueOptions options)
    {
        if (name is null || _configuration is null || _registry.Value.Stores.ContainsKey(name))
        {
            return ValidateOptionsResult.Skip;
        }

        string path = $"{WorkQueueConfiguration.QueuesSection}:{name}:{DurableSection}";
        return _configuration.GetSection(path).Exists()
            ? ValidateOptionsResult.Fail(
                $"WorkQueue queue '{name}': configuration has a '{path}' section, but the queue has no store: configuration tunes a durable queue's settings and does not make a queue durable. Declare it with AddDurableQueue(\"{name}\", ...) to keep its jobs in Redis, or remove the section.")
            : ValidateOptionsResult.Success;
    }
}
