using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using WorkQueue.Internal;

namespace WorkQueue.DependencyInjection;

internal sealed class WorkQueueBuilder : IWorkQueueBuilder
{
    public WorkQueueBuilder(IServiceCollection services)
    {
        Services = services;
    }

    public IServiceCollection Services { get; }

    public IWorkQueueBuilder AddQueue(string name, Action<WorkQueueOptions>? configure = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        Services.Configure<WorkQueueRegistry>(r => r.QueueNames.Add(name));
        var options = Services.AddOptions<WorkQueueOptions>(name).ValidateOnStart();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        Services.TryAddKeyedSingleton<IWorkQueue>(name, (sp, _) => sp.GetRequiredService<IWorkQueueProvider>().GetQueue(name));
        return this;
    }
}
