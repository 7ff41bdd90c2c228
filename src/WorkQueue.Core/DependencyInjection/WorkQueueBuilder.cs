using Microsoft.Extensions.DependencyInjection;
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

        // One options name per queue whatever the case it is written in, as configuration keys are.
        var options = Services.AddOptions<WorkQueueOptions>(WorkQueueRegistry.OptionsName(name)).ValidateOnStart();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        return this;
    }
}
