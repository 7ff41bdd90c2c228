using Microsoft.Extensions.Options;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>Validates the data annotations on <see cref="DurableQueueOptions"/> (source-generated).</summary>
[OptionsValidator]
internal sealed partial class DurableQueueOptionsValidator : IValidateOptions<DurableQueueOptions>
{
}
