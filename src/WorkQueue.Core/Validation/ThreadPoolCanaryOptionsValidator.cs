using Microsoft.Extensions.Options;

namespace WorkQueue.Validation;

/// <summary>Validates the data annotations on <see cref="ThreadPoolCanaryOptions"/> (source-generated).</summary>
[OptionsValidator]
internal sealed partial class ThreadPoolCanaryOptionsValidator : IValidateOptions<ThreadPoolCanaryOptions>
{
}
