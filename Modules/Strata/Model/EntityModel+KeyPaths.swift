// Mapping a user's key path (`\Account.balance`, `\Transaction.$account`) to the property it
// names, by applying it to the model's prototype, whose accessors record what they touch.
extension EntityModel {
    /// The property a key path such as `\Account.balance` (or `\Transaction.$account`) names,
    /// or nil when it is not a single stored property of this entity. Answers, nil included,
    /// are cached.
    ///
    /// The key path is applied to the prototype, whose accessors record what they touch.
    /// Projections record the key path they were reached through; getters do not (so that reads
    /// never form key paths), setters do. So when the read touched exactly one property, through
    /// a getter, and the key path is writable, its value is written back (which changes nothing
    /// on a prototype) to learn the key path the setter sees. The answer is property `p` when
    /// `p` is the only property touched and the one recorded key path is this one, so a
    /// computed property is never taken for the attribute it reads. (Such a computed property's
    /// setter therefore runs once, on the prototype, with the value its getter returned.)
    func propertyIndex(forKeyPath keyPath: AnyKeyPath) -> Int? {
        ModelRegistry.withLock {
            if let cached = keyPathCache[keyPath] { return cached }
            guard Swift.type(of: keyPath).rootType == self.type else { return nil }
            recordedAccesses = []
            _ = prototype[keyPath: keyPath]
            var accesses = recordedAccesses ?? []
            if accesses.count == 1, accesses[0].keyPath == nil, let writable = keyPath as? any PrototypeWritableKeyPath
            {
                recordedAccesses = []
                writable.writeBack(on: prototype)
                accesses = recordedAccesses ?? []
            }
            recordedAccesses = nil
            let named = accesses.filter { $0.keyPath != nil }
            var answer: Int?
            if named.count == 1, let only = named.first, only.keyPath == keyPath,
                accesses.allSatisfy({ $0.property == only.property })
            {
                answer = only.property
            }
            keyPathCache[keyPath] = .some(answer)
            return answer
        }
    }

    /// Notes that the prototype read `property` through `keyPath`, when a key path is being mapped.
    func recordPrototypeAccess(_ property: Int, keyPath: AnyKeyPath?) {
        ModelRegistry.withLock { recordedAccesses?.append((property, keyPath)) }
    }
}

/// A key path the schema builder can write through, on a prototype, to learn which property
/// it names.
private protocol PrototypeWritableKeyPath {
    func writeBack(on prototype: ManagedObject)
}

extension ReferenceWritableKeyPath: PrototypeWritableKeyPath {
    /// Reads the value and writes it back (prototype writes change nothing).
    fileprivate func writeBack(on prototype: ManagedObject) {
        guard let root = prototype as? Root else { return }
        root[keyPath: self] = root[keyPath: self]
    }
}
