import Foundation
import Synchronization

/// A program run as a child process: started with posix_spawn, reaped with waitpid on a thread of its own.
///
/// Not Foundation's Process: a full test run once crashed inside its `run()` with some 1,460 descriptors open
/// (librdkafka's sockets and pipes of the tests running beside it); it visits every descriptor up to the highest
/// open one to close it in the child. Here the child closes all of them at once (`closeInheritedDescriptors`, as
/// LocalPostgres's programs do) and keeps only its standard input, output and error.
///
/// Like Foundation's, the child gets a process group of its own and is signalled alone; unlike it, the child starts
/// with no signal blocked and every signal's default action, whichever thread started it.
package final class ChildProcess: Sendable {
    /// The child's standard input.
    package enum Input {
        /// `/dev/null`.
        case null
        /// A pipe this process writes `data` to, then closes.
        case data(Data)
    }

    /// Where the child's standard output or error goes.
    package enum Output {
        /// `/dev/null`.
        case null
        /// This process's own descriptor.
        case inherit
        /// A pipe this process reads.
        case pipe(OutputPipe)
        /// A file, created if missing and appended to.
        case file(String)
    }

    /// How the child ended, as Foundation's Process says it.
    package enum TerminationReason: Sendable {
        /// It exited; ``terminationStatus`` is its exit status.
        case exit
        /// A signal killed it; ``terminationStatus`` is the signal.
        case uncaughtSignal
    }

    private struct State {
        /// waitpid's status, once the child is reaped.
        var waitStatus: Int32?
        /// Called once the child is reaped: suspended tasks resumed, blocked threads woken.
        var waiters: [@Sendable () -> Void] = []
    }

    package let processIdentifier: pid_t
    private let state = Mutex(State())

    /// Starts `executable` (a path: nothing is looked up) with `arguments`; `environment` replaces this process's
    /// when given.
    package init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        standardInput: Input = .null,
        standardOutput: Output = .null,
        standardError: Output = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        let input: (pipe: (read: Int32, write: Int32), data: Data)?
        switch standardInput {
        case .null:
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            input = nil
        case .data(let data):
            let ends = try makePipe(for: executable)
            input = (ends, data)
            posix_spawn_file_actions_adddup2(&actions, ends.read, 0)
        }
        defer {
            // The child has its copy; on a failed spawn nobody writes to it either.
            if let input { close(input.pipe.read) }
        }
        for (descriptor, output) in [(Int32(1), standardOutput), (2, standardError)] {
            switch output {
            case .null:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            case .inherit:
                break
            case .pipe(let pipe):
                posix_spawn_file_actions_adddup2(&actions, pipe.writeEnd, descriptor)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            }
        }
        closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        )

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid = pid_t()
        let spawned =
            if let envp {
                posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            } else {
                posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
            }
        guard spawned == 0 else {
            if let input { close(input.pipe.write) }
            throw ChildProcessError(executable, spawned)
        }
        processIdentifier = pid

        for case .pipe(let pipe) in [standardOutput, standardError] { pipe.startReading() }
        if let input {
            Thread {
                // A child that exits without reading makes the write fail with EPIPE; the signal that comes with
                // it stays pending on this thread, and goes with it.
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                input.data.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(input.pipe.write, bytes.baseAddress! + offset, bytes.count - offset)
                        if written < 0 {
                            if errno == EINTR { continue }
                            break
                        }
                        offset += written
                    }
                }
                close(input.pipe.write)
            }.start()
        }
        Thread { [self] in reap() }.start()
    }

    /// Waits for the child to end, then reaps it. Until it is reaped its process ID cannot be reused, so signals
    /// sent while `waitStatus` is nil reach the child and nothing else.
    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        let waiters = state.withLock { state in
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) == -1, errno == EINTR {}
            state.waitStatus = status
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Whether the child has not been reaped yet.
    package var isRunning: Bool { state.withLock { $0.waitStatus == nil } }

    /// Sends `signal` (SIGTERM unless told) to the child, unless it ended already.
    package func terminate(_ signal: Int32 = SIGTERM) {
        state.withLock { state in
            if state.waitStatus == nil { kill(processIdentifier, signal) }
        }
    }

    /// Sends SIGINT, as Ctrl-C would.
    package func interrupt() { terminate(SIGINT) }

    /// Returns once the child has ended and been reaped; suspends, holding no thread.
    package func exited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state in
                if state.waitStatus != nil { return true }
                state.waiters.append { continuation.resume() }
                return false
            }
            if ended { continuation.resume() }
        }
    }

    private var waitStatus: Int32 {
        guard let status = state.withLock({ $0.waitStatus }) else { preconditionFailure("the child is running") }
        return status
    }

    /// Waits for the child to end, blocking the calling thread (not for the concurrency pool's threads); its
    /// ``terminationStatus``.
    package func waitForExit() -> Int32 {
        let reaped = DispatchSemaphore(value: 0)
        let ended = state.withLock { state in
            if state.waitStatus != nil { return true }
            state.waiters.append { reaped.signal() }
            return false
        }
        if !ended { reaped.wait() }
        return terminationStatus
    }

    /// Whether it exited or a signal killed it; only once it ended.
    package var terminationReason: TerminationReason { waitStatus & 0x7F == 0 ? .exit : .uncaughtSignal }

    /// Its exit status, or the signal that killed it (see ``terminationReason``); only once it ended.
    package var terminationStatus: Int32 {
        let status = waitStatus
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }

    /// The path of `name` as a shell would find it on PATH; `name` itself if it has a slash; nil if not found.
    package static func path(of name: String) -> String? {
        if name.contains("/") { return name }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
