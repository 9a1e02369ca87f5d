import Strata
import StrataTestSupport

extension TestStore {
    /// Opens the store through a fault-injecting wrapper of this store's engine.
    func open(schema: Schema, faults: FaultController) throws -> PersistentContainer {
        try PersistentContainer(schema: schema, engine: .faultInjecting(configuration, faults: faults))
    }
}
