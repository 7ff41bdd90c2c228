using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace WorkQueue.AspNetCore.Admin;

/// <summary>
/// Puts an access check in front of endpoints (one, or every endpoint of a group), so that a request is refused before
/// anything of it is bound or read.
/// </summary>
/// <remarks>
/// An endpoint filter is not early enough: it runs inside the request delegate that <c>RequestDelegateFactory</c>
/// builds, after the handler's parameters are bound, and binding a body parameter reads and parses the body. A refused
/// client then learnt about its body first (415 for <c>text/plain</c>, 400 for invalid JSON) and the server parsed what
/// it had no business reading. A convention that wraps <see cref="EndpointBuilder.RequestDelegate"/> runs before all
/// of that: routing sets the wrapper as the endpoint's delegate, and it calls the built one only for an accepted request
/// (aspnetcore <c>RouteEndpointDataSource</c> keeps a wrapper set by a convention). Authorization middleware still runs
/// before it.
/// </remarks>
internal static class AdminRequestGate
{
    /// <summary>Refuses, with 403 and a problem saying why, every request to <paramref name="endpoints"/> for which <paramref name="findRefusal"/> gives a reason.</summary>
    /// <param name="endpoints">The endpoint, or the group of endpoints, to guard.</param>
    /// <param name="findRefusal">Gives why a request must be refused, or <see langword="null"/> to let it through. It must not read the body.</param>
    public static void Add(IEndpointConventionBuilder endpoints, Func<HttpContext, string?> findRefusal) =>
        endpoints.Add(endpoint =>
        {
            var next = endpoint.RequestDelegate
                ?? throw new InvalidOperationException($"The endpoint '{endpoint.DisplayName}' has no request delegate to guard.");
            endpoint.RequestDelegate = context => findRefusal(context) is { } reason
                ? TypedResults.Problem(statusCode: StatusCodes.Status403Forbidden, title: "Forbidden", detail: reason).ExecuteAsync(context)
                : next(context);
        });
}
