using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>Validates the rules that span several durable-queue settings, naming each setting and its value.</summary>
internal sealed class DurableQueueOptionsRulesValidator : IValidateOptions<DurableQueueOptions>
{
    public ValidateOptionsResult Validate(string? name, DurableQueueOptions options)
    {
        if (options.HeartbeatInterval * 2 > options.ClaimTimeout)
        {
            return ValidateOptionsResult.Fail(
                $"Durable queue '{name}': HeartbeatInterval ({options.HeartbeatInterval}) must be at most half of ClaimTimeout ({options.ClaimTimeout}), " +
                "or a live consumer's jobs could be reclaimed between two heartbeats.");
        }

        return ValidateOptionsResult.Success;
    }
}
