import Foundation

/// A child process could not be started.
package struct ChildProcessError: Error, CustomStringConvertible {
    package var program: String
    package var code: Int32

    package init(_ program: String, _ code: Int32) {
        self.program = program
        self.code = code
    }

    package var description: String { "cannot start \(program): \(String(cString: strerror(code)))" }
}
