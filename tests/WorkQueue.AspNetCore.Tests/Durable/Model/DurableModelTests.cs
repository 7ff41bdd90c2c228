using System.Diagnostics;
using System.Globalization;
using WorkQueue.AspNetCore.Tests.TestSupport;

namespace WorkQueue.AspNetCore.Tests.Durable.Model;

/// <summary>
/// Model-based test of the durable protocol (issue 28): random sequences of operations run against a real redis-server
/// and a reference model (<see cref="ModelRun"/>), the invariants checked after every step (<see cref="InvariantChecker"/>).
/// A failure names its seed and step and shows the last 30 steps; replay it with <c>WORKQUEUE_MODEL_SEED</c> (one seed or
/// several, comma-separated) and <c>WORKQUEUE_MODEL_STEPS</c>. <c>WORKQUEUE_MODEL_SEEDS=N</c> runs N random seeds
/// instead of the CI set (scripts/durable-model.sh); <c>WORKQUEUE_MODEL_OPS</c> adds operations kept out of the CI mix
/// (see <see cref="ModelOps"/>).
/// </summary>
public sealed class DurableModelTests(RedisServerFixture redis, ITestOutputHelper output) : IClassFixture<RedisServerFixture>
{
    /// <summary>The CI set: a few fixed seeds, whose settings between them cover each option (see <see cref="ModelRun"/>), and one random seed.</summary>
    private static readonly int[] FixedSeeds = [1, 2, 3, 4, 5];

    private const int DefaultSteps = 700;

    [Fact]
    public async Task RandomOperations_SeededSequences_InvariantsHoldAfterEveryStep()
    {
        int steps = Env("WORKQUEUE_MODEL_STEPS") is { } s ? int.Parse(s, CultureInfo.InvariantCulture) : DefaultSteps;
        var ops = new ModelOps(Env("WORKQUEUE_MODEL_OPS")?.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries) ?? []);
        int[] seeds;
        if (Env("WORKQUEUE_MODEL_SEED") is { } replay)
        {
            seeds = [.. replay.Split(',', StringSplitOptions.RemoveEmptyEntries).Select(static x => int.Parse(x, CultureInfo.InvariantCulture))];
        }
        else if (Env("WORKQUEUE_MODEL_SEEDS") is { } many)
        {
            seeds = [.. Enumerable.Range(0, int.Parse(many, CultureInfo.InvariantCulture)).Select(static _ => Random.Shared.Next())];
        }
        else
        {
            seeds = [.. FixedSeeds, Random.Shared.Next()];
        }

        output.WriteLine($"Seeds: {string.Join(", ", seeds)}; {steps} steps each; extra operations: [{string.Join(", ", ops.Extra)}]");
        await using var connection = await DurableTestHost.ConnectAsync(redis.Server);
        var db = connection.GetDatabase();
        var total = Stopwatch.StartNew();
        var failures = new List<string>();
        foreach (int seed in seeds)
        {
            // Written before the run, so that a run that hangs or crashes still shows its seed.
            output.WriteLine($"seed {seed}: starting");
            var run = new ModelRun(db, seed, ops);
            var time = Stopwatch.StartNew();
            try
            {
                run.Run(steps);
            }
            catch (ModelFailedException ex)
            {
                // The other seeds still run: a long run reports every failing seed, not only the first.
                output.WriteLine(ex.Message);
                failures.Add(ex.Message);
                continue;
            }

            output.WriteLine($"seed {seed}: {steps} steps in {time.ElapsedMilliseconds} ms; {run.Settings}; {string.Join(", ", run.OpCounts.OrderBy(static p => p.Key, StringComparer.Ordinal).Select(static p => $"{p.Key} {p.Value}"))}");
        }

        output.WriteLine($"{seeds.Length} seeds, {seeds.Length * steps} steps in {total.ElapsedMilliseconds} ms; {failures.Count} failed");
        Assert.True(failures.Count == 0, $"{failures.Count} of {seeds.Length} seeds failed:\n\n{string.Join("\n\n", failures)}");
    }

    private static string? Env(string name) => Environment.GetEnvironmentVariable(name) is { Length: > 0 } value ? value : null;
}
