/// A property a fuzz check found broken. The libFuzzer entry points stop the process on it
/// (so libFuzzer saves the input as a crash artifact); the tests record it as a failure.
struct FuzzViolation: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
