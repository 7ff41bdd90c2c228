using System.Text.Json;
using System.Text.Json.Serialization;

namespace WorkQueue.AotSmoke;

/// <summary>The durable payload's JSON contract, generated at build time: no reflection in the published app.</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(Payment))]
internal sealed partial class SmokeJsonContext : JsonSerializerContext;
