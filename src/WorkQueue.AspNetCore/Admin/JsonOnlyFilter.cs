using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Lets a state-changing admin call through only with <c>Content-Type: application/json</c>. A browser sends that
/// content type cross-origin only after a CORS preflight, which these endpoints never approve, so a cross-site form,
/// image or <c>no-cors</c> fetch cannot pause a queue or resize its pool.
/// </summary>
internal static class JsonOnlyFilter
{
    public static ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        string? contentType = context.HttpContext.Request.ContentType;
        if (MediaTypeHeaderValue.TryParse(contentType, out var mediaType)
            && mediaType.MediaType.Equals("application/json", StringComparison.OrdinalIgnoreCase))
        {
            return next(context);
        }

        string sent = string.IsNullOrEmpty(contentType) ? "no Content-Type" : $"Content-Type '{contentType}'";
        return ValueTask.FromResult<object?>(TypedResults.Problem(
            statusCode: StatusCodes.Status415UnsupportedMediaType,
            title: "Unsupported media type",
            detail: $"State-changing WorkQueue admin calls need 'Content-Type: application/json' (the request had {sent}), so that a cross-site form or image cannot make them. Send the JSON body, or {{}} to pause and resume."));
    }
}
