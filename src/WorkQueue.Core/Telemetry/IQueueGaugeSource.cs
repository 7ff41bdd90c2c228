namespace WorkQueue.Telemetry;

/// <summary>What the observable gauges read from a queue.</summary>
internal interface IQueueGaugeSource
{
    string Name { get; }

    KeyValuePair<string, object?> MetricTag { get; }

    int Depth { get; }

    int Capacity { get; }

    int Scheduled { get; }

    int CurrentWorkers { get; }

    int BusyWorkers { get; }

    int RunningJobs { get; }

    int WaitingContinuations { get; }
}
