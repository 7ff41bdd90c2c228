using System.Text.Json;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Marks the endpoints mapped by <c>MapWorkQueueAdmin</c>, so a startup check can find them among all endpoints, and
/// carries the settings their handlers read.
/// </summary>
/// <param name="Prefix">The prefix they were mapped under.</param>
/// <param name="ShowPayloads">Whether job routes include payloads (<see cref="WorkQueueAdminOptions.ShowPayloads"/>).</param>
/// <param name="MaxPayloadLength">The most payload characters they return (<see cref="WorkQueueAdminOptions.MaxPayloadLength"/>).</param>
/// <param name="PayloadJson">The app's HTTP JSON options, which payloads are written with (null: shown by <c>ToString()</c>).</param>
internal sealed record AdminEndpointMetadata(string Prefix, bool ShowPayloads = false, int MaxPayloadLength = 4096, JsonSerializerOptions? PayloadJson = null);
