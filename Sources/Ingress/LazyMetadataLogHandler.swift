import Logging

/// Wraps a log handler, keeping the metadata set on it and handing that to the wrapped handler only with each line
/// logged.
///
/// Hummingbird sets a request id on every request's logger, and swift-log's text handler (`StreamLogHandler`)
/// formats all of its metadata again whenever one value is set: ~2% of the ingress's CPU, for lines that are almost
/// never logged. The lines read the same: the wrapped handler gets the same metadata, as the line's own.
struct LazyMetadataLogHandler: LogHandler {
    private var wrapped: any LogHandler
    /// Set since wrapping; wins over the wrapped handler's own.
    private var added: Logger.Metadata = [:]

    init(wrapping wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata.merging(added) { _, added in added } }
        set {
            wrapped.metadata = newValue
            added = [:]
        }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { added[key] ?? wrapped[metadataKey: key] }
        set {
            if newValue == nil, wrapped[metadataKey: key] != nil { wrapped[metadataKey: key] = nil }
            added[key] = newValue
        }
    }

    func log(event: LogEvent) {
        guard !added.isEmpty else { return wrapped.log(event: event) }
        var event = event
        event.metadata = added.merging(event.metadata ?? [:]) { _, explicit in explicit }
        wrapped.log(event: event)
    }
}
