import AppStoreVerification
import ArgumentParser
import CommandSupport
import Foundation
import PipelineReports

/// `asnp verify`: offline verification of raw notification bodies, for operators and tests.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify and decode App Store notification bodies offline.",
        discussion: """
            Reads one raw HTTP body (V2 {"signedPayload": ...} or V1 JSON) from FILE or standard input and prints \
            one JSON object: "status" (OK or Apple's VerificationStatus name, MALFORMED_BODY, INVALID_PASSWORD), \
            the decoded fields when OK, and "reason" when not.

            With --jsonl, standard input holds one JSON object a line with a "body" string and an optional "id"; \
            one result line is printed per input, in order, echoing "id". Lines are verified on all cores.

            Exit status: 0 when every input is OK, 1 when any was rejected, 2 on usage errors.
            """
    )

    @OptionGroup var app: AppOptions

    @Flag(help: "Read JSON lines ({\"id\": ..., \"body\": \"...\"}) from standard input; print one result per line.")
    var jsonl = false

    @Option(help: "With --jsonl: how many bodies to verify at once. Default: twice the number of cores.")
    var concurrency: Int?

    @Argument(help: "The file holding the body. Default: standard input.")
    var file: String?

    func validate() throws {
        if jsonl, file != nil {
            throw ValidationError("--jsonl reads standard input; give no FILE")
        }
        if let concurrency, concurrency < 1 {
            throw ValidationError("--concurrency must be at least 1")
        }
    }

    func run() async throws {
        let verifier = try app.makeVerifier()
        let output = StreamWriter(handle: .standardOutput)
        let allVerified: Bool
        if jsonl {
            let parallelism = concurrency ?? ProcessInfo.processInfo.activeProcessorCount * 2
            var lines = LineReader(handle: .standardInput)
            allVerified = await BatchVerification(verifier: verifier, parallelism: parallelism)
                .run(lines: &lines, output: output)
        } else {
            let body: Data
            if let file {
                guard let contents = FileManager.default.contents(atPath: file) else {
                    throw ValidationError("cannot read \(file)")
                }
                body = contents
            } else {
                body = FileHandle.standardInput.readDataToEndOfFile()
            }
            let result = await verifier.verify(body: body)
            output.write(VerificationReport(result: result).jsonLine + "\n")
            allVerified = result.isVerified
        }
        output.flush()
        if !allVerified {
            throw CLIExit.rejected
        }
    }
}
