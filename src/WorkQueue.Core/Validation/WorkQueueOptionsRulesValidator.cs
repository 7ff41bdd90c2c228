using Microsoft.Extensions.Options;

namespace WorkQueue.Validation;

/// <summary>Validates the rules that span several settings, naming each setting and its value.</summary>
internal sealed class WorkQueueOptionsRulesValidator : IValidateOptions<WorkQueueOptions>
{
    public ValidateOptionsResult Validate(string? name, WorkQueueOptions options)
    {
        var builder = new ValidateOptionsResultBuilder();
        string queue = $"WorkQueue queue '{name}'";
        if (options.MinWorkers > options.MaxWorkers)
        {
            builder.AddError($"{queue}: MinWorkers ({options.MinWorkers}) must be less than or equal to MaxWorkers ({options.MaxWorkers}).", nameof(options.MinWorkers));
        }

        if (options.JobTimeout is { } timeout && timeout <= TimeSpan.Zero)
        {
            builder.AddError($"{queue}: JobTimeout ({timeout}) must be positive, or null for no limit.", nameof(options.JobTimeout));
        }

        if (options.EnqueueTimeout != Timeout.InfiniteTimeSpan && options.EnqueueTimeout < TimeSpan.Zero)
        {
            builder.AddError($"{queue}: EnqueueTimeout ({options.EnqueueTimeout}) must be zero or more, or Timeout.InfiniteTimeSpan.", nameof(options.EnqueueTimeout));
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
