namespace WorkQueue.DurableChaos;

/// <summary>
/// The multi-process chaos proof of durable queues.
/// <para>
/// <c>controller --jobs N [--workers 3] [--kill-interval-ms 3000] [--min-kills 0] [--restart-redis] [--redis-down-ms 1000]
/// [--redis-port PORT] [--producers 8] [--rate JOBS_PER_S [--bursts]] [--claim-timeout-ms 2000] [--heartbeat-ms 500] [--timeout-s 600]
/// [--prefix chaos] [--keep-dir] [--sentinel [--replica-acks N] | --cluster [--migrate-batch 10]]</c> runs a whole experiment against its own redis-server and prints <c>chaos.key=value</c>
/// lines (see <see cref="ChaosController"/>); exit code 0 when nothing was lost and the run did what was asked, 1 when
/// acknowledged jobs were lost, 2 when the run fell short (timed out, too few kills, a worker crashed).
/// </para>
/// <para>
/// <c>recurring --seconds N [--workers 3] [--kill-interval-ms 3000] [--claim-timeout-ms 2000] [--heartbeat-ms 500]
/// [--timeout-s 600] [--prefix chaos] [--keep-dir]</c> runs the recurring-job proof (see <see cref="RecurringChaosController"/>).
/// </para>
/// <para><c>worker --redis HOST:PORT --prefix P [--claim-timeout-ms 2000] [--heartbeat-ms 500]</c> is one of its workers.</para>
/// </summary>
internal static class Program
{
    private static readonly HashSet<string> Flags = ["restart-redis", "keep-dir", "bursts", "recurring", "sentinel", "cluster"];

    private static async Task<int> Main(string[] args)
    {
        try
        {
            switch (args.FirstOrDefault())
            {
                case "worker":
                    return await WorkerCommand.RunAsync(new Arguments(args.Skip(1), Flags));
                case "controller":
                    var settings = ControllerSettings.Read(new Arguments(args.Skip(1), Flags));
                    await using (var controller = new ChaosController(settings))
                    {
                        return await controller.RunAsync();
                    }

                case "recurring":
                    await using (var recurring = new RecurringChaosController(RecurringChaosSettings.Read(new Arguments(args.Skip(1), Flags))))
                    {
                        return await recurring.RunAsync();
                    }

                default:
                    Console.Error.WriteLine("usage: WorkQueue.DurableChaos controller --jobs N [options] | recurring --seconds N [options] | worker --redis HOST:PORT --prefix P [options]");
                    return 2;
            }
        }
        catch (ArgumentException ex)
        {
            Console.Error.WriteLine(ex.Message);
            return 2;
        }
    }
}
