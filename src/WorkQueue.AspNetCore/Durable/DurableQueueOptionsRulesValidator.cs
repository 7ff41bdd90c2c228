using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>Validates the rules that span several durable-queue settings, naming each setting and its value.</summary>
internal sealed class DurableQueueOptionsRulesValidator : IValidateOptions<DurableQueueOptions>
{
    public ValidateOptionsResult Validate(string? name, DurableQueueOptions options)
    {
        if (options.HeartbeatInterval * 3 > options.ClaimTimeout)
        {
            return ValidateOptionsResult.Fail(
                $"Durable queue '{name}': HeartbeatInterval ({options.HeartbeatInterval}) must be at most a third of ClaimTimeout ({options.ClaimTimeout}), " +
                "so that a live consumer whose heartbeat fails once still refreshes its jobs' claims before others reclaim them.");
        }

        if (options.UnknownJobTypeTimeout is { } unknownTypeTimeout && unknownTypeTimeout <= options.HeartbeatInterval * 2)
        {
            return ValidateOptionsResult.Fail(
                $"Durable queue '{name}': UnknownJobTypeTimeout ({options.UnknownJobTypeTimeout}) must be longer than twice HeartbeatInterval ({options.HeartbeatInterval}), " +
                "so that a live consumer that runs a job type, and says so with each heartbeat, never looks gone.");
        }

        return ValidateOptionsResult.Success;
    }
}
