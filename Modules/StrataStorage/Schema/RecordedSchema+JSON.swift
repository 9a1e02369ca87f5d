import Foundation

extension RecordedSchema {
    /// The description as compact JSON with sorted keys: the same model gives the same text.
    ///
    /// ```swift
    /// let text = try schema.jsonText()   // {"entities":[{"attributes":[...
    /// ```
    /// - Throws: ``StrataError/invalidSchema(_:)`` when a value cannot be encoded.
    public func jsonText() throws(StrataError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            throw .invalidSchema("the schema cannot be recorded as JSON: \(error)")
        }
    }

    /// Reads a description a store recorded.
    ///
    /// ```swift
    /// let recorded = try RecordedSchema(jsonText: text, path: storePath)
    /// ```
    /// - Parameters:
    ///   - jsonText: the recorded JSON.
    ///   - path: the store's path, for the error message.
    /// - Throws: ``StrataError/storeCorrupt(_:native:)`` when the text is not a recorded schema;
    ///   ``StrataError/notAStore(path:reason:native:)`` when it was written in a newer layout than
    ///   this build reads.
    public init(jsonText: String, path: String) throws(StrataError) {
        let decoded: RecordedSchema
        do {
            decoded = try JSONDecoder().decode(RecordedSchema.self, from: Data(jsonText.utf8))
        } catch {
            throw .storeCorrupt("\(path): the recorded schema is not readable: \(error)")
        }
        guard decoded.format <= Self.currentFormat else {
            throw .notAStore(
                path: path,
                reason: """
                    its recorded schema uses layout \(decoded.format); this build reads layout \
                    \(Self.currentFormat) (a newer Strata wrote it)
                    """)
        }
        self = decoded
    }
}
