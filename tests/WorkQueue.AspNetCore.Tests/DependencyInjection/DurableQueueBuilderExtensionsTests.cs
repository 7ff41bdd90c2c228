using System.Text.Json.Serialization;
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
public sealed partial class DurableQueueBuilderExtensionsTests(RedisServerFixture redis) : IClassFixture<RedisServerFixture>
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

    [Fact]
    public async Task AddDurableQueue_WithJsonTypeInfo_StoresAndReadsPayloadsWithThatContract()
    {
        string prefix = DurableTestHost.NewPrefix();
        var log = new JobLog();
        var builder = Host.CreateApplicationBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(log).AddSingleton(new InstanceName("a"));
        builder.Services.AddRedisWarmup(o => o.Configuration = redis.Server.Configuration);
        builder.Services.AddWorkQueue().AddDurableQueue<TestJobHandler, TestJob>(
            DurableTestHost.Queue,
            UpperSnakeJsonContext.Default.TestJob,
            configureDurable: d => { d.KeyPrefix = prefix; d.PollInterval = TimeSpan.FromMilliseconds(200); });
        using var host = builder.Build();
        await host.StartAsync();
        var producer = new TestJobQueue(host.Services.GetRequiredKeyedService<IWorkQueue>(DurableTestHost.Queue));
        Assert.True(host.Services.GetRequiredService<IWorkQueueProvider>().TryGetControl(DurableTestHost.Queue, out var control));

        // Paused, the entry stays in the stream as the producer wrote it.
        control.Pause();
        await producer.EnqueueAsync(new TestJob(7, "snake"));
        await using var connection = await DurableTestHost.ConnectAsync(redis.Server);
        var entries = await connection.GetDatabase().StreamRangeAsync(DurableTestHost.StreamKey(prefix));
        control.Resume();
        await log.WaitUntilAsync(() => log.CallsOf(7) == 1, "the job to run");
        await host.StopAsync();

        string stored = string.Join(" ", entries.SelectMany(e => e.Values).Select(v => v.Value.ToString()));
        Assert.Contains("\"TAG\":\"snake\"", stored, StringComparison.Ordinal);
        Assert.Equal(new TestJob(7, "snake"), Assert.Single(log.Runs).Job);
    }

    /// <summary>A contract other than the web defaults, so the stored JSON shows which one wrote it.</summary>
    [JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.SnakeCaseUpper)]
    [JsonSerializable(typeof(TestJob))]
    private sealed partial class UpperSnakeJsonContext : JsonSerializerContext;
}
