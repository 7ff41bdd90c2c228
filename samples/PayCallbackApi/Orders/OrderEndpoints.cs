namespace PayCallbackApi.Orders;

/// <summary><c>GET /api/orders/{orderId}</c>.</summary>
internal static class OrderEndpoints
{
    public static async Task<IResult> GetAsync(string orderId, OrderStore orders) =>
        await orders.GetOrderAsync(orderId) is { } order
            ? TypedResults.Ok(order)
            : TypedResults.Problem(statusCode: StatusCodes.Status404NotFound, title: "Unknown order", detail: $"No order '{orderId}'.");
}
