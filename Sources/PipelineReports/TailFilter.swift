import KafkaClient
import NIOCore
import PipelineContract

/// Which events `asnp tail` prints.
package struct TailFilter {
    package var keys: Set<String>
    package var types: [String]

    package init(keys: Set<String>, types: [String]) {
        self.keys = keys
        self.types = types
    }

    package func accepts(_ message: KafkaMessage) -> Bool {
        if !keys.isEmpty {
            guard let key = message.key.map({ String(buffer: $0) }), keys.contains(key) else { return false }
        }
        if !types.isEmpty {
            guard let type = message.headers.first(named: OutputEvent.CloudEventsHeader.type),
                types.contains(where: { type == $0 || type.hasSuffix(".\($0)") })
            else { return false }
        }
        return true
    }
}
