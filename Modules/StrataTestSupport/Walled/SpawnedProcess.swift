public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with `posix_spawn`: the part of Foundation's `Process` that the tests,
/// the conformance peer and the benchmark's children use, without Foundation's scan of
/// `/proc/self/fd`.
///
/// Foundation's `Process.run()` on Linux (swift-corelibs-foundation as shipped up to Swift 6.3)
/// lists `/proc/self/fd` to find the highest open descriptor, copying 256 bytes of each
/// directory entry's name even when the entry is shorter; when the last entry ends next to an
/// unmapped page, the whole process dies with SIGSEGV in `Process.run()`
/// (swiftlang/swift-corelibs-foundation#5472). A test run that starts hundreds of children with
/// many descriptors open meets it now and then. This type starts the child with `posix_spawn`
/// and closes every descriptor above 2 in the child (`posix_spawn_file_actions_addclosefrom_np`),
/// as Foundation does, without looking at them.
///
/// The child gets the standard streams set, as Foundation gives them: a `Pipe` (whose far end the
/// parent closes once the child runs), a `FileHandle` (`FileHandle.nullDevice` and nil mean
/// `/dev/null`), or, when left alone, the parent's own. It gets a new process group (so that a
/// terminal's signals to the parent do not reach it), every signal's default action, and no
/// blocked signals but ``blockedSignals``. A thread of its own waits for it to end.
///
/// Needs glibc 2.34 or later (for `posix_spawn_file_actions_addclosefrom_np`); elsewhere
/// ``run()`` throws ``SpawnError``.
///
/// ```swift
/// let child = SpawnedProcess()
/// child.executableURL = URL(fileURLWithPath: "/bin/echo")
/// child.arguments = ["hello"]
/// let output = Pipe()
/// child.standardOutput = output
/// try child.run()
/// let printed = output.fileHandleForReading.readDataToEndOfFile()
/// child.waitUntilExit()
/// ```
///
/// Lifetime rule: set the configuration (executable, arguments, environment, streams, handler)
/// before ``run()``, from one thread; the state after it (``isRunning``, ``terminationStatus``,
/// the signals) may be read and sent from any thread.
///
/// Walled file (see "Unsafe code" in `Docs/Architecture.md`): the C strings, the spawn
/// attributes and `waitpid` stay in here.
public final class SpawnedProcess: @unchecked Sendable {
    /// How the child ended.
    public enum TerminationReason: Sendable {
        /// It called `exit` (or returned from `main`): ``terminationStatus`` is its status.
        case exit
        /// A signal ended it: ``terminationStatus`` is the signal's number.
        case uncaughtSignal
    }

    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// What went wrong, naming the program.
        public let description: String
    }

    /// The program to run (required).
    public var executableURL: URL?
    /// Its arguments, without the program's own name.
    public var arguments: [String] = []
    /// Its whole environment; nil gives it the parent's.
    public var environment: [String: String]?
    /// Standard input: a `Pipe` (the child reads its reading end), a `FileHandle`, or nil for
    /// `/dev/null`; the parent's by default.
    public var standardInput: Any? = FileHandle.standardInput
    /// Standard output: a `Pipe` (the child writes its writing end), a `FileHandle`, or nil for
    /// `/dev/null`; the parent's by default.
    public var standardOutput: Any? = FileHandle.standardOutput
    /// Standard error, as ``standardOutput``.
    public var standardError: Any? = FileHandle.standardError
    /// The signals the child starts with blocked (none by default): one sent to it before it
    /// unblocks them stays pending instead of acting, even when it starts with them ignored.
    public var blockedSignals: [Int32] = []
    /// Called once, on the waiting thread, when the child has ended; read when it ends, so it may
    /// be set after ``run()``.
    public var terminationHandler: (@Sendable (SpawnedProcess) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    private struct State {
        var pid: pid_t = 0
        var started = false
        var ended = false
        var status: Int32 = 0
        var reason = TerminationReason.exit
        var handler: (@Sendable (SpawnedProcess) -> Void)?
    }

    private let state = Mutex(State())
    private let ended = DispatchGroup()

    /// A child not yet started; set its configuration, then call ``run()``.
    public init() {}

    /// The child's process ID, 0 before ``run()``.
    public var processIdentifier: Int32 { state.withLock { $0.pid } }

    /// Whether the child was started and has not ended yet.
    public var isRunning: Bool { state.withLock { $0.started && !$0.ended } }

    /// The exit status, or the number of the signal that ended it (see ``terminationReason``);
    /// 0 while it runs, and -1 when waiting for it failed.
    public var terminationStatus: Int32 { state.withLock { $0.status } }

    /// Whether the child exited or a signal ended it.
    public var terminationReason: TerminationReason { state.withLock { $0.reason } }

    /// Starts the child.
    /// - Throws: ``SpawnError`` when there is no executable, a stream is of another type, the
    ///   process was already started, or `posix_spawn` fails (with its error).
    public func run() throws {
        guard let executableURL else { throw SpawnError(description: "SpawnedProcess.run(): no executableURL set") }
        guard !state.withLock({ $0.started }) else {
            throw SpawnError(description: "SpawnedProcess.run(): \(executableURL.path) was already started")
        }
        var farEnds: [FileHandle] = []
        var streams: [(source: Int32?, target: Int32)] = []
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            switch stream {
            case nil:
                streams.append((nil, target))
            case let pipe as Pipe:
                let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                farEnds.append(end)
                streams.append((end.fileDescriptor, target))
            case let handle as FileHandle:
                // `FileHandle.nullDevice` has no descriptor (-1): /dev/null, as Foundation gives.
                streams.append((handle.fileDescriptor >= 0 ? handle.fileDescriptor : nil, target))
            default:
                throw SpawnError(
                    description: "SpawnedProcess.run(): stream \(target) must be a Pipe, a FileHandle or nil")
            }
        }
        let path = executableURL.path
        let environment = self.environment ?? ProcessInfo.processInfo.environment
        // Entered before the child is published as started, so that a `waitUntilExit` on another
        // thread never finds it started and the group empty.
        ended.enter()
        let pid: pid_t
        do {
            pid = try unsafe Self.spawn(
                path: path, arguments: [path] + arguments,
                environment: environment.map { "\($0.key)=\($0.value)" }, streams: streams,
                blocking: blockedSignals)
        } catch {
            ended.leave()
            throw error
        }
        state.withLock {
            $0.pid = pid
            $0.started = true
        }
        // The child holds its own copies now; the parent's copies of the child's ends would keep
        // the pipes open (no end of file for the reader) until this object went away.
        for end in farEnds { try? end.close() }
        let waiter = Thread { [self] in
            // Wait without reaping first, so that the process ID stays the child's (no signal can
            // reach a reused ID) until `ended` is set under the lock; then reap.
            var info = unsafe siginfo_t()
            var waited: Int32
            repeat {
                waited = unsafe waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
            } while waited == -1
                && errno == EINTR
            let handler = state.withLock { state -> (@Sendable (SpawnedProcess) -> Void)? in
                var status: Int32 = 0
                var reaped: pid_t
                repeat { reaped = unsafe waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
                if waited == -1 || reaped == -1 {
                    state.reason = .exit
                    state.status = -1
                } else {
                    // The wait status's layout (<sys/wait.h>): the low 7 bits are the signal that
                    // ended the child, 0 when it exited, its status then in the next 8 bits.
                    let signal = status & 0x7f
                    state.reason = signal == 0 ? .exit : .uncaughtSignal
                    state.status = signal == 0 ? (status >> 8) & 0xff : signal
                }
                state.ended = true
                return state.handler
            }
            handler?(self)
            ended.leave()
        }
        waiter.name = "SpawnedProcess.wait \(pid)"
        waiter.start()
    }

    /// Blocks until the child has ended (at once when it has, or was never started).
    public func waitUntilExit() {
        guard state.withLock({ $0.started }) else { return }
        ended.wait()
    }

    /// Sends the child SIGTERM, if it runs.
    public func terminate() { send(SIGTERM) }

    /// Sends the child SIGINT, if it runs.
    public func interrupt() { send(SIGINT) }

    /// Sends the child `signal`, if it runs.
    public func send(_ signal: Int32) {
        state.withLock { state in
            if state.started && !state.ended { _ = kill(state.pid, signal) }
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which the Glibc
    /// module does not declare: looked up once by name.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    private static let closeFrom: CloseFrom? = {
        let name = "posix_spawn_file_actions_addclosefrom_np"
        guard let symbol = unsafe dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafe unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// `posix_spawn` of `path` with `arguments` (the first being the program's name) and
    /// `environment` ("NAME=value" each), `descriptors` duplicated onto the standard streams,
    /// every other descriptor above 2 closed and `blocked` blocked in the child.
    @unsafe
    private static func spawn(
        path: String, arguments: [String], environment: [String], streams: [(source: Int32?, target: Int32)],
        blocking blocked: [Int32]
    ) throws -> pid_t {
        func check(_ result: Int32, _ call: String) throws {
            guard result == 0 else {
                throw SpawnError(
                    description: "cannot start \(path): \(call): \(unsafe String(cString: strerror(result)))")
            }
        }
        var actions = unsafe posix_spawn_file_actions_t()
        try check(unsafe posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init")
        defer { unsafe posix_spawn_file_actions_destroy(&actions) }
        for stream in streams {
            if let source = stream.source {
                try check(
                    unsafe posix_spawn_file_actions_adddup2(&actions, source, stream.target),
                    "posix_spawn_file_actions_adddup2")
            } else {
                let flags = stream.target == 0 ? O_RDONLY : O_WRONLY
                try check(
                    unsafe posix_spawn_file_actions_addopen(&actions, stream.target, "/dev/null", flags, 0),
                    "posix_spawn_file_actions_addopen")
            }
        }
        guard let closeFrom = unsafe Self.closeFrom else {
            throw SpawnError(
                description: "cannot start \(path): this C library has no posix_spawn_file_actions_addclosefrom_np "
                    + "(glibc 2.34 or later has it)")
        }
        try check(unsafe closeFrom(&actions, 3), "posix_spawn_file_actions_addclosefrom_np")

        var attributes = posix_spawnattr_t()
        try check(unsafe posix_spawnattr_init(&attributes), "posix_spawnattr_init")
        defer { unsafe posix_spawnattr_destroy(&attributes) }
        var blockedSet = sigset_t()
        unsafe sigemptyset(&blockedSet)
        for number in blocked { unsafe sigaddset(&blockedSet, number) }
        var allSignals = sigset_t()
        unsafe sigfillset(&allSignals)
        try check(unsafe posix_spawnattr_setsigmask(&attributes, &blockedSet), "posix_spawnattr_setsigmask")
        try check(unsafe posix_spawnattr_setsigdefault(&attributes, &allSignals), "posix_spawnattr_setsigdefault")
        try check(unsafe posix_spawnattr_setpgroup(&attributes, 0), "posix_spawnattr_setpgroup")
        try check(
            unsafe posix_spawnattr_setflags(
                &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)),
            "posix_spawnattr_setflags")

        let argv = unsafe arguments.map { unsafe strdup($0) } + [nil]
        let envp = unsafe environment.map { unsafe strdup($0) } + [nil]
        defer {
            for index in unsafe argv.indices { unsafe free(argv[index]) }
            for index in unsafe envp.indices { unsafe free(envp[index]) }
        }
        var pid = pid_t()
        try check(unsafe posix_spawn(&pid, path, &actions, &attributes, argv, envp), "posix_spawn")
        return pid
    }
}
