using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>Binds <c>WorkQueue:Queues:{name}:Durable</c> over what code configured, so operators can tune a deployment without a build.</summary>
internal sealed class DurableQueueConfiguration : IPostConfigureOptions<DurableQueueOptions>
{
    private readonly IConfiguration? _configuration;

    public DurableQueueConfiguration(IServiceProvider services)
    {
        _configuration = services.GetService<IConfiguration>();
    }

    public void PostConfigure(string? name, DurableQueueOptions options)
    {
        if (name is null || _configuration is null)
        {
            return;
        }

        var section = _configuration.GetSection($"WorkQueue:Queues:{name}:Durable");
        if (section.Exists())
        {
            section.Bind(options);
        }
    }
}
