using Microsoft.Extensions.Options;

namespace WorkQueue.Validation;

/// <summary>Validates the rules that span several settings, naming each setting and its value.</summary>
internal sealed class WorkQueueOptionsRulesValidator : IValidateOptions<WorkQueueOptions>
{
    /// <summary>The longest due time a .NET timer accepts (about 49.7 days).</summary>
    private static readonly TimeSpan MaxTimer = TimeSpan.FromMilliseconds(uint.MaxValue - 1);

    public ValidateOptionsResult Validate(string? name, WorkQueueOptions options)
    {
        var builder = new ValidateOptionsResultBuilder();
        string queue = $"WorkQueue queue '{name}'";
        if (options.MinWorkers > options.MaxWorkers)
        {
            builder.AddError($"{queue}: MinWorkers ({options.MinWorkers}) must be less than or equal to MaxWorkers ({options.MaxWorkers}).", nameof(options.MinWorkers));
        }

        if (options.JobTimeout is { } timeout && (timeout <= TimeSpan.Zero || timeout > MaxTimer))
        {
            builder.AddError($"{queue}: JobTimeout ({timeout}) must be positive and at most {MaxTimer} (the longest timer .NET supports), or null for no limit.", nameof(options.JobTimeout));
        }

        if (options.EnqueueTimeout != Timeout.InfiniteTimeSpan && (options.EnqueueTimeout < TimeSpan.Zero || options.EnqueueTimeout > MaxTimer))
        {
            builder.AddError($"{queue}: EnqueueTimeout ({options.EnqueueTimeout}) must be from zero to {MaxTimer} (the longest timer .NET supports), or Timeout.InfiniteTimeSpan.", nameof(options.EnqueueTimeout));
        }

        if (options.Retry.BaseDelay > options.Retry.MaxDelay)
        {
            builder.AddError($"{queue}: Retry.BaseDelay ({options.Retry.BaseDelay}) must be less than or equal to Retry.MaxDelay ({options.Retry.MaxDelay}).", "Retry.BaseDelay");
        }

        if (!Enum.IsDefined(options.FullMode))
        {
            builder.AddError($"{queue}: FullMode ({options.FullMode}) must be Wait, Reject or DropOldest.", nameof(options.FullMode));
        }

        return builder.Build();
    }
}
