using WorkQueue.Core.Tests.TestSupport;

namespace WorkQueue.Core.Tests.Workers;

public sealed class WorkerPoolTests
{
    [Fact]
    public async Task SetWorkerCount_GrowWhileBusy_StartsWorkersNow()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 8; o.AutoScale.Enabled = false; });
        using var gate = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        for (int i = 0; i < 6; i++)
        {
            Assert.True(queue.TryEnqueue(gate.Block));
        }

        await Wait.ForAsync(gate.EnteredAsync(1), "the first job");
        control.SetWorkerCount(4);

        await Wait.ForAsync(gate.EnteredAsync(4), "four jobs running at once");
        var snapshot = control.GetSnapshot();
        Assert.Equal((4, 4, WorkerMode.Manual), (snapshot.Workers, snapshot.BusyWorkers, snapshot.Mode));
        Assert.Equal(4, gate.MaxInside);
        gate.Open();
    }

    [Fact]
    public async Task SetWorkerCount_ShrinkWhileBusy_RetiresWorkersAsTheirJobsEnd()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 4; o.MaxWorkers = 8; });
        using var first = new Gate();
        var queue = harness.Queue;
        var control = harness.Control;
        for (int i = 0; i < 4; i++)
        {
            Assert.True(queue.TryEnqueue(first.Block));
        }

        await Wait.ForAsync(first.EnteredAsync(4), "four busy workers");
        control.SetWorkerCount(1);
        Assert.Equal(4, control.GetSnapshot().Workers);

        first.Open();
        await Wait.UntilAsync(() => control.GetSnapshot().Workers == 1, "three workers retire after their jobs");

        using var second = new Gate();
        second.Open();
        var done = new CountdownSignal(20);
        for (int i = 0; i < 20; i++)
        {
            Assert.True(queue.TryEnqueue(ct => { second.Block(ct); done.Signal(); }));
        }

        await Wait.ForAsync(done.Task, "20 jobs on one worker");
        Assert.Equal(1, second.MaxInside);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-3)]
    [InlineData(9)]
    public async Task SetWorkerCount_OutOfRange_ThrowsNamingCount(int count)
    {
        await using var harness = QueueHarness.Start(o => o.MaxWorkers = 8);

        var ex = Assert.Throws<ArgumentOutOfRangeException>(() => harness.Control.SetWorkerCount(count));

        Assert.Equal("count", ex.ParamName);
        Assert.Equal(WorkerMode.Auto, harness.Control.GetSnapshot().Mode);
    }

    [Fact]
    public async Task SetWorkerCount_ManualCount_IsNotRetiredWhenIdle()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 4; o.IdleTimeout = TimeSpan.FromMilliseconds(20); });
        var queue = harness.Queue;
        var control = harness.Control;

        control.SetWorkerCount(3);
        await Wait.UntilAsync(() => control.GetSnapshot().Workers == 3, "three workers start");

        // Idle retirement would act after 20 ms; give it many times that, then check nothing retired.
        var probe = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await Task.Delay(300);
        Assert.True(queue.TryEnqueue(_ => probe.SetResult()));
        await Wait.ForAsync(probe.Task, "a probe job");
        Assert.Equal(3, control.GetSnapshot().Workers);
    }

    [Fact]
    public async Task IdleTimeout_AutoMode_RetiresWorkersAboveMinimum()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 1; o.MaxWorkers = 4; o.IdleTimeout = TimeSpan.FromMilliseconds(50); });
        var queue = harness.Queue;
        var control = harness.Control;
        control.SetWorkerCount(4);
        await Wait.UntilAsync(() => control.GetSnapshot().Workers == 4, "four workers start");

        control.UseAutoScaling();

        await Wait.UntilAsync(() => control.GetSnapshot().Workers == 1, "idle workers retire down to MinWorkers");
        var snapshot = control.GetSnapshot();
        Assert.Equal((WorkerMode.Auto, 1), (snapshot.Mode, snapshot.TargetWorkers));
        var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(queue.TryEnqueue(_ => ran.SetResult()));
        await Wait.ForAsync(ran.Task, "a job after retirement");
    }

    [Fact]
    public async Task Pause_JobsAcceptedButNotStarted_UntilResume()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; });
        var queue = harness.Queue;
        var control = harness.Control;
        control.Pause();
        var done = new CountdownSignal(10);
        int started = 0;
        for (int i = 0; i < 10; i++)
        {
            Assert.True(queue.TryEnqueue(_ => { Interlocked.Increment(ref started); done.Signal(); }));
        }

        // While paused the jobs must stay queued; this window only gives a wrongly started job time to show up.
        await Task.Delay(200);
        Assert.Equal(0, Volatile.Read(ref started));
        Assert.True(control.GetSnapshot().IsPaused);
        Assert.Equal(10, control.GetSnapshot().Depth);

        control.Resume();

        await Wait.ForAsync(done.Task, "the ten jobs after resume");
        Assert.False(control.GetSnapshot().IsPaused);
    }

    [Fact]
    public async Task Workers_AsyncJobs_NeverMoreInFlightThanWorkers()
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 2; o.MaxWorkers = 2; });
        int inside = 0, maxInside = 0;
        var done = new CountdownSignal(30);
        for (int i = 0; i < 30; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(async ct =>
            {
                int now = Interlocked.Increment(ref inside);
                InterlockedMax(ref maxInside, now);
                await Task.Delay(5, ct);
                await Task.Yield();
                Interlocked.Decrement(ref inside);
                done.Signal();
            }));
        }

        await Wait.ForAsync(done.Task, "30 async jobs");
        Assert.Equal(2, maxInside);
    }

    [Theory]
    [InlineData(1, false)]
    [InlineData(8, false)]
    [InlineData(1, true)]
    [InlineData(8, true)]
    public async Task TryEnqueue_IdlePool_EveryLoneJobWakesAWorker(int workers, bool spin)
    {
        // Each job arrives at an idle pool, so it is the leader hand-off alone that must wake a worker every time.
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = workers; o.MaxWorkers = workers; o.SpinBeforeParking = spin; });
        for (int i = 0; i < 2000; i++)
        {
            var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(harness.Queue.TryEnqueue(_ => ran.SetResult()));
            await Wait.ForAsync(ran.Task, $"lone job {i}");
        }

        Assert.Equal(workers, harness.Control.GetSnapshot().Workers);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task IdlePool_SixteenWorkers_NoWorkerWakesWhileIdle(bool spin)
    {
        await using var harness = QueueHarness.Start(o => { o.MinWorkers = 16; o.MaxWorkers = 16; o.SpinBeforeParking = spin; });
        var pool = harness.Runtime.Pool;
        var done = new CountdownSignal(100);
        for (int i = 0; i < 100; i++)
        {
            Assert.True(harness.Queue.TryEnqueue(_ => done.Signal()));
        }

        await Wait.ForAsync(done.Task, "100 jobs");
        await Wait.UntilAsync(() => harness.Control.GetSnapshot().BusyWorkers == 0, "every worker is idle");

        // Let the last lead hand-offs settle (the counter stops moving; on a loaded machine that can take a while),
        // then no worker may wake at all for half a second: no timers, no polling, no spinning.
        long settled = pool.Waits;
        await Wait.UntilAsync(
            () =>
            {
                Thread.Sleep(100);
                long now = pool.Waits;
                bool quiet = now == settled;
                settled = now;
                return quiet;
            },
            "the workers stop waking after the last job");
        long before = pool.Waits;
        await Task.Delay(500);
        long after = pool.Waits;

        Assert.Equal(16, harness.Control.GetSnapshot().Workers);
        Assert.Equal(before, after);
    }

    [Theory]
    [InlineData(2, false)]
    [InlineData(8, false)]
    [InlineData(8, true)]
    public async Task Enqueue_IdlePool_WakesExactlyOneThread(int workers, bool spin)
    {
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = workers;
            o.MaxWorkers = workers;
            o.AutoScale.Enabled = false;
            o.SpinBeforeParking = spin;
        });
        var pool = harness.Runtime.Pool;
        for (int i = 0; i < 20; i++)
        {
            await Wait.UntilAsync(() => pool.SleepingThreads == workers, "every worker asleep");
            long before = pool.WakeUps;
            var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(harness.Queue.TryEnqueue(_ => ran.SetResult()));
            await Wait.ForAsync(ran.Task, $"job {i}");
            await Wait.UntilAsync(() => pool.SleepingThreads == workers, "every worker asleep again");

            // The thread that runs the job is the only one woken: nobody wakes just to wait on the channel.
            Assert.Equal(1, pool.WakeUps - before);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Enqueue_ThousandSequentialJobsOnAnIdlePool_CostAtMostAboutOneWakeUpEach(bool spin)
    {
        const int Jobs = 1_000;
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = 4;
            o.MaxWorkers = 4;
            o.AutoScale.Enabled = false;
            o.SpinBeforeParking = spin;
        });
        var pool = harness.Runtime.Pool;
        await Wait.UntilAsync(() => pool.SleepingThreads == 4, "every worker asleep");
        long before = pool.WakeUps;
        for (int i = 0; i < Jobs; i++)
        {
            var ran = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(harness.Queue.TryEnqueue(_ => ran.SetResult()));
            await Wait.ForAsync(ran.Task, $"job {i}");
        }

        await Wait.UntilAsync(() => pool.SleepingThreads == 4, "every worker asleep again");
        long wakeUps = pool.WakeUps - before;
        Assert.True(wakeUps <= Jobs + 20, $"{Jobs} jobs run one after another woke threads {wakeUps} times.");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Enqueue_SecondJobWhileTheWokenThreadStartsTheFirst_GetsAThreadOfItsOwn(bool spin)
    {
        // The thread woken for the first job no longer hands the lead to another before running it; a second job
        // written meanwhile must still wake a parked thread (the writer's or the taker's wake), not wait for the first.
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = 3;
            o.MaxWorkers = 3;
            o.AutoScale.Enabled = false;
            o.SpinBeforeParking = spin;
        });
        var pool = harness.Runtime.Pool;
        for (int i = 0; i < 100; i++)
        {
            if (i % 2 == 0)
            {
                await Wait.UntilAsync(() => pool.SleepingThreads == 3, "every worker asleep");
            }

            var second = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var first = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(harness.Queue.TryEnqueue(_ => second.Task.Wait(Wait.Generous)));
            Assert.True(harness.Queue.TryEnqueue(_ => second.TrySetResult()));
            await Wait.ForAsync(second.Task, $"second job of round {i} while the first one holds its thread");
        }
    }

    [Fact]
    public async Task Enqueue_ManyProducersWhileResizingPausingAndThrowing_EveryJobRuns()
    {
        const int Producers = 4;
        const int PerProducer = 3_000;
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = 2;
            o.MaxWorkers = 6;
            o.AutoScale.Enabled = false;
            o.Capacity = 256;
            o.FullMode = QueueFullMode.Wait;
            o.Retry.MaxAttempts = 2;
            o.Retry.BaseDelay = TimeSpan.FromMilliseconds(1);
            o.Retry.UseJitter = false;
        });
        var queue = harness.Queue;
        var control = harness.Control;
        var done = new CountdownSignal(Producers * PerProducer);
        using var stop = new CancellationTokenSource();
        var churn = Task.Run(async () =>
        {
            int n = 0;
            while (!stop.IsCancellationRequested)
            {
                control.SetWorkerCount(1 + (n % 6));
                if (n % 5 == 0)
                {
                    control.Pause();
                    await Task.Yield();
                    control.Resume();
                }

                n++;
                await Task.Delay(1);
            }
        });

        var producers = Enumerable.Range(0, Producers).Select(p => Task.Run(async () =>
        {
            for (int i = 0; i < PerProducer; i++)
            {
                switch (i % 4)
                {
                    case 0:
                        // Throws on its first attempt; the retry comes due through the pool's ready work, not the channel.
                        int attempts = 0;
                        await queue.EnqueueAsync(_ =>
                        {
                            if (Interlocked.Increment(ref attempts) == 1)
                            {
                                throw new InvalidOperationException("by design");
                            }

                            done.Signal();
                        });
                        break;
                    case 1:
                        await queue.EnqueueAsync(async _ => { await Task.Yield(); done.Signal(); });
                        break;
                    default:
                        await queue.EnqueueAsync(_ => done.Signal());
                        break;
                }
            }
        })).ToArray();

        await Wait.ForAsync(Task.WhenAll(producers), "every producer's enqueues");
        await stop.CancelAsync();
        await Wait.ForAsync(churn, "the resizing and pausing to stop");
        control.Resume();
        await Wait.ForAsync(done.Task, "every job");

        // After the churn a lone job on a quiet pool still finds a thread.
        await Wait.UntilAsync(() => control.GetSnapshot().RunningJobs == 0, "the pool to go quiet");
        var lone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Assert.True(queue.TryEnqueue(_ => lone.SetResult()));
        await Wait.ForAsync(lone.Task, "a lone job after the churn");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Enqueue_SmallBurstsFromSeveralProducersOntoAnIdlingPool_EveryJobOfABurstGetsAThread(bool spin)
    {
        // Each burst has no more jobs than threads, and each job holds its thread (or, async, its slot) until every job
        // of its burst started: a job left waiting for a running one to end (a missed wake-up) stalls the burst. The
        // pool goes back towards idle hundreds of times, the leader, the writers and the takers racing each time.
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = 2;
            o.MaxWorkers = 6;
            o.AutoScale.Enabled = false;
            o.SpinBeforeParking = spin;
        });
        var queue = harness.Queue;
        var control = harness.Control;
        var random = new Random(21);
        int workers = 2;
        for (int round = 0; round < 300; round++)
        {
            if (round % 10 == 0)
            {
                workers = 2 + random.Next(5);
                control.SetWorkerCount(workers);
            }

            bool pause = round % 7 == 3;
            if (pause)
            {
                control.Pause();
            }

            int jobs = 1 + random.Next(workers);
            int producers = 1 + random.Next(Math.Min(3, jobs));
            var started = new CountdownSignal(jobs);
            var done = new CountdownSignal(jobs);
            int stalled = 0;
            void Start()
            {
                started.Signal();
                if (!started.Task.Wait(Wait.Generous))
                {
                    Interlocked.Increment(ref stalled);
                }
            }

            using var go = new Barrier(producers);
            var writers = Enumerable.Range(0, producers).Select(p => Task.Run(() =>
            {
                go.SignalAndWait(Wait.Generous);
                for (int i = p; i < jobs; i += producers)
                {
                    switch (i % 3)
                    {
                        case 0:
                            Assert.True(queue.TryEnqueue(_ =>
                            {
                                Start();
                                done.Signal();
                                throw new InvalidOperationException("by design");
                            }));
                            break;
                        case 1:
                            Assert.True(queue.TryEnqueue(async _ =>
                            {
                                started.Signal();
                                await started.Task.WaitAsync(Wait.Generous);
                                done.Signal();
                            }));
                            break;
                        default:
                            Assert.True(queue.TryEnqueue(_ =>
                            {
                                Start();
                                done.Signal();
                            }));
                            break;
                    }
                }
            })).ToArray();

            await Wait.ForAsync(Task.WhenAll(writers), $"the writers of round {round}");
            if (pause)
            {
                control.Resume();
            }

            await Wait.ForAsync(started.Task, $"every job of round {round} started together ({jobs} jobs, {workers} threads)");
            await Wait.ForAsync(done.Task, $"every job of round {round} ended");
            Assert.Equal(0, stalled);
        }
    }

    [Theory]
    [InlineData(false, false)]
    [InlineData(false, true)]
    [InlineData(true, false)]
    [InlineData(true, true)]
    public async Task Enqueue_JobsThatCannotStart_WakeNoThreadAndRunOnceTheyCan(bool paused, bool spin)
    {
        // Paused, or every slot held by a yielded job: nobody leads and a writer must wake nobody (a woken thread could
        // only park again), yet every job runs once jobs may start (resume, or the slot's job ending on another thread).
        await using var harness = QueueHarness.Start(o =>
        {
            o.MinWorkers = 3;
            o.MaxWorkers = 3;
            o.MaxConcurrency = 1;
            o.AutoScale.Enabled = false;
            o.SpinBeforeParking = spin;
        });
        var pool = harness.Runtime.Pool;
        var queue = harness.Queue;
        var holder = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        if (paused)
        {
            harness.Control.Pause();
        }
        else
        {
            var holding = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Assert.True(queue.TryEnqueue(async _ =>
            {
                holding.TrySetResult();
                await holder.Task;
            }));
            await Wait.ForAsync(holding.Task, "the job holding the only slot");
        }

        await Wait.UntilAsync(() => pool.SleepingThreads == 3, "every worker asleep");
        long before = pool.WakeUps;
        var done = new CountdownSignal(50);
        for (int i = 0; i < 50; i++)
        {
            Assert.True(queue.TryEnqueue(_ => done.Signal()));
        }

        await Wait.UntilAsync(() => pool.SleepingThreads == 3, "every worker asleep after the writes");
        long wakeUps = pool.WakeUps - before;
        Assert.False(done.Task.IsCompleted);
        if (paused)
        {
            harness.Control.Resume();
        }
        else
        {
            holder.SetResult();
        }

        await Wait.ForAsync(done.Task, "the 50 jobs once they may start");
        // A thread that began to lead before the slot was taken is woken once by the first write and steps down; a
        // writer waking a follower for a job that cannot start wakes all three threads at least (50 at most).
        Assert.True(wakeUps <= 1, $"50 jobs that could not start woke threads {wakeUps} times");
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int current;
        while (value > (current = Volatile.Read(ref target)) && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }
}
