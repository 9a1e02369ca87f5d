/// Unsaved objects by temporary serial: behaves like `[UInt64: ManagedObject]`.
///
/// Serials come from a process-wide increasing counter and a context inserts one object at a
/// time, so they arrive in increasing order: entries stay sorted by appending, and a lookup is a
/// binary search, with no hashing for the thousands of objects a bulk insert registers.
struct TemporaryMap: ExpressibleByDictionaryLiteral {
    private var serials: ContiguousArray<UInt64> = []
    private var objects: ContiguousArray<ManagedObject?> = []
    private(set) var count = 0

    init() {}

    init(dictionaryLiteral elements: (UInt64, ManagedObject)...) {
        for (serial, object) in elements { self[serial] = object }
    }

    var isEmpty: Bool { count == 0 }

    subscript(serial: UInt64) -> ManagedObject? {
        get {
            guard let index = index(of: serial) else { return nil }
            return objects[index]
        }
        set {
            // The common case: a newly inserted object, whose serial is the largest yet.
            if let newValue, serials.last.map({ $0 < serial }) ?? true {
                serials.append(serial)
                objects.append(newValue)
                count += 1
                return
            }
            if let index = index(of: serial) {
                if (objects[index] == nil) != (newValue == nil) { count += newValue == nil ? -1 : 1 }
                objects[index] = newValue
                if count == 0 { self = TemporaryMap() }
            } else if let newValue {
                let position = insertionPoint(of: serial)
                serials.insert(serial, at: position)
                objects.insert(newValue, at: position)
                count += 1
            }
        }
    }

    private func index(of serial: UInt64) -> Int? {
        let position = insertionPoint(of: serial)
        return position < serials.count && serials[position] == serial ? position : nil
    }

    /// The first index whose serial is not below `serial`.
    private func insertionPoint(of serial: UInt64) -> Int {
        var low = 0
        var high = serials.count
        while low < high {
            let middle = (low + high) / 2
            if serials[middle] < serial { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
