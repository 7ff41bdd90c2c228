using Microsoft.Extensions.Options;

namespace WorkQueue.Validation;

/// <summary>Validates the data annotations on <see cref="WorkQueueOptions"/> (source-generated).</summary>
[OptionsValidator]
internal sealed partial class WorkQueueOptionsValidator : IValidateOptions<WorkQueueOptions>
{
}
