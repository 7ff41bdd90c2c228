using System.Globalization;
using WorkQueue.Benchmarks.HangfireRedis;

// A line protocol on stdin/stdout, one reply line per command (see HangfireRedisProcess.cs in WorkQueue.Benchmarks):
//   start <redis-configuration> <workers>  -> "ready"            storage, client and a server with <workers> workers
//   start <redis-configuration> <workers> <schedule-polling-ms>
//                                          -> "ready"            the same, with that SchedulePollingInterval (0: back to back)
//   schedule <id> <delay-ticks> <timeout-s>
//                                          -> "late <ms>"        one delayed job due <delay-ticks> (100 ns) from now; the
//                                                                reply comes once it has started, with its lateness (the
//                                                                job's first line minus its due time, this process's clock)
//   batch <jobs> <producers>               -> "done <ms>"        <producers> threads enqueue <jobs> jobs in all; the
//                                                                reply comes once every one of them has run
//   wake                                   -> "started <us>"     one job on an idle server: enqueue -> job start
//   workers                                -> "workers <n>"      workers the running servers registered in Redis
//   stop                                   -> "stopped"          stops the server and exits
// A failure replies "error <message>" and exits with code 1. Nothing else is written to stdout.
using var agent = new HangfireRedisAgent();
while (Console.In.ReadLine() is { } line)
{
    string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
    try
    {
        string reply = words switch
        {
            ["start", var configuration, var workers] => agent.Start(configuration, Parse(workers)),
            ["start", var configuration, var workers, var pollingMs] => agent.Start(configuration, Parse(workers), TimeSpan.FromMilliseconds(Parse(pollingMs))),
            ["schedule", var id, var delayTicks, var timeoutSeconds] => agent.Schedule(Parse(id), TimeSpan.FromTicks(long.Parse(delayTicks, NumberStyles.None, CultureInfo.InvariantCulture)), TimeSpan.FromSeconds(Parse(timeoutSeconds))),
            ["batch", var jobs, var producers] => agent.RunBatch(Parse(jobs), Parse(producers)),
            ["wake"] => agent.WakeUp(),
            ["workers"] => agent.RegisteredWorkers(),
            ["stop"] => "stopped",
            _ => throw new ArgumentException($"Unknown command: '{line}'."),
        };
        Console.Out.WriteLine(reply);
        Console.Out.Flush();
        if (words[0] == "stop")
        {
            return 0;
        }
    }
    catch (Exception ex)
    {
        Console.Out.WriteLine($"error {ex.GetType().Name}: {ex.Message.ReplaceLineEndings(" ")}");
        Console.Out.Flush();
        return 1;
    }
}

return 0;

static int Parse(string value) => int.Parse(value, NumberStyles.None, CultureInfo.InvariantCulture);
