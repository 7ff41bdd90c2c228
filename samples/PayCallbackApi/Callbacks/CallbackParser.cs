using System.Globalization;
using System.Text.Json;

namespace PayCallbackApi.Callbacks;

/// <summary>Parses a callback body and names the first field that is wrong.</summary>
internal static class CallbackParser
{
    public static bool TryParse(ReadOnlySpan<byte> body, out PaymentCallback? callback, out string field, out string error)
    {
        callback = null;
        field = "body";
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(body.ToArray());
        }
        catch (JsonException ex)
        {
            error = $"The body is not valid JSON: {ex.Message}";
            return false;
        }

        using (document)
        {
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                error = "The body must be a JSON object.";
                return false;
            }

            // The body is what the gateway signed: a key given twice makes it mean two things (which one counts depends on
            // the reader), so it is refused rather than read one way.
            var seen = new HashSet<string>(StringComparer.Ordinal);
            foreach (var property in root.EnumerateObject())
            {
                if (!seen.Add(property.Name))
                {
                    field = property.Name;
                    error = $"\"{property.Name}\" appears more than once; each field must appear once.";
                    return false;
                }
            }

            if (!TryId(root, field = "orderId", out var orderId, out error)
                || !TryId(root, field = "paymentId", out var paymentId, out error))
            {
                return false;
            }

            field = "amount";
            if (!root.TryGetProperty("amount", out var amountElement))
            {
                error = "\"amount\" is required.";
                return false;
            }

            if (amountElement.ValueKind != JsonValueKind.Number || !amountElement.TryGetDecimal(out var amount))
            {
                error = "\"amount\" must be a number.";
                return false;
            }

            if (amount <= 0)
            {
                error = $"\"amount\" must be positive; it was {amount.ToString(CultureInfo.InvariantCulture)}.";
                return false;
            }

            if (!TryString(root, field = "currency", out var currency, out error))
            {
                return false;
            }

            if (currency.Length != 3 || !currency.All(char.IsAsciiLetterUpper))
            {
                error = "\"currency\" must be a three-letter ISO 4217 code such as \"CNY\".";
                return false;
            }

            if (!TryString(root, field = "status", out var statusText, out error))
            {
                return false;
            }

            PaymentStatus status;
            switch (statusText)
            {
                case "SUCCESS": status = PaymentStatus.Success; break;
                case "FAILED": status = PaymentStatus.Failed; break;
                case "CLOSED": status = PaymentStatus.Closed; break;
                default:
                    error = $"\"status\" must be SUCCESS, FAILED or CLOSED; it was \"{statusText}\".";
                    return false;
            }

            if (!TryString(root, field = "paidAt", out var paidAtText, out error))
            {
                return false;
            }

            if (!DateTimeOffset.TryParse(paidAtText, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind, out var paidAt))
            {
                error = "\"paidAt\" must be an ISO 8601 date and time such as \"2026-11-21T10:00:00Z\".";
                return false;
            }

            callback = new PaymentCallback(orderId, paymentId, amount, currency, status, paidAt);
            field = "";
            error = "";
            return true;
        }
    }

    /// <summary>
    /// An id: letters, digits and <c>- _ . :</c> only, so that it can never carry a line break into a log line, a quote
    /// into a message, or anything else into a Redis key; up to 64 characters.
    /// </summary>
    private static bool TryId(JsonElement root, string name, out string value, out string error)
    {
        if (!TryString(root, name, out value, out error))
        {
            return false;
        }

        foreach (char c in value)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('-' or '_' or '.' or ':'))
            {
                error = $"\"{name}\" may hold only letters, digits and - _ . : (it had U+{(int)c:X4}).";
                value = "";
                return false;
            }
        }

        return true;
    }

    private static bool TryString(JsonElement root, string name, out string value, out string error)
    {
        value = "";
        if (!root.TryGetProperty(name, out var element))
        {
            error = $"\"{name}\" is required.";
            return false;
        }

        if (element.ValueKind != JsonValueKind.String || string.IsNullOrWhiteSpace(element.GetString()))
        {
            error = $"\"{name}\" must be a non-empty string.";
            return false;
        }

        value = element.GetString()!;
        if (value.Length > 64)
        {
            error = $"\"{name}\" must be at most 64 characters.";
            return false;
        }

        error = "";
        return true;
    }
}
