using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Time.Testing;
using PayCallbackApi.Callbacks;

namespace PayCallbackApi.Tests.Callbacks;

/// <summary>The 503 log line (<c>Callbacks/RejectionLog.cs</c>): at most one a second, counting what it stands for.</summary>
public sealed class RejectionLogTests
{
    [Fact]
    public void ManyRejections_OneLineASecond_CountingEveryRejection()
    {
        var time = new FakeTimeProvider();
        var lines = new LineCollector();
        using var loggers = LoggerFactory.Create(b => b.AddProvider(lines));
        var log = new RejectionLog(loggers, time);

        for (int i = 0; i < 1_000; i++)
        {
            log.Record($"o-{i}", $"p-{i}");
        }

        // The first rejection writes at once; the 999 after it in the same second wait for the next line.
        Assert.Equal(["Work not accepted: 1 callback(s) answered 503 and released for the gateway's retry since the last such line (queue full or store unavailable); the latest for order o-0 (payment p-0)."], lines.Messages);

        time.Advance(TimeSpan.FromMilliseconds(999));
        log.Record("o-a", "p-a");
        Assert.Single(lines.Messages);

        time.Advance(TimeSpan.FromMilliseconds(1));
        log.Record("o-b", "p-b");
        Assert.Equal(2, lines.Messages.Count);
        Assert.StartsWith("Work not accepted: 1001 callback(s)", lines.Messages[1], StringComparison.Ordinal);
        Assert.EndsWith("the latest for order o-b (payment p-b).", lines.Messages[1], StringComparison.Ordinal);
    }

    [Fact]
    public async Task ConcurrentRejections_EveryOneCountedInSomeLine()
    {
        var time = new FakeTimeProvider();
        var lines = new LineCollector();
        using var loggers = LoggerFactory.Create(b => b.AddProvider(lines));
        var log = new RejectionLog(loggers, time);

        // Eight threads reject 10,000 callbacks each while the clock moves a second every 1,000 rejections.
        await Task.WhenAll(Enumerable.Range(0, 8).Select(t => Task.Run(() =>
        {
            for (int i = 0; i < 10_000; i++)
            {
                log.Record($"o-{t}-{i}", "p");
                if (t == 0 && i % 125 == 0)
                {
                    time.Advance(TimeSpan.FromSeconds(1));
                }
            }
        })));
        time.Advance(TimeSpan.FromSeconds(1));
        log.Record("o-last", "p");

        long logged = lines.Messages.Sum(m => long.Parse(m.Split(' ')[3], System.Globalization.CultureInfo.InvariantCulture));
        Assert.Equal(80_001, logged);
        Assert.True(lines.Messages.Count <= 82, $"{lines.Messages.Count} lines for 81 seconds of rejections");
    }

    private sealed class LineCollector : ILoggerProvider, ILogger
    {
        private readonly Lock _lock = new();
        private readonly List<string> _messages = [];

        public List<string> Messages
        {
            get
            {
                lock (_lock)
                {
                    return [.. _messages];
                }
            }
        }

        public ILogger CreateLogger(string categoryName) => this;

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            lock (_lock)
            {
                _messages.Add(formatter(state, exception));
            }
        }

        public void Dispose()
        {
        }
    }
}
