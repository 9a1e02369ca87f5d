/// libFuzzer entry point for the row target: runs `RowFuzzCheck` and stops the process
/// on a violation, so libFuzzer keeps the input as a crash artifact.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try RowFuzzCheck.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("fuzz violation: \(error)")
    }
    return 0
}
