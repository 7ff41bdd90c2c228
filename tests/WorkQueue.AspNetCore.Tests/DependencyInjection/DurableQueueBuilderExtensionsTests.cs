using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkQueue.AspNetCore.Durable;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.DependencyInjection;

/// <summary>
/// The names a durable queue puts in its Redis keys, checked where they are given: a queue's name and the key prefix
/// cannot break out of the hash tag <c>{name}</c> that keeps the queue's keys in one slot and apart from other queues'.
/// </summary>
public sealed class DurableQueueBuilderExtensionsTests
{
    [Theory]
    [InlineData("a{b")]
    [InlineData("a}b")]
    [InlineData("{jobs}")]
    public void AddDurableQueue_NameWithABrace_ThrowsNamingName(string name)
    {
        var builder = new ServiceCollection().AddWorkQueue();

        var ex = Assert.Throws<ArgumentException>(() => builder.AddDurableQueue<TestJobHandler, TestJob>(name));

        Assert.Equal("name", ex.ParamName);
        Assert.Contains($"'{name}'", ex.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("wq}")]
    [InlineData("{wq")]
    [InlineData("w q")]
    public async Task AddDurableQueue_KeyPrefixWithABraceOrSpace_FailsAtStartNamingTheSetting(string prefix)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(new JobLog()).AddSingleton(new InstanceName("a"));
        builder.Services.AddWorkQueue().AddDurableQueue<TestJobHandler, TestJob>("jobs", configureDurable: d => d.KeyPrefix = prefix);
        using var host = builder.Build();

        var ex = await Assert.ThrowsAsync<OptionsValidationException>(() => host.StartAsync());

        Assert.Contains("KeyPrefix", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AddDurableQueue_TwoQueues_AddOneWarmupStepThatCreatesTheirGroups()
    {
        var services = new ServiceCollection();
        services.AddWorkQueue()
            .AddDurableQueue<TestJobHandler, TestJob>("a")
            .AddDurableQueue<TestJobHandler, TestJob>("b");

        Assert.Single(services, d => d.ServiceType == typeof(IConfigureOptions<RedisWarmupOptions>) && d.ImplementationType == typeof(DurableGroupsWarmup));
        using var provider = services.BuildServiceProvider();
        Assert.Single(provider.GetRequiredService<IOptions<RedisWarmupOptions>>().Value.WarmupCallbacks);
    }
}
