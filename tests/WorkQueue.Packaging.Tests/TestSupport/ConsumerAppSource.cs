namespace WorkQueue.Packaging.Tests.TestSupport;

/// <summary>The files of the consumer app: a small web app that knows WorkQueue only as a NuGet package.</summary>
internal static class ConsumerAppSource
{
    /// <summary>The line the app prints once it listens, followed by its addresses.</summary>
    public const string ListeningLine = "CONSUMER LISTENING ";

    public const string Capacity = "50";

    public const string SmsCapacity = "7";

    /// <summary>
    /// The project. Deliberately <c>Microsoft.NET.Sdk</c>, not <c>.Web</c>: ASP.NET Core reaches it only through the
    /// package's <c>frameworkReference</c>, so a package without it fails to build. It uses StackExchange.Redis types
    /// too, so a package without that dependency fails to build as well. Warnings (restore ones included) are errors.
    /// </summary>
    public static string Project(string version) => $$"""
        <Project Sdk="Microsoft.NET.Sdk">
          <PropertyGroup>
            <OutputType>Exe</OutputType>
            <TargetFramework>net10.0</TargetFramework>
            <Nullable>enable</Nullable>
            <ImplicitUsings>enable</ImplicitUsings>
            <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
          </PropertyGroup>
          <ItemGroup>
            <PackageReference Include="WorkQueue.AspNetCore" Version="[{{version}}]" />
          </ItemGroup>
        </Project>
        """;

    /// <summary>Only the temporary feed and nuget.org: nothing of the machine's other sources.</summary>
    public static string NuGetConfig(string feedDirectory) => $$"""
        <?xml version="1.0" encoding="utf-8"?>
        <configuration>
          <packageSources>
            <clear />
            <add key="workqueue-test-feed" value="{{feedDirectory}}" />
            <add key="nuget.org" value="https://api.nuget.org/v3/index.json" protocolVersion="3" />
          </packageSources>
        </configuration>
        """;

    /// <summary>Stops MSBuild's search for Directory.Build.* and Directory.Packages.props above the app's folder.</summary>
    public const string EmptyMSBuildFile = "<Project />\n";

    public const string Program = $$"""
        using System.Collections.Concurrent;
        using Microsoft.AspNetCore.Builder;
        using Microsoft.AspNetCore.Diagnostics.HealthChecks;
        using Microsoft.AspNetCore.Http;
        using Microsoft.Extensions.DependencyInjection;
        using Microsoft.Extensions.Hosting;
        using WorkQueue;
        using WorkQueue.AspNetCore;

        var builder = WebApplication.CreateBuilder(args);

        builder.Services.AddSingleton<JobLog>();
        builder.Services.AddWorkQueue(o => o.Capacity = {{Capacity}})
            .AddQueue("sms", o => { o.Capacity = {{SmsCapacity}}; o.MaxWorkers = 2; });

        // No Redis here: the app starts not ready and says so on its readiness endpoint.
        builder.Services.AddRedisWarmup(o =>
        {
            o.Configuration = "127.0.0.1:1";
            o.FailureMode = RedisWarmupFailureMode.StartNotReady;
            o.Timeout = TimeSpan.FromSeconds(1);
            o.RetryInterval = TimeSpan.FromMinutes(10);
            o.ConfigureRedis = redis => redis.ConnectRetry = 1;
        });
        builder.Services.AddHealthChecks().AddWorkQueueSaturation(threshold: 0.5);

        var app = builder.Build();

        app.MapWorkQueueAdmin();
        app.MapHealthChecks("/health/ready", new HealthCheckOptions { Predicate = c => c.Tags.Contains(WorkQueueHealthCheckTags.Ready) });
        app.MapPost("/jobs/{id}", (string id, IInMemoryWorkQueue queue) =>
            queue.TryEnqueue<RecordJob, string>(id) ? Results.Accepted() : Results.StatusCode(StatusCodes.Status503ServiceUnavailable));
        app.MapGet("/jobs/done", (JobLog log) => log.Done.ToArray());

        await app.StartAsync();
        Console.WriteLine("{{ListeningLine}}" + string.Join(' ', app.Urls));
        await app.WaitForShutdownAsync();

        sealed class JobLog
        {
            public ConcurrentQueue<string> Done { get; } = new();
        }

        sealed class RecordJob(JobLog log) : IJobHandler<string>
        {
            public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
            {
                log.Done.Enqueue(payload);
                return ValueTask.CompletedTask;
            }
        }
        """;
}
