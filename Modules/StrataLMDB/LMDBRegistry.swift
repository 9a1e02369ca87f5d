import Foundation
import Strata
import Synchronization

/// The process-wide table of open environments, keyed by the device and inode of the store's
/// `data.mdb`, so that every path to one store (a symlinked directory, `..` spellings, a
/// hard-linked data file) shares one `MDB_env`. LMDB forbids opening one environment twice in a process: closing the second
/// handle would drop the first one's file locks.
///
/// Each engine and each open reader is a user; the environment closes with its last user.
enum LMDBRegistry {
    struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private struct Entry {
        var environment: LMDBEnvironment
        var users: Int
    }

    private static let entries = Mutex<[Identity: Entry]>([:])

    /// Opens (or shares) the environment of `directory` and counts one user.
    static func acquire(directory: URL, options: LMDBOptions, databases: Int) throws(StrataError) -> LMDBEnvironment {
        try LMDBFileCheck.prepare(directory: directory)
        let dataFile = directory.appendingPathComponent("data.mdb")
        return try entries.withLock { (entries) throws(StrataError) -> LMDBEnvironment in
            // Keyed by the data file, so a symlinked directory or a hard-linked data.mdb
            // reaches the environment that is already open.
            if FileManager.default.fileExists(atPath: dataFile.path), case let identity = try identify(dataFile), var entry = entries[identity] {
                entry.users += 1
                entries[identity] = entry
                return entry.environment
            }
            let environment = try LMDBEnvironment(directory: directory, options: options, databases: databases)
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
            entries[identity] = Entry(environment: environment, users: 1)
            return environment
        }
    }

    /// Counts one more user of an environment that is already open.
    static func retain(_ environment: LMDBEnvironment) {
        entries.withLock { entries in
            guard let key = entries.first(where: { $0.value.environment === environment })?.key else { return }
            entries[key]?.users += 1
        }
    }

    /// Drops one user; the last one closes the environment.
    static func release(_ environment: LMDBEnvironment) {
        entries.withLock { entries in
            guard let key = entries.first(where: { $0.value.environment === environment })?.key,
                  var entry = entries[key] else { return }
            entry.users -= 1
            if entry.users > 0 {
                entries[key] = entry
            } else {
                entries[key] = nil
                entry.environment.shutdown()
            }
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
