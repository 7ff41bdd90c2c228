using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>Validates the data annotations on <see cref="RedisWarmupOptions"/> (source-generated).</summary>
[OptionsValidator]
internal sealed partial class RedisWarmupOptionsValidator : IValidateOptions<RedisWarmupOptions>
{
}
