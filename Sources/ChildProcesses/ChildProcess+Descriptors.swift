import Foundation

/// Adds to `actions` the closing of every descriptor above standard error: glibc's
/// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module does not export it), else a
/// close for each descriptor open now.
package func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
        return
    }
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
        // glibc ignores a close action for a descriptor that is closed by the time the child runs.
        posix_spawn_file_actions_addclose(&actions, descriptor)
    }
}

/// A pipe whose ends close on exec: a child started meanwhile by other code (Foundation's Process) gets neither.
/// Only the child it is meant for gets one, as its standard input, output or error.
func makePipe(for program: String) throws -> (read: Int32, write: Int32) {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { throw ChildProcessError(program, errno) }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return (ends[0], ends[1])
}

/// read(2), outside OutputPipe (whose own `read` would shadow it).
func readChunk(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
    read(descriptor, buffer.baseAddress, buffer.count)
}
