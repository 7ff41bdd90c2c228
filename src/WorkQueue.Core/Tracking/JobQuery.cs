namespace WorkQueue;

/// <summary>
/// Asks <see cref="IWorkQueue.FindJobsAsync(JobQuery, CancellationToken)"/> for one page of an in-memory queue's tracked jobs: those in
/// some states, whose name or last error contains some text, after a cursor.
/// </summary>
/// <remarks>
/// A page lists the jobs still in flight (queued, scheduled, running, retrying) first, latest accepted first, then the
/// ended ones, latest ending first. A filter on ended states alone reads the queue's per-state index of ended jobs;
/// anything else (text, or a state a job in flight can be in) reads jobs one by one, at most <see cref="ScanLimit"/> per
/// page, and returns a cursor where it stopped (the page may then hold fewer than <see cref="Limit"/> jobs, or none,
/// and still have a <see cref="JobPage.Next"/>).
/// </remarks>
public sealed class JobQuery
{
    /// <summary>The largest <see cref="Limit"/>.</summary>
    public const int MaxLimit = 500;

    /// <summary>The largest <see cref="ScanLimit"/>.</summary>
    public const int MaxScanLimit = 1_000_000;

    /// <summary>The longest <see cref="NameContains"/> or <see cref="ErrorContains"/>, in characters.</summary>
    public const int MaxTextLength = 256;

    /// <summary>Gets the states to list, or <see langword="null"/> (or empty) for every state.</summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public IReadOnlyCollection<JobState>? States { get; init; }

    /// <summary>
    /// Gets text the job's <see cref="JobStatus.Name"/> (its handler type or delegate method) must contain, compared
    /// ordinally ignoring case, or <see langword="null"/> for any name.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public string? NameContains { get; init; }

    /// <summary>
    /// Gets text the job's <see cref="JobStatus.LastError"/> must contain, compared ordinally ignoring case, or
    /// <see langword="null"/> for any job (with or without an error).
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public string? ErrorContains { get; init; }

    /// <summary>
    /// Gets where to continue: a previous page's <see cref="JobPage.Next"/>, or <see langword="null"/> for the first page.
    /// </summary>
    /// <value>The default value is <see langword="null"/>.</value>
    public string? Cursor { get; init; }

    /// <summary>Gets the most jobs one page holds, from 1 to <see cref="MaxLimit"/>.</summary>
    /// <value>The default value is 50.</value>
    public int Limit { get; init; } = 50;

    /// <summary>
    /// Gets the most jobs one page reads when it cannot use the per-state index (a text filter, or jobs in flight), from
    /// 1 to <see cref="MaxScanLimit"/>, so a search over many jobs costs a bounded amount per page.
    /// </summary>
    /// <value>The default value is 100,000.</value>
    public int ScanLimit { get; init; } = 100_000;

    /// <summary>Throws if the query is not valid, naming <paramref name="paramName"/> and the property.</summary>
    internal void Validate(string paramName, bool checkCursor = true)
    {
        if (Limit is < 1 or > MaxLimit)
        {
            throw new ArgumentOutOfRangeException(paramName, Limit, $"JobQuery.Limit must be from 1 to {MaxLimit}; it was {Limit}.");
        }

        if (ScanLimit is < 1 or > MaxScanLimit)
        {
            throw new ArgumentOutOfRangeException(paramName, ScanLimit, $"JobQuery.ScanLimit must be from 1 to {MaxScanLimit}; it was {ScanLimit}.");
        }

        ValidateText(NameContains, nameof(NameContains), paramName);
        ValidateText(ErrorContains, nameof(ErrorContains), paramName);
        if (States is not null)
        {
            foreach (var state in States)
            {
                if (!Enum.IsDefined(state))
                {
                    throw new ArgumentException($"JobQuery.States holds {(int)state}, which is not a JobState.", paramName);
                }
            }
        }

        if (checkCursor && Cursor is not null && !Tracking.JobCursor.TryParse(Cursor, out _))
        {
            throw new ArgumentException($"JobQuery.Cursor '{Cursor}' is not a cursor a JobPage returned.", paramName);
        }
    }

    private static void ValidateText(string? text, string property, string paramName)
    {
        if (text is { Length: 0 or > MaxTextLength })
        {
            throw new ArgumentException($"JobQuery.{property} must be from 1 to {MaxTextLength} characters, or null; it was {text.Length}.", paramName);
        }
    }
}
