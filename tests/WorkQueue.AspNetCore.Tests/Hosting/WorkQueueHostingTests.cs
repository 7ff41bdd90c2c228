using System.Net;
using System.Net.Http.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Hosting;

public sealed class WorkQueueHostingTests
{
    [Fact]
    public async Task HostStop_QueuedJobs_AreDrainedBeforeStopReturns()
    {
        int ran = 0;
        var app = await TestApp.StartAsync(
            b => b.Services.AddWorkQueue(o => { o.MinWorkers = 1; o.MaxWorkers = 1; }),
            web => web.MapPost("/work", (IInMemoryWorkQueue queue) =>
                queue.TryEnqueue(async ct => { await Task.Delay(10, ct); Interlocked.Increment(ref ran); }) ? Results.Accepted() : Results.StatusCode(503)));
        for (int i = 0; i < 30; i++)
        {
            using var response = await app.Client.PostAsync("/work", null);
            Assert.Equal(HttpStatusCode.Accepted, response.StatusCode);
        }

        var queue = app.Services.GetRequiredService<IWorkQueue>();
        var control = app.Services.GetRequiredService<IWorkQueueProvider>().Queues.Single(q => q.Name == queue.Name);
        await app.DisposeAsync();

        Assert.Equal(30, ran);
        Assert.False(control.GetSnapshot().IsAccepting);
    }

    [Fact]
    public async Task ScopedHandler_EnqueuedFromRequest_GetsItsOwnScopeAfterTheRequestScopeIsGone()
    {
        var jobDone = new TaskCompletionSource<(Guid JobScope, bool DisposedDuringJob)>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var gate = new Gate();
        await using var app = await TestApp.StartAsync(
            b =>
            {
                b.Services.AddWorkQueue();
                b.Services.AddScoped<ScopedThing>();
                b.Services.AddSingleton(jobDone);
                b.Services.AddSingleton(gate);
                b.Services.AddScoped<ScopedThingHandler>();
            },
            web => web.MapPost("/work", (IInMemoryWorkQueue queue, ScopedThing requestThing) =>
            {
                Assert.True(queue.TryEnqueue<ScopedThingHandler, string>("payload"));
                return Results.Ok(requestThing.Id);
            }));

        var requestScopeId = await (await app.Client.PostAsync("/work", null)).Content.ReadFromJsonAsync<Guid>();
        gate.Open();

        var (jobScopeId, disposedDuringJob) = await Wait.ForAsync(jobDone.Task, "the scoped job");
        Assert.NotEqual(requestScopeId, jobScopeId);
        Assert.False(disposedDuringJob);
    }

    internal sealed class ScopedThing : IDisposable
    {
        public Guid Id { get; } = Guid.NewGuid();

        public bool Disposed { get; private set; }

        public void Dispose() => Disposed = true;
    }

    internal sealed class ScopedThingHandler(ScopedThing thing, Gate gate, TaskCompletionSource<(Guid, bool)> done) : IJobHandler<string>
    {
        public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
        {
            // Runs after the request has completed and its scope was disposed.
            gate.Block(cancellationToken);
            done.SetResult((thing.Id, thing.Disposed));
            return default;
        }
    }
}
