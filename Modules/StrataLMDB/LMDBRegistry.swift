import Foundation
import StrataStorage
import Synchronization

/// The process-wide table of open environments, keyed by the device and inode of the store's
/// `data.mdb`, so that every path to one store (a symlinked directory, `..` spellings, a
/// hard-linked data file) shares one `MDB_env`. LMDB forbids opening one environment twice in a
/// process: closing the second handle would drop the first one's file locks.
///
/// Each engine and each open reader is a user; the environment closes with its last user.
enum LMDBRegistry {
    struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private static let entries = Mutex<[Identity: LMDBEnvironment]>([:])

    /// The environment of the store in `directory`, opened if no engine has it open; counts one
    /// user, to be given back with ``release(_:)``. The directory exists
    /// (``LMDBFileCheck/prepareDirectory(_:)``) and the caller holds the open lock.
    ///
    /// A caller that only reads (`reading`: the tool's inspections and backups) gets the
    /// environment already open, or one opened with ``LMDBAccess/forReading(directory:)``: read-only
    /// when the store's files cannot be written. A caller that writes never gets a read-only one.
    /// - Throws: the errors of the data file's check and of opening; `.misuse` when a writer asks
    ///   for an environment this process has open read-only.
    static func acquire(
        directory: URL, options: LMDBOptions, databases: Int, reading: Bool = false
    ) throws(StrataError) -> LMDBEnvironment {
        try LMDBFileCheck.checkDataFile(directory.appendingPathComponent("data.mdb").path)
        let dataFile = directory.appendingPathComponent("data.mdb")
        return try entries.withLock { (entries) throws(StrataError) -> LMDBEnvironment in
            // Keyed by the data file, so a symlinked directory or a hard-linked data.mdb
            // reaches the environment that is already open.
            if FileManager.default.fileExists(atPath: dataFile.path), case let identity = try identify(dataFile),
                let environment = entries[identity]
            {
                guard reading || environment.access == .readWrite else {
                    throw .misuse(
                        """
                        \(directory.path) is open read-only in this process (a tool's read of a store it cannot \
                        write): open it for writing after that read ends
                        """)
                }
                // Under the lock, so a last release that is about to close it sees this user.
                environment.users.wrappingAdd(1, ordering: .sequentiallyConsistent)
                return environment
            }
            let access = reading ? try LMDBAccess.forReading(directory: directory) : .readWrite
            let environment = try LMDBEnvironment(
                directory: directory, options: options, databases: databases, access: access)
            let identity: Identity
            do {
                identity = try identify(dataFile)
            } catch let error as StrataError {
                environment.shutdown()
                throw error
            } catch {
                environment.shutdown()
                throw .io("cannot identify \(dataFile.path): \(error)")
            }
            environment.registryIdentity = identity
            environment.users.store(1, ordering: .sequentiallyConsistent)
            entries[identity] = environment
            return environment
        }
    }

    /// Counts one more user of an environment the caller already uses (an engine opening a
    /// reader): one atomic add, no lock.
    static func retain(_ environment: LMDBEnvironment) {
        environment.users.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// Gives back one use; the last one closes the environment.
    ///
    /// Only a count that reaches zero takes the lock, and it closes the environment only if the
    /// count is still zero there: ``acquire(directory:options:databases:)`` adds its user under
    /// the same lock, so an environment being handed out again is never closed.
    static func release(_ environment: LMDBEnvironment) {
        guard environment.users.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue == 0 else { return }
        entries.withLock { entries in
            guard environment.users.load(ordering: .sequentiallyConsistent) == 0,
                let identity = environment.registryIdentity,
                entries[identity] === environment
            else { return }
            entries[identity] = nil
            environment.shutdown()
        }
    }

    /// The device and inode of a file or directory, after resolving symlinks.
    private static func identify(_ directory: URL) throws(StrataError) -> Identity {
        let resolved = directory.resolvingSymlinksInPath().path
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: resolved)
        } catch {
            throw .io("cannot read the attributes of \(directory.path): \(error.localizedDescription)")
        }
        guard let device = number(attributes[.systemNumber]), let inode = number(attributes[.systemFileNumber]) else {
            throw .io("cannot identify the store directory \(directory.path) (no device or inode number)")
        }
        return Identity(device: device, inode: inode)
    }

    private static func number(_ value: Any?) -> UInt64? {
        switch value {
        case let value as UInt64: value
        case let value as Int: UInt64(bitPattern: Int64(value))
        case let value as NSNumber: value.uint64Value
        default: nil
        }
    }
}
