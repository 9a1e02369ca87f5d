import StrataStorage

extension EntityModel {
    /// What a model class declares, read from two fresh instances made inside a
    /// ``DeclarationCapture``: the prototype, which the model keeps, and a twin, whose defaults
    /// must equal the prototype's (a default that differs is one that changes per instance).
    struct Declarations {
        /// The prototype instance, flagged so that writes to it are ignored.
        let prototype: ManagedObject
        /// The prototype's `@Attribute` and `@Relationship` wrappers with their labels, in
        /// declaration order, base class first.
        let wrappers: [(String, Any)]
        /// What the prototype's wrappers declared, by site.
        let captured: [UInt32: CapturedDeclaration]
        /// The twin's wrappers, in the same order as ``wrappers``.
        private let twinWrappers: [(String, Any)]
        /// What the twin's wrappers declared, by site.
        private let twinCaptured: [UInt32: CapturedDeclaration]

        /// Makes the prototype and its twin of `type` and reads their wrappers.
        init(of type: ManagedObject.Type) {
            let (prototype, captured) = DeclarationCapture.capture { type.init() }
            prototype.state.insert(.prototype)
            let (twin, twinCaptured) = DeclarationCapture.capture { type.init() }
            self.prototype = prototype
            self.wrappers = Self.wrappers(of: prototype)
            self.captured = captured
            self.twinWrappers = Self.wrappers(of: twin)
            self.twinCaptured = twinCaptured
        }

        /// The twin's default for the attribute at wrapper `index`, if the twin declares one there.
        func twinDefault(at index: Int) -> StoredValue? {
            guard let attribute = twinWrappers[index].1 as? any AttributeWrapper,
                case .attribute(let value, _, _, _)? = twinCaptured[attribute.site]
            else { return nil }
            return value
        }

        /// The wrapper-backed stored properties of an instance, base class first.
        private static func wrappers(of object: ManagedObject) -> [(String, Any)] {
            var mirrors: [Mirror] = []
            var mirror: Mirror? = Mirror(reflecting: object)
            while let current = mirror, current.subjectType != ManagedObject.self {
                mirrors.append(current)
                mirror = current.superclassMirror
            }
            return mirrors.reversed().flatMap { mirror in
                mirror.children.compactMap { child -> (String, Any)? in
                    guard let label = child.label,
                        child.value is any AttributeWrapper || child.value is any RelationshipWrapper
                    else { return nil }
                    return (label, child.value)
                }
            }
        }
    }
}
