using Microsoft.Extensions.Logging;

namespace WorkQueue.Core.Tests.TestSupport;

/// <summary>A logging provider whose loggers throw on every call: a broken sink, as the engine must survive.</summary>
internal sealed class ThrowingLoggerProvider : ILoggerProvider
{
    private int _throws;

    public int Throws => Volatile.Read(ref _throws);

    public ILogger CreateLogger(string categoryName) => new ThrowingLogger(this);

    public void Dispose()
    {
    }

    private sealed class ThrowingLogger(ThrowingLoggerProvider owner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            Interlocked.Increment(ref owner._throws);
            throw new InvalidOperationException($"the logging provider failed on {eventId.Name}");
        }
    }
}
