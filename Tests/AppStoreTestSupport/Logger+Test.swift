import Foundation
import Logging

extension Logger {
    /// The level of the tests' loggers: `ASNP_TEST_LOG` (`ASNP_TEST_LOG=debug`), critical only without it.
    public static var testLevel: Logger.Level {
        ProcessInfo.processInfo.environment["ASNP_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
    }

    /// A logger for a test's clients and services, at ``testLevel``.
    public static func test(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = testLevel
        return logger
    }
}
