import StrataTestSupport
import Testing

@testable import Strata

/// The context's identity map against a plain dictionary, through every operation, in small
/// (scanned) and large (hashed) sizes, with removals leaving holes and compactions.
@Suite("identity map")
struct IdentityMapTests {
    @Test("random operations agree with a dictionary", arguments: [UInt64(1), 2, 3, 4])
    func differential(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var map = IdentityMap()
        var reference: [Int64: ManagedObject] = [:]
        // Dense runs (as scans register them) and scattered keys, some reused after removal.
        let keySpace: Int64 = seed.isMultiple(of: 2) ? 400 : 5_000_000
        for step in 0..<20_000 {
            let key = Int64.random(in: 1...keySpace, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1:
                let object = ManagedObject()
                map[key] = object
                reference[key] = object
            case 2:
                #expect(map.removeValue(forKey: key) === reference.removeValue(forKey: key))
            case 3:
                let made = ManagedObject()
                let got = map.object(forKey: key) { made }
                let expected = reference[key] ?? made
                reference[key] = expected
                #expect(got === expected)
            case 4:
                // A load that finds nothing registers nothing.
                let got = map.object(forKey: key) { nil }
                #expect(got === reference[key])
            case 5:
                let loaded = ManagedObject()
                let got = map.object(forKey: key) { loaded }
                if reference[key] == nil { reference[key] = loaded }
                #expect(got === reference[key])
            case 6 where step.isMultiple(of: 997):
                map.removeAll()
                reference.removeAll()
            default:
                #expect(map[key] === reference[key])
            }
            #expect(map.count == reference.count)
        }
        for (key, object) in reference { #expect(map[key] === object) }
        #expect(Set(map.values.map(ObjectIdentifier.init)) == Set(reference.values.map(ObjectIdentifier.init)))
    }

    @Test("a throwing load leaves the map unchanged and passes the error on")
    func throwingLoad() {
        struct Failure: Error {}
        var map = IdentityMap()
        for key in Int64(1)...40 { map[key] = ManagedObject() }
        #expect(throws: Failure.self) {
            _ = try map.object(forKey: 41) { throw Failure() }
        }
        #expect(map.count == 40)
        #expect(map[41] == nil)
    }
}
