import Foundation

/// What a producer wrote to each topic since it started, as librdkafka's statistics report it: the record batches it
/// sent, the messages in them, and the batches' bytes after compression (what the topic stores, per replica).
///
/// Read from ``KafkaProducer/statistics`` when ``KafkaProducerConfiguration/statisticsInterval`` is set; the figures
/// lag by up to that interval. Bytes over messages is what a message costs the topic; messages over batches is how
/// well `linger.ms` fills batches, which is what compression can work with.
package struct KafkaProducerStatistics: Sendable, Hashable {
    /// Totals per topic name.
    package var topics: [String: Topic] = [:]

    package init() {}

    /// One topic's totals.
    package struct Topic: Sendable, Hashable {
        /// Record batches sent.
        package var batches = 0
        /// Messages in those batches.
        package var messages = 0
        /// The batches' bytes as sent: compressed, with the batch framing.
        package var bytes = 0

        package init(batches: Int = 0, messages: Int = 0, bytes: Int = 0) {
            self.batches = batches
            self.messages = messages
            self.bytes = bytes
        }
    }

    /// The figures of one statistics report (librdkafka's JSON): windows since the previous report, which librdkafka
    /// rolls over as it emits, so ``add(_:)``ing every report gives the totals. Throws when the JSON is not a
    /// statistics report.
    init(report json: UnsafeRawBufferPointer) throws {
        let report = try JSONDecoder().decode(Report.self, from: Data(json))
        for (name, topic) in report.topics ?? [:] {
            topics[name] = Topic(batches: topic.batchcnt.cnt, messages: topic.batchcnt.sum, bytes: topic.batchsize.sum)
        }
    }

    /// Adds `other`'s figures to these, topic by topic.
    mutating func add(_ other: KafkaProducerStatistics) {
        for (name, topic) in other.topics {
            topics[name, default: Topic()].batches += topic.batches
            topics[name, default: Topic()].messages += topic.messages
            topics[name, default: Topic()].bytes += topic.bytes
        }
    }

    /// The part of a report read here: per topic, the window statistics of batch sizes (bytes) and batch message
    /// counts, of which `cnt` counts the batches and `sum` adds their values up (STATISTICS.md, "Topics").
    private struct Report: Decodable {
        var topics: [String: ReportTopic]?
    }

    private struct ReportTopic: Decodable {
        var batchsize: Window
        var batchcnt: Window
    }

    private struct Window: Decodable {
        var sum: Int
        var cnt: Int
    }
}
