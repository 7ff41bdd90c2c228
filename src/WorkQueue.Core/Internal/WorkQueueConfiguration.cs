using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace WorkQueue.Internal;

/// <summary>
/// Reads queues from the host's configuration (<c>WorkQueue:Queues:{name}</c>), when there is one: each child section
/// declares a queue, and its values override what code configured, so operators can tune a deployment without a build.
/// </summary>
internal sealed class WorkQueueConfiguration : IPostConfigureOptions<WorkQueueOptions>, IPostConfigureOptions<WorkQueueRegistry>
{
    public const string QueuesSection = "WorkQueue:Queues";

    private readonly IConfiguration? _configuration;

    public WorkQueueConfiguration(IServiceProvider services)
    {
        _configuration = services.GetService<IConfiguration>();
    }

    // Runs after the code's AddQueue calls, so a name declared in both keeps the code's spelling.
    public void PostConfigure(string? name, WorkQueueRegistry options)
    {
        if (_configuration is null)
        {
            return;
        }

        foreach (var queue in _configuration.GetSection(QueuesSection).GetChildren())
        {
            options.QueueNames.Add(queue.Key);
        }
    }

    public void PostConfigure(string? name, WorkQueueOptions options)
    {
        if (name is null || _configuration is null)
        {
            return;
        }

        var section = _configuration.GetSection($"{QueuesSection}:{name}");
        if (section.Exists())
        {
            section.Bind(options);
        }
    }
}
