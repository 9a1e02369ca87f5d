import Foundation

@testable import Strata

/// The small model the predicate target filters: one attribute per kind the compiler handles.
final class FuzzItem: ManagedObject {
    @Attribute var int: Int64 = 0
    @Attribute var real = 0.0
    @Attribute var text = ""
    @Attribute var note: String?
    @Attribute var flag = false

    /// A detached object (in no context) with fuzz-chosen values.
    static func make(_ reader: inout FuzzReader, unicode: Bool) -> FuzzItem {
        let item = FuzzItem()
        item.int = reader.int64()
        item.real = reader.double()
        item.text = reader.string(unicode: unicode)
        item.note = reader.bool() ? reader.string(unicode: unicode) : nil
        item.flag = reader.bool()
        return item
    }

    /// The values, for failure messages.
    var summary: String {
        """
        int=\(int) real=\(real) text=\(String(reflecting: text)) \
        note=\(note.map { String(reflecting: $0) } ?? "nil") flag=\(flag)
        """
    }
}
